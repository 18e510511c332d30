"""The client side of the MCP skills extension (SEP-2640): list a server's skills, read files."""

from lemon_skills.mcp.skills.client import (
    EXTENSION,
    CacheHint,
    WireFile,
    WireSkill,
    list_skills,
    list_skills_hinted,
    parse_entries,
    read_bytes,
)

__all__ = [
    "EXTENSION",
    "CacheHint",
    "WireFile",
    "WireSkill",
    "list_skills",
    "list_skills_hinted",
    "parse_entries",
    "read_bytes",
]
