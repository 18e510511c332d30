"""Which MCP servers apply in a directory: the config sources merged, named and switched.

Sources, highest precedence first: the programmatic list (``McpSource(servers=...)``, else
``lemon_skills.configure(mcp_servers=...)``), ``LEMON_MCP_SERVERS`` (a JSON array or a
``{"mcpServers": {...}}`` object), ``<cwd>/.lemon/mcp.json`` and ``<agent>/mcp.json``. An entry
with a ``name`` overrides lower entries of the same name; unnamed identical entries collapse
into one. ``enabled: false`` in the project file turns MCP off there (``true`` turns it back on
over a global ``false``); ``LEMON_MCP_DISABLED`` and ``configure(mcp_disabled=True)`` turn it
off everywhere. A broken file or entry is reported as an issue and skipped; the rest loads.

The project file is a cloned repository's to write, so its entries are listed but never made
active until the user trusts that file's bytes (``trust``); untrusted, they cannot override a
global entry of the same name nor turn MCP back on over a global ``"enabled": false``.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from lemon_skills import settings as settings_mod
from lemon_skills.mcp.catalog.naming import assign_server_names, server_name
from lemon_skills.mcp.config.entries import ConfigIssue, Origin, ServerConfig
from lemon_skills.mcp.config.locations import global_config_path as global_config_path
from lemon_skills.mcp.config.locations import project_config_path as project_config_path
from lemon_skills.mcp.config.parse import document_entries, validate_servers
from lemon_skills.mcp.config.trust import ProjectTrust, env_trusts, store_path
from lemon_skills.mcp.config.trust import check as check_trust
from lemon_skills.mcp.session.logs import redact

#: A configured server's effective state in a directory (before any connection attempt).
ServerState = Literal["enabled", "disabled", "off", "untrusted"]

_TRUTHY = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedConfig:
    """The servers for one directory, named and in a stable order."""

    cwd: Path
    enabled: bool
    disabled_reason: str | None
    servers: tuple[ServerConfig, ...]
    issues: tuple[ConfigIssue, ...]
    overridden: tuple[ServerConfig, ...] = ()
    #: The verdict on the project file, when there is one.
    trust: ProjectTrust | None = None

    def active(self) -> tuple[ServerConfig, ...]:
        """Servers to connect: none when MCP is off here, else the enabled, trusted entries."""
        return tuple(s for s in self.servers if s.enabled and s.trusted) if self.enabled else ()

    def state_of(self, server: ServerConfig) -> ServerState:
        """``enabled``, ``disabled`` (the entry's own switch), ``untrusted`` (a project entry
        the user has not trusted) or ``off`` (MCP is off here)."""
        if not self.enabled:
            return "off"
        if not server.enabled:
            return "disabled"
        return "enabled" if server.trusted else "untrusted"

    def untrusted(self) -> tuple[ServerConfig, ...]:
        """The enabled project entries left off because their file is not trusted."""
        return tuple(s for s in self.servers if s.enabled and not s.trusted)

    def untrusted_notice(self) -> str | None:
        """One line naming what was skipped and how to trust it (None: nothing skipped)."""
        skipped = self.untrusted()
        if not skipped or self.trust is None or not self.enabled:
            return None
        names = ", ".join(s.name or redact(s.target) for s in skipped)
        changed = " (changed since trusted)" if self.trust.state == "changed" else ""
        return (
            f"lemon: not starting {len(skipped)} MCP server(s) of the untrusted "
            f"{self.trust.path}{changed}: {names}; review it, then run `{self.trust.command()}`"
        )

    def server_dicts(self) -> list[dict[str, Any]]:
        """``to_dict()`` of every server plus its effective ``state`` and ``active`` flag."""
        out = []
        for s in self.servers:
            state = self.state_of(s)
            out.append(
                s.to_dict() | {"state": state, "active": state == "enabled", "trusted": s.trusted}
            )
        return out


def configured_server_names(cwd: Path | None) -> list[str]:
    """The names of the MCP servers active in ``cwd``, and each as its config spells it when
    that differs (for skills' ``requires.mcp_servers``; see
    ``lemon_skills.configure(mcp_server_names=...)``)."""
    active = load(cwd or Path.cwd()).active()
    return [n for s in active for n in (s.name, s.given_name) if n]


def server_called(config: ResolvedConfig, name: str) -> ServerConfig | None:
    """The server of ``config`` called ``name``, as resolved or as its config spells it."""
    for s in config.servers:
        if name in (s.name, s.given_name):
            return s
    return None


def env_disabled(env: Mapping[str, str] | None = None) -> bool:
    """``LEMON_MCP_DISABLED`` set to 1/true/yes/on, in any case."""
    env = os.environ if env is None else env
    return env.get("LEMON_MCP_DISABLED", "").strip().lower() in _TRUTHY


def fingerprint(
    cwd: Path,
    servers: Sequence[object] | None,
    *,
    include_config: bool = True,
    env: Mapping[str, str] | None = None,
) -> tuple[object, ...]:
    """Changes whenever anything ``load`` reads changes (cheap: two stats, no parsing)."""
    env = os.environ if env is None else env
    stats: list[tuple[int, int, int] | None] = []
    paths = (global_config_path(), project_config_path(cwd), store_path()) if include_config else ()
    for path in paths:
        try:
            st = path.stat()
            stats.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            stats.append(None)
    return (
        str(cwd),
        tuple(stats),
        env.get("LEMON_MCP_SERVERS") if include_config else None,
        env_disabled(env),
        env_trusts(env),
        settings_mod.settings().generation,
        id(servers),
    )


def load(
    cwd: Path,
    *,
    servers: Sequence[object] | None = None,
    include_config: bool = True,
    disabled: bool | None = None,
    env: Mapping[str, str] | None = None,
    notify: bool = True,
) -> ResolvedConfig:
    """Resolve the servers that apply in ``cwd``.

    ``servers`` replaces the ``configure()`` list; ``include_config=False`` ignores files and
    environment (as the smoke proofs and tests do). With ``notify``, project servers skipped
    as untrusted are logged once per file content (a WARNING of ``lemon_skills.mcp.config.trust``,
    which reaches stderr when the host configured no logging).
    """
    env = os.environ if env is None else env
    settings = settings_mod.settings()
    programmatic = servers if servers is not None else settings.mcp_servers
    issues: list[ConfigIssue] = []
    layers: list[list[ServerConfig]] = []
    valid, bad = validate_servers(programmatic or (), origin="programmatic")
    layers.append(valid)
    issues.extend(bad)
    project_enabled = global_enabled = None
    verdict: ProjectTrust | None = None
    if include_config:
        layers.append(_env_layer(env, issues))
        project_enabled, project, verdict = _project_layer(cwd, env, issues)
        global_enabled, global_ = _file_layer(global_config_path(), "global", None, issues)
        layers.extend([project, global_])
    trusted = verdict is None or verdict.trusted
    if not trusted and project_enabled:
        project_enabled = None  # an untrusted file may turn MCP off, never back on
    merged, overridden = _merge(layers, project_trusted=trusted)
    reason = _disabled_reason(disabled, settings.mcp_disabled, env, project_enabled, global_enabled)
    resolved = ResolvedConfig(
        cwd=cwd,
        enabled=reason is None,
        disabled_reason=reason,
        servers=tuple(merged),
        issues=tuple(issues),
        overridden=tuple(overridden),
        trust=verdict,
    )
    line = resolved.untrusted_notice() if notify else None
    if line is not None and verdict is not None:
        _notify_once(str(verdict.path), verdict.sha256, line)
    return resolved


@functools.cache
def _notify_once(path: str, sha256: str, line: str) -> None:
    """Say once per process and file content what was skipped (hosts resolve every turn)."""
    logging.getLogger("lemon_skills.mcp.config.trust").warning("%s", line)


def _project_layer(
    cwd: Path, env: Mapping[str, str], issues: list[ConfigIssue]
) -> tuple[bool | None, list[ServerConfig], ProjectTrust | None]:
    """The project file's entries, marked untrusted unless the user trusts these bytes."""
    path = project_config_path(cwd)
    data = _read_bytes(path, "project", issues)
    if data is None:
        return None, [], None
    verdict = check_trust(path, data, env=env)
    enabled, valid, bad = parse_document(data, path, "project", cwd)
    issues.extend(bad)
    if not verdict.trusted:
        valid = [replace(cfg, trusted=False) for cfg in valid]
    return enabled, valid, verdict


