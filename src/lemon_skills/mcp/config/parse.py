"""Parse and validate MCP server entries from dicts, tuples, records and config documents.

Parsing never raises for bad input: every problem becomes a ``ConfigIssue`` naming the entry
(index, name when it has one, origin, file) and the reason, worded as the original Lemon
validator words it where one exists (``stdio command cannot be empty``, ``invalid HTTP URL:
...``, ``<key> must be a list of strings``, ``<key> must be a positive integer``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from lemon_skills.mcp.catalog.naming import server_name
from lemon_skills.mcp.config.entries import (
    APPROVE_MODES,
    FILTER_KEYS,
    PINNING_MODES,
    PROTOCOL_MODES,
    ConfigIssue,
    Filters,
    HttpServer,
    Origin,
    ServerBase,
    ServerConfig,
    SseServer,
    StdioServer,
    ToolPolicy,
    Transport,
)
from lemon_skills.mcp.oauth.options import validate_oauth
from lemon_skills.mcp.sampling.policy import validate_policy

T = TypeVar("T")

_TRANSPORT_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}


class _Invalid(Exception):
    """Internal: the reasons an entry is refused (one per invalid field)."""

    def __init__(self, *reasons: str) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def parse_server(
    raw: object, *, origin: Origin = "programmatic", base_dir: Path | None = None
) -> ServerConfig:
    """Turn one entry (dict, tuple or record) into a record.

    Raises:
        ValueError: with the user-facing reason when the entry is invalid.
    """
    try:
        return _parse(raw, origin=origin, base_dir=base_dir, name=None)
    except _Invalid as exc:
        raise ValueError(str(exc)) from None


def validate_servers(
    entries: Iterable[object],
    *,
    origin: Origin = "programmatic",
    base_dir: Path | None = None,
    path: Path | None = None,
) -> tuple[list[ServerConfig], list[ConfigIssue]]:
    """Parse every entry; return the valid records and one issue per invalid entry."""
    valid: list[ServerConfig] = []
    issues: list[ConfigIssue] = []
    seen: dict[str, str] = {}
    for index, raw in enumerate(entries):
        name, raw = split_named(raw)
        try:
            cfg = _parse(raw, origin=origin, base_dir=base_dir, name=name)
            if cfg.name is not None:
                _check_unique(cfg.name, seen)
        except _Invalid as exc:
            issue_name = name if name is not None else _raw_name(raw)
            issues.extend(
                ConfigIssue(
                    reason=reason,
                    entry=raw,
                    index=index,
                    name=issue_name,
                    origin=origin,
                    path=path,
                )
                for reason in exc.reasons
            )
            continue
        if cfg.name is not None:
            seen[server_name(cfg.name)] = cfg.name
        valid.append(cfg)
    return valid, issues


def _check_unique(name: str, seen: Mapping[str, str]) -> None:
    """Refuse a second entry whose model-facing name is taken (``t`` and ``T`` are both ``t``)."""
    other = seen.get(server_name(name))
    if other == name:
        raise _Invalid(f"duplicate server name {name!r}")
    if other is not None:
        raise _Invalid(
            f"server name {name!r} conflicts with {other!r}: both are called "
            f"{server_name(name)!r} in tool names; rename one"
        )


def document_entries(data: object) -> tuple[bool | None, list[object], str | None]:
    """Read a config document: ``{"enabled", "servers": [...]}`` and/or ``{"mcpServers": {}}``.

    A bare list is accepted too, and so is VS Code's ``{"servers": {name: {...}}}``. Returns
    ``(enabled, entries, problem)``; entries of a name -> server map come back as named
    entries.
    """
    if isinstance(data, list):
        return None, list(data), None
    if not isinstance(data, dict):
        return None, [], 'expected a JSON object with "servers" or "mcpServers"'
    enabled = data.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        return None, [], '"enabled" must be true or false'
    entries: list[object] = []
    servers = data.get("servers", [])
    if isinstance(servers, dict):
        entries.extend(_NamedEntry(str(k), v) for k, v in servers.items())
    elif isinstance(servers, list):
        entries.extend(servers)
    else:
        return enabled, [], '"servers" must be a list or an object of name -> server'
    named = data.get("mcpServers", {})
    if not isinstance(named, dict):
        return enabled, entries, '"mcpServers" must be an object of name -> server'
    entries.extend(_NamedEntry(str(k), v) for k, v in named.items())
    return enabled, entries, None


@dataclass(frozen=True, slots=True)
class _NamedEntry:
    name: str
    raw: object


def split_named(raw: object) -> tuple[str | None, object]:
    """``(name, entry)`` of a document entry (the name is ``None`` for a list entry)."""
    if isinstance(raw, _NamedEntry):
        return raw.name, raw.raw
    return None, raw


def _raw_name(raw: object) -> str | None:
    if isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
        return str(raw["name"])
    if isinstance(raw, ServerBase):
        return raw.name
    return None


def _parse(raw: object, *, origin: Origin, base_dir: Path | None, name: str | None) -> ServerConfig:
    if isinstance(raw, StdioServer | HttpServer | SseServer):
        cfg: ServerConfig = raw
        _check_record(cfg)
        return replace(cfg, origin=origin, base_dir=base_dir or cfg.base_dir)
    if isinstance(raw, tuple | list) and raw and isinstance(raw[0], str):
        raw = _from_tuple(tuple(raw))
    if not isinstance(raw, Mapping):
        raise _Invalid(f"invalid MCP server config: {_short(raw)}")
    data = dict(raw)
    if name is not None:
        data.setdefault("name", name)
    transport = _transport_of(data)
    problems: list[str] = []
    specific = _collect(problems, _stdio_fields if transport == "stdio" else _url_fields, data)
    common = _common_fields(data, transport, problems)
    common.update(origin=origin, base_dir=base_dir)
    if problems:
        raise _Invalid(*problems)
    assert specific is not None
    if transport == "stdio":
        return StdioServer(**common, **specific)
    if transport == "sse":
        return SseServer(**common, **specific)
    return HttpServer(**common, **specific)


def _collect(problems: list[str], check: Callable[..., T], *args: Any) -> T | None:
    """Run one field's check; a refusal is added to ``problems`` so every field is reported."""
    try:
        return check(*args)
    except _Invalid as exc:
        problems.extend(exc.reasons)
        return None


