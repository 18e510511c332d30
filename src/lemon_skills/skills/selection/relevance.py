"""Skills relevant to a request: the view's ranking index, and ``find_relevant`` with its
explained forms (``matches``, ``near_misses``) under an agent's profile and the files in play.

Every function resolves paths at call time and takes ``cwd`` (default: the process working
directory, as in the design document).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from lemon_skills.paths import PathArg
from lemon_skills.skills.catalog.registry import View, view
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import semantic as semantic_mod
from lemon_skills.skills.ranking import snapshot as index_cache
from lemon_skills.skills.selection import activation, profiles
from lemon_skills.skills.selection.profiles import Profile
from lemon_skills.telemetry import otel


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


def rank(
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


def admitted(
    v: View, profile: Profile | None, play: activation.InPlay
) -> Callable[[Entry], bool] | None:
    """What a ranking for this agent and these files may return; None when everything."""
    if profile is None and not path_scoped(v):
        return None
    return lambda e: (profile is None or profile.admits(e.key)) and play.admits(e)


def path_scoped(v: View) -> bool:
    scoped = v.memo.get("path_scoped")
    if scoped is None:
        scoped = any(e.paths for e in v.enabled())
        v.memo["path_scoped"] = scoped
    return bool(scoped)


def boost(found: list[ranking.Match], play: activation.InPlay) -> list[ranking.Match]:
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
    return boost(rank(v, query, max_results, semantic, admitted(v, profile, play)), play)


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
    keep = admitted(v, profile, play)
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
