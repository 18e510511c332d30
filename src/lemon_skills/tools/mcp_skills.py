"""The configured MCP servers as a source of skills for the skills registry (SEP-2640).

Only servers whose skills the user turned on are asked: ``"skills": "enabled"`` in the
server's mcp.json entry, or ``lemon skill enable <server>:*`` (kept in skills.json as the
``<server>:*`` setting). A server nobody enabled is never started for its skills.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from lemon_skills.mcp.config.locations import may_offer_skills
from lemon_skills.paths import home, scope_root
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.catalog.discovery import file_sig
from lemon_skills.skills.remote import saved
from lemon_skills.skills.remote.model import (
    ORIGINAL_NAME_KEY,
    Fetch,
    Listing,
    RemoteFile,
    RemoteSkill,
)

#: How long a listing is trusted without a list_changed notification.
LISTING_TTL_S = 60.0
#: The longest original name a served skill is shown by (a longer one is ignored).
MAX_LABEL_CHARS = 128
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]*")
#: The per-skill setting (in skills.json) that turns a server's skills on.
SERVER_SWITCH = "{server}:*"


def server_switches(cwd: Path | None) -> dict[str, bool]:
    """Servers whose skills a skills.json turns on or off (``"<server>:*": {"enabled": ...}``):
    the user's switch wins over ``"skills"`` in the server's mcp.json entry."""
    project = scope_root("project", cwd) / "skills.json" if cwd is not None else None
    state = enablement.load(enablement.skills_json_path("global"), project)
    return {
        key[:-2]: value["enabled"]
        for key, value in state.config.items()
        if key.endswith(":*") and isinstance(value.get("enabled"), bool)
    }


def to_remote(
    server: str, wire: Sequence[Any], previous: Sequence[RemoteSkill] = ()
) -> list[RemoteSkill]:
    """Wire entries as remote skills. A skill served under a path prefix
    (``skill://acme/billing/refunds/SKILL.md``) is keyed by its whole path
    (``srv:acme.billing.refunds``), so two skills of one name never share a key. A skill of
    ``previous`` (the server's last listing) that the wire repeats exactly is reused."""
    before = {s.uri: s for s in previous}
    out = []
    for w in wire:
        fm = w.frontmatter
        old = before.get(w.uri)
        if old is not None and old.frontmatter == fm and old.files == w.files:
            out.append(old)  # every field derives from the uri, frontmatter and files
            continue
        name, description = str(fm.get("name", "")), fm.get("description")
        path = w.uri.split("://", 1)[-1].removesuffix("/SKILL.md")
        # The wire's file records are named tuples of the same fields: used as they are.
        files = None if w.files is None else cast("tuple[RemoteFile, ...]", w.files)
        out.append(
            RemoteSkill(
                server,
                w.uri,
                name,
                description if type(description) is str else "",
                fm,
                files,
                None if path == name else path.replace("/", "."),
                _label(fm),
            )
        )
    return out


def _label(frontmatter: Mapping[str, Any]) -> str | None:
    """The skill's name on its origin's disk when it was served under another (see
    ``ORIGINAL_NAME_KEY``), if it is short and made of name characters only (ASCII letters,
    digits, space, ``.``, ``_``, ``-``): no look-alikes, no line breaks, no markup."""
    meta = frontmatter.get("metadata")
    label = meta.get(ORIGINAL_NAME_KEY) if isinstance(meta, Mapping) else None
    if type(label) is not str or len(label) > MAX_LABEL_CHARS or not _LABEL.fullmatch(label):
        return None
    return label


class McpSkillSource:
    """Skills of the MCP servers configured for a directory, through an ``McpSource``.

    Listings of the configured servers are saved between runs (``remote.saved``): until this
    process has started the servers, a saved listing answers, and one past the lifetime its
    server gave it is marked ``stale`` for a background refresh (``refresh``). An injected
    ``source`` has servers of its own and is always asked."""

    def __init__(self, source: Any = None) -> None:
        self._source = source
        self._persist = source is None
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[object, list[Listing]]] = {}
        self._switched: dict[Path | None, tuple[object, dict[str, bool]]] = {}
        self._fetchers: dict[tuple[Path, str], Fetch] = {}
        self._keys_of: dict[Path, tuple[object, dict[str, str]]] = {}
        #: Directories answered from a saved listing past its lifetime, with the keys of
        #: their servers' listings (what a refresh claims).
        self.stale: dict[Path, tuple[str, ...]] = {}
        self._stale_used: set[Path] = set()

    def _mcp(self) -> Any:
        if self._source is None:
            from lemon_skills.mcp.source import default_source

            self._source = default_source()
        return self._source

    def servers(self, cwd: Path | None) -> list[str]:
        """Servers of ``cwd`` whose skills are on (reads config; starts nothing)."""
        switch = self._switches(cwd)
        if self._source is not None:
            return list(self._source.skills.servers(cwd or home(), switch))
        if not may_offer_skills(cwd or home(), switched=any(switch.values())):
            return []  # the common case, decided without loading the config parser
        from lemon_skills.mcp.config import resolve

        return resolve.skill_servers(resolve.load(cwd or home()), switch)

    def _switches(self, cwd: Path | None) -> Mapping[str, bool]:
        project = scope_root("project", cwd) / "skills.json" if cwd is not None else None
        glob = enablement.skills_json_path("global")
        stamp = (file_sig(glob), file_sig(project) if project is not None else None, project)
        hit = self._switched.get(cwd)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        switches = server_switches(cwd)
        self._switched[cwd] = (stamp, switches)
        return switches

    def _fetch(self, where: Path, server: str) -> Fetch:
        """The reader of ``server``'s files for ``where``: one per pair, so entries built from
        an earlier listing of the same skill can be reused (``remote.entries``)."""
        found = self._fetchers.get((where, server))
        if found is None:

            def fetch(uri: str, limit: int) -> bytes:
                # Started on the first read: a saved listing with its bodies at hand never
                # starts the server.
                data: bytes = self._mcp().skills.read(where, server, uri, limit=limit)
                return data

            found = self._fetchers[(where, server)] = fetch
        return found

    def _keys(self, where: Path, names: Sequence[str]) -> dict[str, str]:
        """The saved-listing key of each of ``names``: its name and config entry's hash."""
        from lemon_skills.mcp.config import resolve

        stamp = resolve.fingerprint(where, None)
        hit = self._keys_of.get(where)
        if hit is None or hit[0] != stamp:
            active = resolve.load(where, notify=False).active()
            keys = {c.name: saved.key_of(c.name, c.digest()) for c in active if c.name}
            hit = self._keys_of[where] = (stamp, keys)
        return {n: hit[1][n] for n in names if n in hit[1]}

    def _from_saved(self) -> bool:
        """Saved listings answer: they are kept, and no server was started here yet."""
        return self._persist and self._source is None

    def generation(self, cwd: Path | None) -> object:
        names = self.servers(cwd)
        if not names:
            return ()
        # Servers on the 2026 protocol push no list_changed here: their listing also expires.
        epoch = int(time.monotonic() // LISTING_TTL_S)
        where = cwd or home()
        if self._from_saved():
            keys = self._keys(where, names).values()
            return (tuple(names), tuple(file_sig(saved.path_of(k)) for k in keys), epoch)
        return (tuple(names), self._mcp().skills.generation(where, names), epoch)

    def listings(self, cwd: Path | None) -> list[Listing]:
        stamp = self.generation(cwd)
        if stamp == ():
            return []
        where = cwd or home()
        with self._lock:
            hit = self._cache.get(where)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        last = {listing.server: listing.skills for listing in (hit[1] if hit else ())}
        names: Sequence[str] = stamp[0]  # type: ignore[index]
        out = self._saved(where, names, last) if self._from_saved() else {}
        missing = [n for n in names if n not in out]
        if missing:
            out.update(self._live(where, missing, last))
        found = [out[n] for n in names if n in out]
        with self._lock:
            self._cache[where] = (self.generation(cwd), found)
        return found

    def _saved(
        self, where: Path, names: Sequence[str], last: Mapping[str, Sequence[RemoteSkill]]
    ) -> dict[str, Listing]:
        """The saved listings of ``names`` still young enough to answer from."""
        keys, now = self._keys(where, names), time.time()
        # A listing past its lifetime answers once per process: one that lives on (a host's)
        # then asks the server itself, as it would without saved listings.
        again = where in self._stale_used
        out, due = {}, False
        for name, key in keys.items():
            found = saved.load(key)
            if found is None or not found.usable(now) or (again and not found.fresh(now)):
                continue
            due = due or not found.fresh(now)
            skills = tuple(to_remote(name, found.skills, last.get(name, ())))
            out[name] = Listing(name, skills, found.problems, self._fetch(where, name))
        if due:
            self.stale[where] = tuple(keys.values())
            self._stale_used.add(where)
        return out

    def _live(
        self, where: Path, names: Sequence[str], last: Mapping[str, Sequence[RemoteSkill]]
    ) -> dict[str, Listing]:
        """The listings of ``names`` from the servers themselves (started if need be), saved
        for later runs when they answered."""
        from lemon_skills.skills.remote.verify import MAX_SKILLS_PER_SERVER

        found = self._mcp().skills.listings(where, names, limit=MAX_SKILLS_PER_SERVER)
        keys = self._keys(where, names) if self._persist else {}
        out = {}
        for server, wire, problems, hint in found:
            key = keys.get(server)
            if key is not None and (wire or not problems):
                saved.save(key, wire, problems, ttl_ms=hint.ttl_ms, scope=hint.scope)
            skills = tuple(to_remote(server, wire, last.get(server, ())))
            out[server] = Listing(server, skills, tuple(problems), self._fetch(where, server))
        return out

    def refresh(self, cwd: Path | None) -> list[str]:
        """List the skill servers of ``cwd`` again and save what they list (starts them; the
        background refresh). Returns the servers asked."""
        where = cwd or home()
        names = self.servers(cwd)
        keys = tuple(self._keys(where, names).values())
        try:
            if names:
                self._live(where, names, {})
        finally:
            saved.release_refresh(keys)
        return names


def claim_refresh(cwd: Path | None) -> bool:
    """Claim the background refresh of the saved listings this process answered ``cwd``
    from past their lifetime: False when none is due or another process's claim stands."""
    from lemon_skills.skills import remote

    for source in remote.sources().items:
        if isinstance(source, McpSkillSource):
            keys = source.stale.pop(cwd or home(), None)
            if keys:
                return saved.claim_refresh(keys)
    return False
