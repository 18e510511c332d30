"""The client side of the MCP skills extension (SEP-2640): list a server's skills, read files."""

from lemon_skills.mcp.skills.client import (
    EXTENSION,
    WireFile,
    WireSkill,
    list_skills,
    parse_entries,
    read_bytes,
)

__all__ = ["EXTENSION", "WireFile", "WireSkill", "list_skills", "parse_entries", "read_bytes"]