def _disabled_reason(
    explicit: bool | None,
    configured: bool,
    env: Mapping[str, str],
    project: bool | None,
    global_: bool | None,
) -> str | None:
    if explicit is True:
        return "disabled by the caller"
    if explicit is False:
        return None
    if configured:
        return "disabled by lemon_skills.configure(mcp_disabled=True)"
    if env_disabled(env):
        return "disabled by LEMON_MCP_DISABLED"
    if project is False:
        return 'disabled by .lemon/mcp.json ("enabled": false)'
    if project is None and global_ is False:
        return 'disabled by the global mcp.json ("enabled": false)'
    return None


def _env_layer(env: Mapping[str, str], issues: list[ConfigIssue]) -> list[ServerConfig]:
    raw = env.get("LEMON_MCP_SERVERS")
    if not raw or not raw.strip():
        return []
    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        issues.append(
            ConfigIssue(reason=f"LEMON_MCP_SERVERS is not valid JSON ({exc})", origin="env")
        )
        return []
    _enabled, entries, problem = document_entries(data)
    if problem:
        issues.append(ConfigIssue(reason=f"LEMON_MCP_SERVERS: {problem}", origin="env"))
    valid, bad = validate_servers(entries, origin="env")
    issues.extend(bad)
    return valid


def read_document(
    path: Path, origin: Origin, base_dir: Path | None
) -> tuple[bool | None, list[ServerConfig], list[ConfigIssue]]:
    """Parse one mcp.json; a missing file is empty, a broken one is an issue."""
    issues: list[ConfigIssue] = []
    raw = _read_bytes(path, origin, issues)
    if raw is None:
        return None, [], issues
    return parse_document(raw, path, origin, base_dir)


