"""The host side of SEP-2640 under the conformance suite's ``sep-2640-client-*`` scenarios.

The mock server is configured the way a user would (an ``http`` entry with
``"skills": "enabled"``) in a throwaway agent dir, then the skill it lists is used through the
public path: list (metadata only), load the skill (``SKILL.md``, verified), and only when that
passed, read each supporting file. A refused skill ends the run with its diagnostic.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from lemon_skills.context import using
from lemon_skills.errors import RemoteSkillError
from lemon_skills.mcp.source import McpSource
from lemon_skills.skills import remote
from lemon_skills.skills.catalog.registry import view
from lemon_skills.skills.remote import load
from lemon_skills.tools.mcp_skills import McpSkillSource

logger = logging.getLogger("lemon_skills.conformance")
SERVER = "conformance"


def run(scenario: str, url: str) -> None:
    """Do what a host does with the scenario's server (``no-prefetch``: list only)."""
    with tempfile.TemporaryDirectory() as home, using() as ctx:
        os.environ["LEMON_AGENT_DIR"] = str(Path(home, "agent"))
        os.environ["HOME"] = home
        servers = [{"name": SERVER, "type": "http", "url": url, "skills": "enabled"}]
        with McpSource(servers, include_config=False) as mcp:
            ctx.put(remote.Sources, remote.Sources([McpSkillSource(mcp)]))
            entries = [e for e in view(Path(home)).entries if e.source == "mcp"]
            logger.info("listed %s", [e.key for e in entries])
            if scenario.endswith("no-prefetch"):
                return
            for entry in entries:
                use(entry)


def use(entry: object) -> None:
    """Load one skill, then its supporting files; stop at the first refusal."""
    from lemon_skills.skills.format.model import Entry

    assert isinstance(entry, Entry)
    listing = next(lst for lst in remote.listings(None) if lst.server == entry.server)
    skill = next(s for s in listing.skills if s.key == entry.key)
    try:
        load.load_text(skill, listing.fetch)
        root = skill.uri.removesuffix("SKILL.md")
        for f in skill.files or ():
            if f.uri != skill.uri:
                load.load_file(skill, listing.fetch, f.uri.removeprefix(root))
    except RemoteSkillError as exc:
        logger.info("refused: %s", exc)
