"""Model-facing names: server names and ``mcp_<server>_<tool>`` tool names (pure).

Model APIs accept tool names of at most 64 characters from ``[a-zA-Z0-9_-]``; we use the
lowercase subset ``[a-z0-9_]``. A name that would be longer is cut and given an 8-hex hash of
what it stands for, so it stays unique and stable. Two different tools can still end up with
the same name (``a-b`` and ``a_b``, or server ``x_y`` tool ``z`` against server ``x`` tool
``y_z``): the first in a deterministic order keeps the name, the others get a hash suffix, and
every such case is reported, never silently overwritten.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from lemon_skills.mcp.config.entries import ServerConfig, StdioServer

MAX_TOOL_NAME = 64
MAX_SERVER_NAME = 32
_HASH_LEN = 8

#: Commands that launch the real server named in their arguments.
_LAUNCHERS = frozenset(
    {
        *("npx", "bunx", "pnpx", "uvx", "pipx", "uv", "npm", "pnpm", "yarn"),
        *("node", "nodejs", "python", "python3", "py", "bun", "deno", "java", "dotnet"),
        *("docker", "podman", "sh", "bash", "ruby", "perl", "php", "go", "cargo"),
    }
)
_SUBCOMMANDS = frozenset({"run", "exec", "x", "dlx", "tool", "start", "serve", "--"})
#: Flags whose next argument is a value, not the server.
_VALUE_FLAGS = frozenset(
    {"--from", "--with", "-p", "--package", "-e", "--env", "-v", "--volume", "--name", "-w"}
)
_GENERIC_PARTS = frozenset(
    {"index", "main", "server", "cli", "dist", "build", "src", "lib", "bin", "app", "mcp", "sse"}
)
_NAME_AFFIXES = (
    ("mcp_server_", ""),
    ("server_", ""),
    ("mcp_", ""),
    ("", "_mcp_server"),
    ("", "_server_mcp"),
    ("", "_mcp"),
    ("", "_server"),
)
_NOISE_HOST_LABELS = frozenset({"www", "mcp", "api"})
_NOISE_PATH_PARTS = frozenset({"mcp", "sse", "v1", "v2", "v3", "api", "messages", "message"})


def slug(text: str) -> str:
    """Lowercase; every run of characters outside ``[a-z0-9]`` becomes one ``_``; trimmed."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def short_hash(*parts: str) -> str:
    """8 hex characters identifying ``parts`` (stable across runs and machines)."""
    return hashlib.sha1("\0".join(parts).encode("utf-8")).hexdigest()[:_HASH_LEN]


def fit(name: str, limit: int, *identity: str) -> str:
    """Return ``name`` if it fits ``limit``, else a cut with ``_<hash of identity>``."""
    if len(name) <= limit:
        return name
    keep = limit - _HASH_LEN - 1
    return name[:keep].rstrip("_") + "_" + short_hash(*(identity or (name,)))


def server_name(given: str) -> str:
    """Sanitise a user-given server name (``"My Git"`` → ``my_git``)."""
    return fit(slug(given) or "server", MAX_SERVER_NAME, given)


def derive_server_name(cfg: ServerConfig) -> str:
    """A readable name for an entry that did not give one.

    ``npx -y @modelcontextprotocol/server-filesystem`` → ``filesystem``, ``uvx mcp-server-git``
    → ``git``, ``python tools/weather.py`` → ``weather``, ``http://127.0.0.1:4000/mcp`` →
    ``localhost_4000``, ``https://mcp.example.com/github/mcp`` → ``example_github``.
    """
    base = _from_command(cfg) if isinstance(cfg, StdioServer) else _from_url(cfg.url)
    return fit(base or cfg.transport, MAX_SERVER_NAME, cfg.target)


def assign_server_names(configs: Sequence[ServerConfig]) -> list[str]:
    """Final names for entries in precedence order: given names first, derived ones made unique.

    Given names are assumed unique already (the merge keys on them); a derived name that clashes
    with a given one or an earlier derived one gets ``_2``, ``_3``...
    """
    taken = {server_name(c.name) for c in configs if c.name is not None}
    out: list[str] = []
    for cfg in configs:
        if cfg.name is not None:
            out.append(server_name(cfg.name))
            continue
        base = derive_server_name(cfg)
        candidate, n = base, 2
        while candidate in taken:
            candidate = f"{base}_{n}"
            n += 1
        taken.add(candidate)
        out.append(candidate)
    return out


def tool_name(server: str, tool: str) -> str:
    """``mcp_<server>_<tool>``, sanitised and at most 64 characters."""
    return fit(f"mcp_{server}_{slug(tool) or 'tool'}", MAX_TOOL_NAME, server, tool)


@dataclass(frozen=True, slots=True, kw_only=True)
class NameRequest:
    """One thing that wants a model-facing name: a server's tool or utility."""

    server: str
    item: str
    utility: bool = False

    def preferred(self) -> str:
        return tool_name(self.server, self.item)


