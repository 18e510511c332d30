"""The skills facade: the functions ``lemon_skills`` re-exports, wired to the real machine.

Every function resolves paths at call time and takes ``cwd`` (default: the process working
directory, as in the design document).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemon_skills.errors import ConfigError
from lemon_skills.paths import PathArg, Scope, explicit_scope, resolve_cwd
from lemon_skills.search import metrics as evaluation
from lemon_skills.settings import mcp_server_names
from lemon_skills.skills import prompt as prompt_mod
from lemon_skills.skills.catalog import discovery, enablement
from lemon_skills.skills.catalog.readiness import SkillStatus, evaluate, not_found, offerable
from lemon_skills.skills.catalog.registry import View, default_registry, require, view
from lemon_skills.skills.format.model import Diagnostic, Entry
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import semantic as semantic_mod
from lemon_skills.skills.ranking import snapshot as index_cache
from lemon_skills.skills.ranking import tuning
from lemon_skills.skills.selection import activation, profiles
from lemon_skills.skills.selection.profiles import Profile
from lemon_skills.skills.usage import observe
from lemon_skills.telemetry import otel


def list_skills(
    *, cwd: PathArg = None, refresh: bool = False, agent: str | None = None
) -> list[Entry]:
    """Every visible skill, sorted by key, disabled ones included (``enabled=False``);
    with ``agent``, only those inside its skill profile.

    Raises:
        ConfigError: ``agent`` has no profile in skills.json.
    """
    v = view(cwd, refresh=refresh)
    return profiles.keep(v.entries, profiles.select(v.enablement.profiles, agent))


def get(
    key: str, *, cwd: PathArg = None, refresh: bool = False, agent: str | None = None
) -> Entry | None:
    """The visible skill with ``key`` (inside ``agent``'s profile, when given), or None."""
    v = view(cwd, refresh=refresh)
    profile = profiles.select(v.enablement.profiles, agent)
    entry = v.by_key.get(key)
    return entry if entry is not None and (profile is None or profile.admits(key)) else None


def diagnostics(*, cwd: PathArg = None) -> list[Diagnostic]:
    """Every problem found loading the skills visible from ``cwd``."""
    return list(view(cwd).diagnostics)


def status(key: str, *, cwd: PathArg = None) -> SkillStatus:
    """Readiness of one skill (``ready``, ``activation_state``, what is missing...)."""
    v = view(cwd)
    entry = v.by_key.get(key)
    if entry is None:
        return not_found(key)
    return evaluate(
        entry,
        enabled_state=v.enablement,
        env=os.environ,
        blocked=_audit_blocked(entry, v.cwd),
        available=frozenset(e.key for e in v.enabled()),
        mcp_servers=_server_names(v),
    )


def _audit_blocked(entry: Entry, cwd: Path | None) -> bool:
    # An MCP skill has no lock record: the audit runs on its content before each use.
    return entry.source != "mcp" and entry.key in _blocked_keys(entry.source, cwd)


def _blocked_keys(scope: Scope, cwd: Path | None) -> frozenset[str]:
    """Keys whose lock record in ``scope`` carries a ``block`` audit verdict."""
    try:
        records = lockfile.records(lockfile.lock_path(scope, cwd))
    except ConfigError:
        return frozenset()
    return frozenset(
        k for k, rec in records.items() if (rec.get("audit") or {}).get("verdict") == "block"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Toggled:
    """What enabling or disabling a key changed in one scope's skills.json."""

    key: str
    enabled: bool
    scope: Scope
    #: The key (or namespace) entered or left the scope's disabled list.
    listed: bool
    #: For a namespace ``<prefix>:*``: the skills switch of the MCP server ``<prefix>`` changed.
    #: A plugin and a server of one name share the namespace, so it is switched either way.
    switch: bool = False
    #: For a namespace: whether an MCP server of that name is configured (None: not known,
    #: no ``mcp_server_names`` provider is configured).
    server_configured: bool | None = None

    @property
    def changed(self) -> bool:
        """True when the file changed."""
        return self.listed or self.switch

    @property
    def server(self) -> str | None:
        """The MCP server whose skills switch a namespace key also sets."""
        return self.key[:-2] if enablement.is_namespace(self.key) else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; ``server_switch`` is None for a single skill."""
        switch = None
        if self.server is not None:
            switch = {
                "server": self.server,
                "on": self.enabled,
                "changed": self.switch,
                "configured": self.server_configured,
            }
        return {
            "key": self.key,
            "enabled": self.enabled,
            "scope": self.scope,
            "changed": self.changed,
            "disabled_list_changed": self.listed,
            "server_switch": switch,
        }


def toggle(
    key: str,
    enabled: bool,
    *,
    cwd: PathArg = None,
    global_: bool | None = None,
    scope: Scope | None = None,
) -> Toggled:
    """Enable or disable ``key`` in one scope's skills.json (default global); say what changed.

    Raises:
        SkillNotFound: no visible skill has that key.
        ConfigError: the scope's skills.json is corrupt (it is left untouched).
    """
    where = resolve_cwd(cwd)
    sc = explicit_scope(global_, scope) or "global"
    path = enablement.skills_json_path(sc, where)
    if enablement.is_namespace(key):
        # Every skill of the namespace, those that appear later included; an MCP server's
        # skills are also switched, as its listing is not read until they are on.
        listed = enablement.set_disabled(path, key, not enabled)
        switch = enablement.set_switch(path, key, enabled)
        default_registry().invalidate()
        names = mcp_server_names(where)
        known = None if names is None else key[:-2] in names
        return Toggled(
            key=key,
            enabled=enabled,
            scope=sc,
            listed=listed,
            switch=switch,
            server_configured=known,
        )
    entry = require(key, cwd=where)
    if entry.source == "mcp" and enabled:
        from lemon_skills.skills.remote import store as remote_store

        # Enabling an MCP skill by name approves the version it serves now.
        remote_store.pin(key, None, review=True)
    listed = enablement.set_disabled(path, key, not enabled)
    default_registry().invalidate()
    return Toggled(key=key, enabled=enabled, scope=sc, listed=listed)


def enable(
    key: str, *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> bool:
    """Remove ``key`` from the disabled list of a scope (default global)."""
    return toggle(key, True, cwd=cwd, global_=global_, scope=scope).changed


def disable(
    key: str, *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> bool:
    """Add ``key`` to the disabled list of a scope (default global)."""
    return toggle(key, False, cwd=cwd, global_=global_, scope=scope).changed


def refresh(*, cwd: PathArg = None) -> None:
    """Drop every cached scope so the next call reloads all skills from disk."""
    default_registry().refresh()


def ranking_index(v: View) -> ranking.Index:
    """The search index of ``v``'s enabled skills, built once per registry state."""
    index = v.memo.get("ranking_index")
    if index is None:
        index = index_cache.load_or_build(v.enabled())
        v.memo["ranking_index"] = index
    assert isinstance(index, ranking.Index)
    return index


def _ranking_for(v: View, query: str) -> ranking.Index:
    """The index to rank ``query`` with: the full one, unless this is the first query of a
    large tree whose index was never built, answered from an index focused on it
    (``snapshot.first_query_index``); the next query builds the full index, or the CLI has
    it built in the background (``index_pending``)."""
    if "ranking_index" not in v.memo:
        focused = index_cache.first_query_index(v.enabled(), query)
        if focused is not None:
            v.memo["focused"] = True
            return focused
    return ranking_index(v)


def index_pending(*, cwd: PathArg = None) -> bool:
    """Whether a query here was answered from a focused index and the full one is unbuilt."""
    v = view(cwd)
    return bool(v.memo.get("focused")) and "ranking_index" not in v.memo


def claim_background_index(*, cwd: PathArg = None) -> bool:
    """Whether this process should start the background build of ``cwd``'s index: a query
    here was answered from a focused index, and no other process has claimed the build (the
    ``if_idle`` build releases the claim)."""
    return index_pending(cwd=cwd) and index_cache.claim_build(view(cwd).enabled())


def build_ranking_index(*, cwd: PathArg = None, if_idle: bool = False) -> int | None:
    """Build, or update for what changed, the ranking index of the enabled skills visible
    from ``cwd`` and keep it on disk; the number of skills indexed. With ``if_idle``, nothing
    (None) while another process that asked the same is building it."""
    v = view(cwd)
    if not if_idle:
        return len(ranking_index(v).entries)
    try:
        with index_cache.exclusive(v.enabled()) as mine:
            return len(ranking_index(v).entries) if mine else None
    finally:
        index_cache.release_build(v.enabled())


def semantic_similarity(v: View) -> semantic_mod.Similarity:
    """Embeddings of ``v``'s enabled skills (optional extra), computed once per registry state.

    Raises:
        ConfigError: the semantic extra or its model is not installed.
    """
    sim = v.memo.get("semantic_similarity")
    if sim is None:
        index = ranking_index(v)
        sim = semantic_mod.Similarity(index.entries, core=index.core)
        v.memo["semantic_similarity"] = sim
    assert isinstance(sim, semantic_mod.Similarity)
    return sim


def _rank(
    v: View,
    query: str,
    limit: int,
    use_semantic: bool | None,
    keep: Callable[[Entry], bool] | None = None,
) -> list[ranking.Match]:
    with otel.span("lemon.skills.find") as current:
        similar = None
        semantic = semantic_mod.requested(use_semantic)
        if semantic:
            index = ranking_index(v)
            similar = semantic_similarity(v)(query, floor=index.weights.semantic_floor)
        else:
            index = _ranking_for(v, query)
        if keep is None:
            out = ranking.rank(index, query, limit=limit, similar=similar)
        else:
            # Filtered after ranking, so the ranking of what stays is the ranker's own.
            found = ranking.rank(index, query, limit=len(index.entries), similar=similar)
            out = [m for m in found if keep(m.entry)][:limit]
        otel.set_attributes(current, _find_attributes(index, out, semantic))
        return out


def _find_attributes(
    index: ranking.Index, found: list[ranking.Match], semantic: bool
) -> dict[str, object]:
    """What a ranking span tells: never the request, only counts, keys and the verdict."""
    return {
        "lemon.skills.candidates": len(index.entries),
        "lemon.skills.chosen": [m.entry.key for m in found],
        "lemon.skills.none": not found,
        "lemon.skills.semantic": semantic,
    }


def selection(
    v: View, *, files: Iterable[str | os.PathLike[str]] | None, agent: str | None
) -> tuple[Profile | None, activation.InPlay]:
    """The profile of ``agent`` and the files in play, for one call.

    Raises:
        ConfigError: ``agent`` has no profile in skills.json.
    """
    profile = profiles.select(v.enablement.profiles, agent)
    return profile, activation.in_play(files, cwd=v.cwd or Path.cwd())


def _keep(
    v: View, profile: Profile | None, play: activation.InPlay
) -> Callable[[Entry], bool] | None:
    """What a ranking for this agent and these files may return; None when everything."""
    if profile is None and not _path_scoped(v):
        return None
    return lambda e: (profile is None or profile.admits(e.key)) and play.admits(e)


def _path_scoped(v: View) -> bool:
    scoped = v.memo.get("path_scoped")
    if scoped is None:
        scoped = any(e.paths for e in v.enabled())
        v.memo["path_scoped"] = scoped
    return bool(scoped)


def _boost(found: list[ranking.Match], play: activation.InPlay) -> list[ranking.Match]:
    """Path-scoped skills a file in play matches go first (each group keeps its order)."""
    scoped = [m for m in found if m.entry.paths]
    return [*scoped, *(m for m in found if not m.entry.paths)] if scoped else found


def matches(
    query: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    refresh: bool = False,
    semantic: bool | None = None,
    files: Iterable[str | os.PathLike[str]] | None = None,
    agent: str | None = None,
) -> list[ranking.Match]:
    """Ranked matches with their score parts (what ``find_relevant`` returns, explained)."""
    v = view(cwd, refresh=refresh)
    profile, play = selection(v, files=files, agent=agent)
    return _boost(_rank(v, query, max_results, semantic, _keep(v, profile, play)), play)


def near_misses(
    query: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    semantic: bool | None = None,
    files: Iterable[str | os.PathLike[str]] | None = None,
    agent: str | None = None,
) -> tuple[list[ranking.Match], float]:
    """The best skills for ``query`` with no abstaining, and the bar an answer must reach
    (what explains an empty ``matches``)."""
    v = view(cwd)
    profile, play = selection(v, files=files, agent=agent)
    keep = _keep(v, profile, play)
    index = ranking_index(v)
    use = semantic_mod.requested(semantic)
    similar = semantic_similarity(v)(query, floor=index.weights.semantic_floor) if use else None
    limit = max_results if keep is None else len(index.entries)
    found = ranking.near_misses(index, query, limit=limit, similar=similar)
    if keep is not None:
        found = [m for m in found if keep(m.entry)][:max_results]
    return found, index.weights.semantic_min_score if use else index.weights.min_score


def find_relevant(
    query: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    refresh: bool = False,
    semantic: bool | None = None,
    files: Iterable[str | os.PathLike[str]] | None = None,
    agent: str | None = None,
) -> list[Entry]:
    """Enabled skills relevant to ``query``, best first; ``[]`` when none applies.

    Deterministic. An empty query, one made only of stop words, or one no skill is about
    gets ``[]``. On equal scores a project skill comes before a global one. ``semantic``
    adds embedding similarity (default: ``$LEMON_SEMANTIC``, else whether the semantic extra
    and its model are installed).
    ``files`` are the files in play: a skill with ``paths`` is offered only when one of them
    matches, and then ahead of the others. ``agent`` applies that agent's skill profile.
    """
    found = matches(
        query,
        cwd=cwd,
        max_results=max_results,
        refresh=refresh,
        semantic=semantic,
        files=files,
        agent=agent,
    )
    return [m.entry for m in found]


def evaluate_queries(
    cases: Sequence[evaluation.Case],
    *,
    cwd: PathArg = None,
    skills_dir: PathArg = None,
    max_results: int = 10,
    semantic: bool | None = None,
) -> evaluation.Report:
    """Run ``find_relevant`` on labelled queries and measure it (see ``evaluation``).

    With ``skills_dir`` the skills are the ``<key>/SKILL.md`` folders of that directory alone
    (a skill repository, before installing it) instead of those visible from ``cwd``.

    Raises:
        ConfigError: ``skills_dir`` holds no skill.
    """
    if skills_dir is None:
        v = view(cwd)
        return evaluation.evaluate(
            cases, lambda q: [m.entry.key for m in _rank(v, q, max_results, semantic)]
        )
    entries = _entries_in(Path(skills_dir))
    index = ranking.build_index(entries)
    use = semantic_mod.requested(semantic)
    sim = semantic_mod.Similarity(entries, core=index.core) if use else None
    floor = index.weights.semantic_floor

    def rank(q: str) -> list[str]:
        similar = sim(q, floor=floor) if sim is not None else None
        return [m.entry.key for m in ranking.rank(index, q, limit=max_results, similar=similar)]

    return evaluation.evaluate(cases, rank)


def cross_validate_queries(
    cases: Sequence[evaluation.Case],
    *,
    cwd: PathArg = None,
    skills_dir: PathArg = None,
    folds: int = 10,
    max_results: int = 10,
    semantic: bool | None = None,
) -> tuning.Tuning:
    """Cross-validated figures of the ranker's tunable constants on labelled queries (see
    ``ranking.tuning``); skills chosen as in ``evaluate_queries``.

    Raises:
        ConfigError: ``skills_dir`` holds no skill, or fewer queries than folds.
    """
    if len(cases) < folds:
        raise ConfigError(f"{folds}-fold cross-validation needs at least {folds} queries")
    entries = view(cwd).enabled() if skills_dir is None else _entries_in(Path(skills_dir))
    sim = None
    if semantic_mod.requested(semantic):
        sim = semantic_mod.Similarity(entries, core=ranking.build_index(entries).core)
    return tuning.cross_validate(
        entries, cases, folds=folds, similarity=sim, max_results=max_results
    )


def _entries_in(directory: Path) -> list[Entry]:
    scan = discovery.scan_dirs([directory], "project")
    entries = [e for c in scan.candidates if (e := discovery.load_candidate(c).entry) is not None]
    if not entries:
        raise ConfigError(
            f"no skills in {directory}", hint="expected <key>/SKILL.md folders inside it"
        )
    return entries


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
    if play is not None and _path_scoped(v):
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
    if _path_scoped(v):
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
        for k in _blocked_keys(scope, v.cwd)
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
    profile, play = selection(v, files=files, agent=agent)
    catalogue = _listing(v, profile, play)
    excluded = _blocked(v) | _unmet(v)
    weights = ranking.DEFAULT_WEIGHTS
    use_semantic = semantic_mod.requested(None)
    # One ranking serves both: the first matches that clear the bar are injected, and every
    # match leads the catalogue, so a budget too small to describe all skills describes these.
    matches = [
        m
        for m in _boost(
            _rank(v, request, max(max_results, NEAR), None, _keep(v, profile, play)), play
        )
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


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Why one skill is or is not active, in words."""

    key: str
    state: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"key": self.key, "state": self.state, "reasons": list(self.reasons)}
