"""Where MCP server config lives, and a look at it cheap enough for every skill listing.

Kept apart from ``resolve`` so the skill listing can tell that no server offers skills without
importing the entry parser and validators (most users configure no server for its skills).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from lemon_skills import settings as settings_mod
from lemon_skills.paths import agent_dir

#: The entry key that turns a server's skills on; a file without this text enables none.
_SKILLS_KEY = b'"skills"'
#: A JSON key may be spelled with escapes (``"\\u0073kills"``): such a file is parsed.
_ESCAPE = b"\\u"


def global_config_path() -> Path:
    """``<agent>/mcp.json``."""
    return agent_dir() / "mcp.json"


def project_config_path(cwd: Path) -> Path:
    """``<cwd>/.lemon/mcp.json``."""
    return cwd / ".lemon" / "mcp.json"


def may_offer_skills(
    cwd: Path, *, switched: bool = False, env: Mapping[str, str] | None = None
) -> bool:
    """False only when no configured server can offer skills in ``cwd``.

    Reads the two mcp.json files and ``LEMON_MCP_SERVERS`` as text: with none of them (and no
    server configured in code) there is no server; otherwise a server offers skills when the
    ``"skills"`` key is there or, with ``switched`` (a skills.json ``<server>:*`` switch is on),
    whenever any server is configured. A True is only a maybe: the caller resolves the config
    to know which servers.
    """
    env = os.environ if env is None else env
    if settings_mod.settings().mcp_servers:
        return True
    raw = env.get("LEMON_MCP_SERVERS", "")
    texts = [raw.encode()] if raw.strip() else []
    for path in (project_config_path(cwd), global_config_path()):
        try:
            texts.append(path.read_bytes())
        except FileNotFoundError:
            continue
        except OSError:
            return True  # unreadable here: let the resolver report it
    if switched:
        return bool(texts)
    return any(_SKILLS_KEY in t or _ESCAPE in t for t in texts)
