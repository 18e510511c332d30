"""Warnings about MCP config that parses but will likely not do what its author meant.

Unknown keys (``"arg"`` for ``"args"``), a ``command`` that carries its arguments
(``"npx -y pkg"``), a file without servers. They never stop a config from loading;
``lemon mcp validate`` prints them, and fails on one: an executable that cannot be found
(``MISSING_EXECUTABLE``), since that server can never start.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

from lemon_skills.mcp.config.entries import ENTRY_KEYS, ConfigIssue, Origin, StdioServer
from lemon_skills.mcp.config.parse import document_entries, parse_server, split_named
from lemon_skills.mcp.config.resolve import global_config_path, project_config_path

#: How a warning about a stdio command that names no executable begins.
MISSING_EXECUTABLE = "executable not found"


def executable_found(command: str, cwd: Path | None, path: str | None) -> bool:
    """Whether ``command`` names an executable file: a path (relative to ``cwd``), or a name
    found on ``path``."""
    if os.sep in command:
        exe = Path(command) if Path(command).is_absolute() or cwd is None else cwd / command
        return exe.is_file() and os.access(exe, os.X_OK)
    return shutil.which(command, path=path) is not None


def command_hint(command: str) -> str | None:
    """For a ``command`` with its arguments in it: how to split it into ``args``."""
    words = command.split()
    if len(words) < 2:
        return None
    args = ", ".join(f'"{w}"' for w in words[1:])
    return f'arguments belong in "args": "command": "{words[0]}", "args": [{args}]'


def lint_document(
    data: object, *, origin: Origin, path: Path | None = None, base_dir: Path | None = None
) -> list[ConfigIssue]:
    """Warnings for one parsed config document (its errors are ``validate_servers``'s)."""
    _enabled, entries, _problem = document_entries(data)
    if not entries:
        return [ConfigIssue(reason="no MCP servers are configured", origin=origin, path=path)]
    out: list[ConfigIssue] = []
    for index, item in enumerate(entries):
        name, raw = split_named(item)
        if not isinstance(raw, Mapping):
            continue
        label = name if name is not None else raw.get("name")
        out.extend(
            ConfigIssue(
                reason=reason,
                entry=raw,
                index=index,
                name=label if isinstance(label, str) else None,
                origin=origin,
                path=path,
            )
            for reason in entry_warnings(raw, base_dir=base_dir)
        )
    return out


def entry_warnings(raw: Mapping[str, object], *, base_dir: Path | None = None) -> list[str]:
    """Unknown keys and a stdio command that cannot run as written."""
    out = []
    for key in raw:
        if str(key).replace("-", "_") not in ENTRY_KEYS:
            close = difflib.get_close_matches(str(key), sorted(ENTRY_KEYS), n=1)
            out.append(f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    try:
        cfg = parse_server(raw, base_dir=base_dir)
    except ValueError:
        return out  # an error, reported as such
    if isinstance(cfg, StdioServer) and "$" not in cfg.command:
        env_path = cfg.env.get("PATH", os.environ.get("PATH"))
        if not executable_found(cfg.command, cfg.effective_cwd(), env_path):
            hint = command_hint(cfg.command)
            out.append(f"{MISSING_EXECUTABLE}: {cfg.command}" + (f"; {hint}" if hint else ""))
    return out


def lint_file(path: Path, origin: Origin, base_dir: Path | None) -> list[ConfigIssue]:
    """Warnings for one mcp.json (none when it is missing or unreadable: that is an error)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    return lint_document(data, origin=origin, path=path, base_dir=base_dir)


def lint_sources(cwd: Path, env: Mapping[str, str] | None = None) -> list[ConfigIssue]:
    """Warnings for every config source of ``cwd`` (files and ``LEMON_MCP_SERVERS``)."""
    env = os.environ if env is None else env
    out: list[ConfigIssue] = []
    raw = env.get("LEMON_MCP_SERVERS", "").strip()
    if raw:
        with suppress(json.JSONDecodeError):  # reported as an error by ``resolve.load``
            out += lint_document(json.loads(raw), origin="env")
    project = project_config_path(cwd)
    if project.exists():
        out += lint_file(project, "project", cwd)
    if global_config_path().exists():
        out += lint_file(global_config_path(), "global", None)
    return out