def _read_bytes(path: Path, origin: Origin, issues: list[ConfigIssue]) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        issues.append(ConfigIssue(reason=f"cannot read: {exc}", origin=origin, path=path))
        return None


def parse_document(
    raw: bytes, path: Path, origin: Origin, base_dir: Path | None
) -> tuple[bool | None, list[ServerConfig], list[ConfigIssue]]:
    """Parse the bytes of one mcp.json; broken JSON is an issue."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [], [ConfigIssue(reason=f"cannot read: {exc}", origin=origin, path=path)]
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        issue = ConfigIssue(reason=f"corrupt JSON ({exc})", origin=origin, path=path)
        return None, [], [issue]
    enabled, entries, problem = document_entries(data)
    issues = [ConfigIssue(reason=problem, origin=origin, path=path)] if problem else []
    valid, bad = validate_servers(entries, origin=origin, base_dir=base_dir, path=path)
    return enabled, valid, issues + bad


def _file_layer(
    path: Path, origin: Origin, base_dir: Path | None, issues: list[ConfigIssue]
) -> tuple[bool | None, list[ServerConfig]]:
    enabled, valid, bad = read_document(path, origin, base_dir)
    issues.extend(bad)
    return enabled, valid


def _merge(
    layers: list[list[ServerConfig]], *, project_trusted: bool = True
) -> tuple[list[ServerConfig], list[ServerConfig]]:
    """Named entries: the highest layer wins. Unnamed: identical ones collapse.

    The result is ordered broad to narrow (programmatic, env, global, project) so adding a
    project server never renames a global server's derived name. An untrusted project layer
    ranks below the global one, so it cannot replace the user's server of the same name.
    """
    programmatic, *rest = layers
    env_layer = rest[0] if rest else []
    project = rest[1] if len(rest) > 1 else []
    global_ = rest[2] if len(rest) > 2 else []
    winners: dict[str, ServerConfig] = {}
    overridden: list[ServerConfig] = []
    seen_digests: set[str] = set()
    precedence = (project, global_) if project_trusted else (global_, project)
    for layer in (programmatic, env_layer, *precedence):
        for cfg in layer:
            if cfg.name is not None:
                key = server_name(cfg.name)
                if key in winners:
                    overridden.append(cfg)
                else:
                    winners[key] = cfg
    ordered: list[ServerConfig] = []
    for layer in (programmatic, env_layer, global_, project):
        for cfg in layer:
            if cfg.name is not None:
                if winners.get(server_name(cfg.name)) is cfg:
                    ordered.append(cfg)
                continue
            digest = cfg.digest()
            if digest not in seen_digests:
                seen_digests.add(digest)
                ordered.append(cfg)
    names = assign_server_names(ordered)
    renamed = [
        replace(cfg, name=n, given_name=cfg.name if cfg.name not in (None, n) else None)
        for cfg, n in zip(ordered, names, strict=True)
    ]
    return renamed, overridden


def skill_servers(config: ResolvedConfig, switches: Mapping[str, bool] | None = None) -> list[str]:
    """Active servers whose skills are on: the user's ``<server>:*`` switch where there is one
    (``switches``: server -> on), else ``"skills": "enabled"`` in the entry."""
    switches = switches or {}
    return [c.name for c in config.active() if c.name and switches.get(c.name, c.skills)]
