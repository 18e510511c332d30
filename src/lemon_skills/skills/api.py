"""The skills facade: the functions ``lemon_skills`` re-exports, wired to the real machine.

Every function resolves paths at call time and takes ``cwd`` (default: the process working
directory, as in the design document).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lemon_skills.errors import ConfigError
from lemon_skills.paths import PathArg, Scope, explicit_scope, resolve_cwd
from lemon_skills.search import metrics as evaluation
from lemon_skills.skills import discovery, enablement
from lemon_skills.skills import prompt as prompt_mod
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.model import Diagnostic, Entry
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import semantic as semantic_mod
from lemon_skills.skills.ranking import snapshot as index_cache
from lemon_skills.skills.readiness import SkillStatus, evaluate, not_found
from lemon_skills.skills.registry import View, default_registry, require, view
from lemon_skills.skills.usage import observe


def list_skills(*, cwd: PathArg = None, refresh: bool = False) -> list[Entry]:
    """Every visible skill, sorted by key, disabled ones included (``enabled=False``)."""
    return list(view(cwd, refresh=refresh).entries)


def get(key: str, *, cwd: PathArg = None, refresh: bool = False) -> Entry | None:
    """The visible skill with ``key``, or None."""
    return view(cwd, refresh=refresh).by_key.get(key)


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
        entry, enabled_state=v.enablement, env=os.environ, blocked=_audit_blocked(entry, v.cwd)
    )


def _audit_blocked(entry: Entry, cwd: Path | None) -> bool:
    return entry.key in _blocked_keys(entry.source, cwd)


def _blocked_keys(scope: Scope, cwd: Path | None) -> frozenset[str]:
    """Keys whose lock record in ``scope`` carries a ``block`` audit verdict."""
    try:
        records = lockfile.records(lockfile.lock_path(scope, cwd))
    except ConfigError:
        return frozenset()
    return frozenset(
        k for k, rec in records.items() if (rec.get("audit") or {}).get("verdict") == "block"
    )


def set_enabled(
    key: str,
    enabled: bool,
    *,
    cwd: PathArg = None,
    global_: bool | None = None,
    scope: Scope | None = None,
) -> bool:
    """Enable or disable ``key`` in one scope's skills.json; return True if the file changed.

    Raises:
        SkillNotFound: no visible skill has that key.
        ConfigError: the scope's skills.json is corrupt (it is left untouched).
    """
    where = resolve_cwd(cwd)
    require(key, cwd=where)
    path = enablement.skills_json_path(explicit_scope(global_, scope) or "global", where)
    changed = enablement.set_disabled(path, key, not enabled)
    default_registry().invalidate()
    return changed


def enable(
    key: str, *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> bool:
    """Remove ``key`` from the disabled list of a scope (default global)."""
    return set_enabled(key, True, cwd=cwd, global_=global_, scope=scope)


def disable(
    key: str, *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> bool:
    """Add ``key`` to the disabled list of a scope (default global)."""
    return set_enabled(key, False, cwd=cwd, global_=global_, scope=scope)


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


def semantic_similarity(v: View) -> semantic_mod.Similarity:
    """Embeddings of ``v``'s enabled skills (optional extra), computed once per registry state.

    Raises:
        ConfigError: the semantic extra or its model is not installed.
    """
    sim = v.memo.get("semantic_similarity")
    if sim is None:
        sim = semantic_mod.Similarity(ranking_index(v).entries)
        v.memo["semantic_similarity"] = sim
    assert isinstance(sim, semantic_mod.Similarity)
    return sim


def _rank(v: View, query: str, limit: int, use_semantic: bool | None) -> list[ranking.Match]:
    index = ranking_index(v)
    similar = None
    if semantic_mod.requested(use_semantic):
        similar = semantic_similarity(v)(query, floor=index.weights.semantic_floor)
    return ranking.rank(index, query, limit=limit, similar=similar)


def matches(
    query: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    refresh: bool = False,
    semantic: bool | None = None,
) -> list[ranking.Match]:
    """Ranked matches with their score parts (what ``find_relevant`` returns, explained)."""
    return _rank(view(cwd, refresh=refresh), query, max_results, semantic)


def find_relevant(
    query: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    refresh: bool = False,
    semantic: bool | None = None,
) -> list[Entry]:
    """Enabled skills relevant to ``query``, best first; ``[]`` when none applies.

    Deterministic. An empty query, one made only of stop words, or one no skill is about
    gets ``[]``. On equal scores a project skill comes before a global one. ``semantic``
    (default ``$LEMON_SEMANTIC``) adds embedding similarity; it needs the semantic extra.
    """
    found = matches(query, cwd=cwd, max_results=max_results, refresh=refresh, semantic=semantic)
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
    sim = semantic_mod.Similarity(entries) if semantic_mod.requested(semantic) else None
    floor = index.weights.semantic_floor

    def rank(q: str) -> list[str]:
        similar = sim(q, floor=floor) if sim is not None else None
        return [m.entry.key for m in ranking.rank(index, q, limit=max_results, similar=similar)]

    return evaluation.evaluate(cases, rank)


def _entries_in(directory: Path) -> list[Entry]:
    scan = discovery.scan_dirs([directory], "project")
    entries = [e for c in scan.candidates if (e := discovery.load_candidate(c).entry) is not None]
    if not entries:
        raise ConfigError(
            f"no skills in {directory}", hint="expected <key>/SKILL.md folders inside it"
        )
    return entries


def prompt_catalogue(v: View) -> list[Entry]:
    """Skills the catalogue may show: enabled, model-invocable, active or merely not ready."""
    blocked = {
        scope: _blocked_keys(scope, v.cwd) if scope == "global" or v.cwd else frozenset()
        for scope in ("global", "project")
    }
    out = []
    for e in v.enabled():
        if e.manifest.disable_model_invocation:
            continue
        st = evaluate(
            e, enabled_state=v.enablement, env=os.environ, blocked=e.key in blocked[e.source]
        )
        if st.activation_state in ("active", "not_ready"):
            out.append(e)
    return out


def render_prompt(
    request: str,
    *,
    cwd: PathArg = None,
    max_results: int = 3,
    budget: int = prompt_mod.DEFAULT_BUDGET,
    mode: prompt_mod.Mode = "content",
    context: Mapping[str, str] | None = None,
) -> prompt_mod.RenderedPrompt:
    """The system-prompt block for ``request``: relevant skills and the catalogue.

    Only skills that clear the relevance bar on their own are injected; weaker runners-up that
    ``find_relevant`` would still list stay in the catalogue, so their text does not crowd the
    prompt. Emits ``skill.prompt_render`` with the keys shown (never the request or any skill
    text); ``context`` adds ``run_id``/``session_key``/``session_id``/``agent_id`` to it.
    """
    v = view(cwd)
    catalogue = prompt_catalogue(v)
    allowed = {e.key for e in catalogue}
    weights = ranking_index(v).weights
    use_semantic = semantic_mod.requested(None)
    relevant = [
        m.entry
        for m in _rank(v, request, max_results, None)
        if m.entry.key in allowed and ranking.clears_bar(m, weights, semantic=use_semantic)
    ]
    rendered = prompt_mod.render(relevant, catalogue, budget=budget, mode=mode)
    observe.emit("skill.prompt_render", observe.prompt_metadata(rendered, v.cwd, mode, context))
    return rendered


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Why one skill is or is not active, in words."""

    key: str
    state: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"key": self.key, "state": self.state, "reasons": list(self.reasons)}