def _from_tuple(raw: tuple[Any, ...]) -> dict[str, Any]:
    kind, rest = raw[0], list(raw[1:])
    opts = rest.pop() if rest and isinstance(rest[-1], Mapping) else {}
    out: dict[str, Any] = dict(opts)
    out["type"] = kind
    if kind == "stdio":
        if not rest:
            raise _Invalid("stdio command cannot be empty")
        out["command"] = rest[0]
        out["args"] = list(rest[1]) if len(rest) > 1 and isinstance(rest[1], Sequence) else []
    else:
        out["url"] = rest[0] if rest else ""
    return out


def _transport_of(data: dict[str, Any]) -> Transport:
    kind = data.get("type", data.get("transport"))
    if kind is None:
        if "command" in data:
            return "stdio"
        url = data.get("url")
        if isinstance(url, str):
            return "sse" if urlsplit(url).path.rstrip("/").endswith("/sse") else "http"
        raise _Invalid('an entry needs "command" (stdio) or "url" (http/sse)')
    if not isinstance(kind, str) or kind.lower() not in _TRANSPORT_ALIASES:
        raise _Invalid(f"unknown transport type {kind!r} (use stdio, http or sse)")
    return _TRANSPORT_ALIASES[kind.lower()]


def _common_fields(
    data: dict[str, Any], transport: Transport, problems: list[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    name = data.get("name")
    if name is not None:
        if not isinstance(name, str) or not name.strip():
            problems.append("name must be a non-empty string")
        else:
            out["name"] = name.strip()
    for key in ("ready_timeout_ms", "timeout_ms", "max_total_timeout_ms"):
        value = data.get(key, data.get(key.replace("_", "-")))
        if value is not None:
            checked = _collect(problems, _positive_int, key, value)
            if checked is not None:
                out[key] = checked
    protocol = data.get("protocol", "auto")
    if protocol not in PROTOCOL_MODES:
        problems.append("protocol must be auto, legacy or 2026-07-28")
    else:
        out["protocol"] = protocol
    enabled = _collect(problems, _enabled, data)
    out["enabled"] = True if enabled is None else enabled
    lists = {k: _collect(problems, _str_list, k, data.get(k)) for k in FILTER_KEYS}
    out["filters"] = Filters(**{k: v or () for k, v in lists.items()})
    oauth = data.get("oauth")
    if oauth is not None:
        problems.extend(oauth_problems(oauth, transport))
        if isinstance(oauth, Mapping):
            out["oauth"] = dict(oauth)
    pinned = _collect(problems, _always_load, data.get("always_load"))
    if pinned:
        out["always_load"] = pinned
    tool_policy = _collect(problems, _tool_policy, data)
    if tool_policy is not None:
        out["policy"] = tool_policy
    policy = data.get("sampling", data.get("sampling_policy"))
    if policy is not None:
        problems.extend(validate_policy(policy))
        if isinstance(policy, Mapping):
            out["sampling"] = dict(policy)
    share = data.get("share", True)
    if not isinstance(share, bool):
        problems.append("share must be true or false")
    else:
        out["share"] = share
    skills = data.get("skills", "disabled")
    if skills not in ("enabled", "disabled"):
        problems.append('skills must be "enabled" or "disabled"')
    else:
        out["skills"] = skills == "enabled"
    return out


def _tool_policy(data: dict[str, Any]) -> ToolPolicy:
    problems: list[str] = []
    fields: dict[str, Any] = {}
    budget = data.get("max_result_tokens")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            problems.append("max_result_tokens must be a non-negative integer (0: no limit)")
        else:
            fields["max_result_tokens"] = budget
    approve = data.get("approve", "never")
    if approve not in APPROVE_MODES:
        problems.append("approve must be never, destructive or always")
    else:
        fields["approve"] = approve
    per_tool = data.get("approve_tools", {})
    if not isinstance(per_tool, Mapping) or any(
        not isinstance(k, str) or v not in APPROVE_MODES for k, v in per_tool.items()
    ):
        problems.append("approve_tools must map tool names to never, destructive or always")
    else:
        fields["approve_tools"] = dict(per_tool)
    pinning = data.get("pinning", "withhold")
    if pinning not in PINNING_MODES:
        problems.append("pinning must be withhold, warn or off")
    else:
        fields["pinning"] = pinning
    if problems:
        raise _Invalid(*problems)
    return ToolPolicy(**fields)


def oauth_problems(oauth: object, transport: Transport) -> list[str]:
    """Why an ``oauth`` object cannot be used on a server of ``transport`` (empty when it can)."""
    if not isinstance(oauth, Mapping):
        return ["oauth must be an object"]
    if transport != "http":
        return ["oauth is supported on Streamable HTTP servers only"]
    return validate_oauth(oauth)


def _enabled(data: dict[str, Any]) -> bool:
    enabled, disabled = data.get("enabled", True), data.get("disabled", False)
    if not isinstance(enabled, bool) or not isinstance(disabled, bool):
        raise _Invalid("enabled/disabled must be true or false")
    return enabled and not disabled


def _stdio_fields(data: dict[str, Any]) -> dict[str, Any]:
    command = data.get("command")
    if not isinstance(command, str):
        raise _Invalid("stdio command must be a string")
    if not command.strip():
        raise _Invalid("stdio command cannot be empty")
    cwd = data.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd):
        raise _Invalid("cwd must be a non-empty string")
    return {
        "command": command.strip(),
        "args": tuple(_str_list("args", data.get("args"))),
        "env": _str_map("env", data.get("env")),
        "cwd": cwd,
    }


def _url_fields(data: dict[str, Any]) -> dict[str, Any]:
    url = data.get("url")
    if not isinstance(url, str):
        raise _Invalid(f"invalid HTTP URL: {url!r}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Invalid(f"invalid HTTP URL: {url}")
    return {"url": url.strip(), "headers": _str_map("headers", data.get("headers"))}


def _check_record(cfg: ServerConfig) -> None:
    problems: list[str] = []
    if isinstance(cfg, StdioServer):
        if not cfg.command.strip():
            problems.append("stdio command cannot be empty")
    else:
        parts = urlsplit(cfg.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            problems.append(f"invalid HTTP URL: {cfg.url}")
    for key in ("ready_timeout_ms", "timeout_ms", "max_total_timeout_ms"):
        _collect(problems, _positive_int, key, getattr(cfg, key))
    if cfg.protocol not in PROTOCOL_MODES:
        problems.append("protocol must be auto, legacy or 2026-07-28")
    if cfg.oauth is not None:
        problems.extend(oauth_problems(cfg.oauth, cfg.transport))
    if cfg.sampling is not None:
        problems.extend(validate_policy(cfg.sampling))
    if problems:
        raise _Invalid(*problems)


def _positive_int(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _Invalid(f"{key} must be a positive integer")
    return value


def _str_list(key: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise _Invalid(f"{key} must be a list of strings")
    if not all(isinstance(v, str) for v in value):
        raise _Invalid(f"{key} must be a list of strings")
    return tuple(value)


def _always_load(value: object) -> tuple[str, ...]:
    """``true`` pins every tool of the server, a list pins those tools, ``false`` none."""
    if isinstance(value, bool):
        return ("*",) if value else ()
    try:
        return _str_list("always_load", value)
    except _Invalid:
        raise _Invalid("always_load must be true, false or a list of tool names") from None


def _str_map(key: str, value: object) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, Sequence) and not isinstance(value, str):
        items = [tuple(p) for p in value if isinstance(p, Sequence) and len(p) == 2]
        if len(items) != len(value):
            raise _Invalid(f"{key} must be an object of strings")
    else:
        raise _Invalid(f"{key} must be an object of strings")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in items):
        raise _Invalid(f"{key} must be an object of strings")
    return {str(k): str(v) for k, v in items}


def _short(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."