@dataclass(frozen=True, slots=True, kw_only=True)
class NameConflict:
    """Several requests wanted ``name``; ``kept`` got it, ``renamed`` got the hashed names."""

    name: str
    kept: NameRequest
    renamed: tuple[tuple[NameRequest, str], ...]

    def to_dict(self) -> dict[str, object]:
        """JSON view for conflict reports (``lemon_utility``: the side is lemon's helper)."""
        return {
            "name": self.name,
            "kept": _side(self.kept),
            "renamed": [_side(r) | {"name": new} for r, new in self.renamed],
            "message": self.describe(),
        }

    def describe(self) -> str:
        """One line for people: who kept the name and where the others went."""
        moved = "; ".join(f"{_who(r)} is {new}" for r, new in self.renamed)
        return f"{self.name} is {_who(self.kept)}; {moved}"


def _side(req: NameRequest) -> dict[str, object]:
    return {"server": req.server, "tool": req.item, "lemon_utility": req.utility}


def _who(req: NameRequest) -> str:
    if req.utility:
        return f"lemon's {req.item} utility for server {req.server!r}"
    return f"server {req.server!r}'s tool {req.item!r}"


def assign_tool_names(
    requests: Iterable[NameRequest],
) -> tuple[dict[NameRequest, str], list[NameConflict]]:
    """Give every request a unique name, deterministically.

    Ties are broken by: a server's own tools before lemon's utilities (a server that offers a
    ``resources_list`` tool means it), then a name that needed no sanitising (``foo_bar``
    before ``foo-bar`` and ``Foo.Bar``), then server order of appearance, then the original
    item name. Losers get ``<cut>_<hash(server, item)>``.
    """
    reqs = list(dict.fromkeys(requests))
    server_order: dict[str, int] = {}
    for r in reqs:
        server_order.setdefault(r.server, len(server_order))
    groups: dict[str, list[NameRequest]] = {}
    for r in reqs:
        groups.setdefault(r.preferred(), []).append(r)
    names: dict[NameRequest, str] = {}
    conflicts: list[NameConflict] = []
    used = set(groups)
    for preferred, members in groups.items():
        members.sort(
            key=lambda r: (r.utility, slug(r.item) != r.item, server_order[r.server], r.item)
        )
        names[members[0]] = preferred
        renamed = []
        for loser in members[1:]:
            new = _suffixed(preferred, loser, used)
            used.add(new)
            names[loser] = new
            renamed.append((loser, new))
        if renamed:
            conflicts.append(NameConflict(name=preferred, kept=members[0], renamed=tuple(renamed)))
    return names, conflicts


def _suffixed(preferred: str, req: NameRequest, used: set[str]) -> str:
    tag = short_hash(req.server, req.item)
    keep = MAX_TOOL_NAME - _HASH_LEN - 1
    candidate = preferred[:keep].rstrip("_") + "_" + tag
    n = 2
    while candidate in used:
        tag = short_hash(req.server, req.item, str(n))
        candidate = preferred[:keep].rstrip("_") + "_" + tag
        n += 1
    return candidate


def _from_command(cfg: StdioServer) -> str:
    exe = PurePosixPath(cfg.command).name.lower()
    exe = re.sub(r"(\.exe|\.cmd|\.bat)$", "", exe)
    is_launcher = exe in _LAUNCHERS or re.fullmatch(r"python\d+(\.\d+)*", exe) is not None
    if is_launcher:
        target = _launched_target(cfg.args)
        if target:
            name = _name_from_target(target)
            if name:
                return name
    return _strip_affixes(slug(exe))


def _launched_target(args: Sequence[str]) -> str | None:
    skip_next = False
    for i, arg in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if arg == "-m" and i + 1 < len(args):
            return args[i + 1].replace(".", "/")
        if arg in _VALUE_FLAGS:
            skip_next = True
            continue
        if arg.startswith("-") or arg in _SUBCOMMANDS:
            continue
        return arg
    return None


def _name_from_target(target: str) -> str:
    target = re.sub(r"(?<=.)@[^/]*$", "", target)  # npm/uvx version pins: pkg@1.2.3
    target = target.split(":", 1)[0] if "/" in target else target  # docker image tags
    parts = [p for p in PurePosixPath(target).parts if p not in ("/", ".", "..")]
    for part in reversed(parts):
        stem = re.sub(r"\.(py|js|mjs|cjs|ts|rb|pl|php|jar|sh)$", "", part.lower())
        name = _strip_affixes(slug(stem))
        if name and name not in _GENERIC_PARTS:
            return name
    return ""


def _strip_affixes(name: str) -> str:
    for prefix, suffix in _NAME_AFFIXES:
        if prefix and name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
        if suffix and name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _from_url(url: str) -> str:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host in ("localhost", "127.0.0.1", "::1") or re.fullmatch(r"[\d.]+|[0-9a-f:]+", host):
        base = ["localhost" if host in ("localhost", "127.0.0.1", "::1") else host]
        if parts.port:
            base.append(str(parts.port))
    else:
        labels = [lb for lb in host.split(".") if lb]
        while len(labels) > 2 and labels[0] in _NOISE_HOST_LABELS:
            labels.pop(0)
        base = labels[:-1] if len(labels) > 1 else labels
    segments = [s for s in parts.path.split("/") if s and s.lower() not in _NOISE_PATH_PARTS]
    return slug("_".join([*base, *segments]))
