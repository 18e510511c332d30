"""How well ``find_relevant`` ranks: labelled queries measured (``search.metrics``) and the
ranker's tunable constants cross-validated (``ranking.tuning``), on the skills visible from a
directory or on a skill repository before it is installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lemon_skills.errors import ConfigError
from lemon_skills.paths import PathArg
from lemon_skills.search import metrics
from lemon_skills.skills.catalog import discovery
from lemon_skills.skills.catalog.registry import view
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import semantic as semantic_mod
from lemon_skills.skills.ranking import tuning
from lemon_skills.skills.selection import relevance


def evaluate_queries(
    cases: Sequence[metrics.Case],
    *,
    cwd: PathArg = None,
    skills_dir: PathArg = None,
    max_results: int = 10,
    semantic: bool | None = None,
) -> metrics.Report:
    """Run ``find_relevant`` on labelled queries and measure it (see ``search.metrics``).

    With ``skills_dir`` the skills are the ``<key>/SKILL.md`` folders of that directory alone
    (a skill repository, before installing it) instead of those visible from ``cwd``.

    Raises:
        ConfigError: ``skills_dir`` holds no skill.
    """
    if skills_dir is None:
        v = view(cwd)
        return metrics.evaluate(
            cases, lambda q: [m.entry.key for m in relevance.rank(v, q, max_results, semantic)]
        )
    entries = _entries_in(Path(skills_dir))
    index = ranking.build_index(entries)
    use = semantic_mod.requested(semantic)
    sim = semantic_mod.Similarity(entries, core=index.core) if use else None
    floor = index.weights.semantic_floor

    def rank(q: str) -> list[str]:
        similar = sim(q, floor=floor) if sim is not None else None
        return [m.entry.key for m in ranking.rank(index, q, limit=max_results, similar=similar)]

    return metrics.evaluate(cases, rank)


def cross_validate_queries(
    cases: Sequence[metrics.Case],
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
