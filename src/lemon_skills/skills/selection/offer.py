"""The prompt block for a request: the catalogue a view may offer (``prompt_catalogue``) and
``render_prompt``, which fits the relevant skills and that catalogue into a budget.

Every function resolves paths at call time and takes ``cwd`` (default: the process working
directory, as in the design document).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from lemon_skills.paths import PathArg, Scope
from lemon_skills.settings import mcp_server_names
from lemon_skills.skills import prompt as prompt_mod
from lemon_skills.skills.catalog import discovery
from lemon_skills.skills.catalog.readiness import offerable
from lemon_skills.skills.catalog.registry import View, view
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import semantic as semantic_mod
from lemon_skills.skills.selection import activation, relevance
from lemon_skills.skills.selection.profiles import Profile
from lemon_skills.skills.usage import observe
from lemon_skills.telemetry import otel


def prompt_catalogue(
    v: View, profile: Profile | None = None, play: activation.InPlay | None = None
) -> list[Entry]:
    """Skills the catalogue may show: enabled, model-invocable, active or merely not ready,
    inside ``profile``, with their required skills and MCP servers present, and, when
    ``play`` is given, a file in play for each path-scoped skill."""
    return list(_catalogue(v, profile, play))


def _catalogue(
    v: View, profile: Profile | None, play: activation.InPlay | None
) -> tuple[Entry, ...]:
    """``prompt_catalogue``, kept on the view for as long as what it depends on is unchanged
    (the lock files, the configured MCP servers, the profile): a render then costs what it
    emits, not a check of every skill."""
    offered, _ = _offerable(v)
    excluded = _blocked(v) | _unmet(v)
    memo = v.memo.setdefault("prompt_catalogue", {})
    cached = memo.get(profile)
    if cached is not None and cached[0] == excluded:
        out: tuple[Entry, ...] = cached[1]
    else:
        out = offered
        if excluded or profile is not None:
            out = tuple(
                e
                for e in offered
                if e.key not in excluded and (profile is None or profile.admits(e.key))
            )
        memo[profile] = (excluded, out)
    if play is not None and relevance.path_scoped(v):
        out = tuple(e for e in out if play.admits(e))
    return out


def _listing(v: View, profile: Profile | None, play: activation.InPlay) -> prompt_mod.Catalogue:
    """``_catalogue`` ready to render, sorted and measured once per view and profile; the
    path-scoped skills no file in play matches are hidden per call."""
    base = _catalogue(v, profile, None)
    memo = v.memo.setdefault("prompt_listing", {})
    cached = memo.get(profile)
    if cached is not None and cached[0] is base:
        cat: prompt_mod.Catalogue = cached[1]
    else:
        cat = prompt_mod.Catalogue.of(base)
        memo[profile] = (base, cat)
    if relevance.path_scoped(v):
        scoped = v.memo.get("prompt_scoped")
        if scoped is None:
            scoped = v.memo["prompt_scoped"] = tuple(e for e in v.enabled() if e.paths)
        cat = cat.without(e.key for e in scoped if not play.admits(e))
    return cat


def _offerable(v: View) -> tuple[tuple[Entry, ...], tuple[Entry, ...]]:
    """The enabled, model-invocable skills, and those of them whose readiness depends on the
    machine (requirements or platforms); the rest are offered unless the audit blocks them."""
    memo = v.memo.get("prompt_offerable")
    if memo is None:
        offered = tuple(e for e in v.enabled() if not e.flag("disable_model_invocation"))
        memo = (offered, tuple(e for e in offered if e.has_requirements))
        v.memo["prompt_offerable"] = memo
    assert isinstance(memo, tuple)
    return memo


def _blocked(v: View) -> frozenset[str]:
    """Keys of ``v`` whose own scope's lock record carries a ``block`` verdict; re-read only
    when a lock file changed."""
    scopes: tuple[Scope, ...] = ("global", "project") if v.cwd else ("global",)
    sigs = tuple(discovery.file_sig(lockfile.lock_path(s, v.cwd)) for s in scopes)
    memo = v.memo.get("prompt_blocked")
    if memo is not None and memo[0] == sigs:
        return frozenset(memo[1])
    keys = frozenset(
        k
        for scope in scopes
        for k in lockfile.blocked_keys(scope, v.cwd)
        if (e := v.by_key.get(k)) is not None and e.source == scope
    )
    v.memo["prompt_blocked"] = (sigs, keys)
    return keys


def _unmet(v: View) -> frozenset[str]:
    """Keys of offerable skills on another platform or missing a required skill or MCP server."""
    _, conditional = _offerable(v)
    if not conditional:
        return frozenset()
    wants_servers = v.memo.get("prompt_wants_servers")
    if wants_servers is None:
        wants_servers = v.memo["prompt_wants_servers"] = any(
            e.requirement("mcp") for e in conditional
        )
    servers = _server_names(v) if wants_servers else None
    memo = v.memo.get("prompt_unmet")
    if memo is not None and memo[0] == servers:
        return frozenset(memo[1])
    available = frozenset(e.key for e in v.enabled())
    keys = frozenset(
        e.key for e in conditional if not offerable(e, available=available, mcp_servers=servers)
    )
    v.memo["prompt_unmet"] = (servers, keys)
    return keys


def _standing(
    v: View, profile: Profile | None
) -> tuple[tuple[Entry, ...], tuple[Entry, ...], tuple[Entry, ...]]:
    """The offerable skills ``profile`` preloads, the rules that always apply and the rules
    attached to files, each in catalogue order."""
    memo = v.memo.setdefault("prompt_standing", {})
    out = memo.get(profile)
    if out is None:
        offered, _ = _offerable(v)
        preload = () if profile is None or not profile.preload else offered
        out = (
            tuple(e for e in preload if profile is not None and profile.preloads(e.key)),
            tuple(e for e in offered if e.flag("always_apply")),
            tuple(e for e in offered if e.flag("attach")),
        )
        memo[profile] = out
    assert isinstance(out, tuple)
    return out


def _server_names(v: View) -> frozenset[str] | None:
    # Not memoised on the view: the provider may be configured after the view was built.
    return mcp_server_names(v.cwd)


#: How many of the request's closest skills lead the catalogue.
NEAR = 20


def render_prompt(
    request: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    budget: int | None = None,
    mode: prompt_mod.Mode = "content",
    context: Mapping[str, str] | None = None,
    files: Iterable[str | os.PathLike[str]] | None = None,
    agent: str | None = None,
) -> prompt_mod.RenderedPrompt:
    """The system-prompt block for ``request``: relevant skills and the catalogue.

    Only skills that clear the relevance bar on their own are injected; weaker runners-up that
    ``find_relevant`` would still list stay in the catalogue, so their text does not crowd the
    prompt. Before them come, in this order, the skills ``agent``'s profile preloads, rules
    that always apply, and rules attached to a file in play (``files``). ``budget`` defaults to
    the profile's, else ``DEFAULT_BUDGET``. Emits ``skill.prompt_render`` with the keys shown
    (never the request or any skill text); ``context`` adds ``run_id``/``session_key``/
    ``session_id``/``agent_id`` to it.

    Raises:
        ConfigError: ``agent`` has no profile in skills.json.
    """
    v = view(cwd)
    profile, play = relevance.selection(v, files=files, agent=agent)
    catalogue = _listing(v, profile, play)
    excluded = _blocked(v) | _unmet(v)
    weights = ranking.DEFAULT_WEIGHTS
    use_semantic = semantic_mod.requested(None)
    # One ranking serves both: the first matches that clear the bar are injected, and every
    # match leads the catalogue, so a budget too small to describe all skills describes these.
    keep = relevance.admitted(v, profile, play)
    found = relevance.rank(v, request, max(max_results, NEAR), None, keep)
    matches = [
        m
        for m in relevance.boost(found, play)
        # The ranking already applied the profile and the files in play.
        if m.entry.key not in excluded and not m.entry.flag("disable_model_invocation")
    ]
    ranked = [
        m.entry
        for m in matches[:max_results]
        if ranking.clears_bar(m, weights, semantic=use_semantic)
    ]
    preloads, rules, attach = _standing(v, profile)

    def listed(e: Entry) -> bool:
        return e.key not in excluded and (profile is None or profile.admits(e.key))

    preload = [e for e in preloads if listed(e) and play.admits(e)]
    always = [e for e in rules if listed(e) and play.admits(e)]
    attached = [e for e in attach if listed(e) and play.matches(e)]
    relevant = list({e.key: e for e in (*preload, *always, *attached, *ranked)}.values())
    if budget is None:
        budget = profile.budget if profile and profile.budget else prompt_mod.DEFAULT_BUDGET
    near = [m.entry.key for m in matches]
    with otel.span("lemon.prompt.render", {"lemon.prompt.budget": budget}) as current:
        rendered = prompt_mod.render(relevant, catalogue, budget=budget, mode=mode, near=near)
        otel.set_attributes(current, _render_attributes(rendered))
    observe.emit("skill.prompt_render", observe.prompt_metadata(rendered, v.cwd, mode, context))
    return rendered


def _render_attributes(rendered: prompt_mod.RenderedPrompt) -> dict[str, object]:
    return {
        "lemon.prompt.chars": len(rendered.text),
        "lemon.prompt.relevant": list(rendered.relevant),
        "lemon.prompt.listed": len(rendered.listed),
        "lemon.prompt.omitted": list(rendered.omitted),
        "lemon.prompt.truncated": list(rendered.truncated),
    }
