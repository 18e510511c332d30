"""``lemon skill find``, ``eval`` and ``index``: rank skills for a request, measure the ranking,
build the ranking index."""

from __future__ import annotations

import time
from pathlib import Path

import click

from lemon_skills.cli._background import index_later, refresh_later
from lemon_skills.cli._output import (
    agent_option,
    cwd_option,
    emit_json,
    eval_metrics,
    eval_report,
    files_option,
    json_option,
    note,
    queries_option,
    score_parts,
    semantic_option,
    table,
)
from lemon_skills.search.metrics import load_cases
from lemon_skills.skills.ranking.find import Match
from lemon_skills.skills.ranking.tuning import Tuning
from lemon_skills.skills.selection import evaluation, relevance


@click.command("find")
@click.argument("query", nargs=-1, required=True)
@cwd_option
@click.option("--max-results", "-n", default=3, show_default=True, type=click.IntRange(1))
@json_option
@click.option("--explain", is_flag=True, help="Show what each score is made of.")
@semantic_option
@files_option
@agent_option
def find_cmd(
    query: tuple[str, ...],
    cwd: Path | None = None,
    max_results: int = 3,
    as_json: bool = False,
    explain: bool = False,
    semantic: bool | None = None,
    files: tuple[Path, ...] = (),
    agent: str | None = None,
) -> None:
    """Show the skills the agent would be given for QUERY, best first.

    Prints nothing (and says so on stderr) when no skill is relevant. With --explain each
    result lists its score parts: one per matched term (term:STEM, or term:STEM<-typed for a
    typo fix), phrase, exact_name, coverage (share of the query's information matched),
    short_fields (the part from name, keywords, description, headings and usage sections),
    score, and evidence (the plain-IDF score the abstain bar is checked against); with
    --semantic also similarity and the semantic bonus.
    """
    found = relevance.matches(
        " ".join(query),
        cwd=cwd,
        max_results=max_results,
        semantic=semantic,
        files=files,
        agent=agent,
    )
    index_later(cwd)
    refresh_later(cwd)
    if as_json:
        emit_json([_match_dict(m) for m in found])
        return
    if not found:
        note("no skill is relevant to this request")
        if explain:
            _explain_none(" ".join(query), cwd, max_results, semantic, files, agent)
        return
    rows = [[f"{m.score:.2f}", m.entry.key, m.entry.source, m.entry.description] for m in found]
    if not explain:
        table(["SCORE", "KEY", "SOURCE", "DESCRIPTION"], rows)
        return
    for m, row in zip(found, rows, strict=True):
        click.echo(f"{click.style(m.entry.key, bold=True)}  {row[0]}  ({m.entry.source})")
        score_parts(m.parts)


@click.command("index")
@cwd_option
@json_option
@click.option("--quiet", "-q", is_flag=True, help="Print nothing (for background runs).")
@click.option("--if-idle", is_flag=True, help="Do nothing while another --if-idle run builds it.")
def index_cmd(
    cwd: Path | None = None, as_json: bool = False, quiet: bool = False, if_idle: bool = False
) -> None:
    """Build the ranking index of the skills visible here, or update it for what changed,
    and keep it in $LEMON_AGENT_DIR/cache/ranking.

    Every ranking command does this when it needs to; run it after adding many skills so the
    next `find` or `prompt` does not. On a large tree whose index was never built, `find` and
    `prompt` answer from an index focused on their request and run this in the background
    (LEMON_BACKGROUND_INDEX=0 turns that off).
    """
    if not (quiet or as_json):
        note("indexing the skills visible here (about 10 s per 10,000 skills)...")
    start = time.perf_counter()
    count = relevance.build_ranking_index(cwd=cwd, if_idle=if_idle)
    seconds = round(time.perf_counter() - start, 3)
    if as_json:
        emit_json({"skills": count, "seconds": seconds, "skipped": count is None})
    elif quiet:
        return
    elif count is None:
        note("another process is building this index; it is left to finish")
    else:
        note(f"indexed {count} skills in {seconds:.2f} s")


def _explain_none(
    query: str,
    cwd: Path | None,
    max_results: int,
    semantic: bool | None,
    files: tuple[Path, ...],
    agent: str | None,
) -> None:
    """The closest skills and why each stayed under the bar an answer must reach."""
    near, bar = relevance.near_misses(
        query, cwd=cwd, max_results=max_results, semantic=semantic, files=files, agent=agent
    )
    if not near:
        note("no enabled skill holds a word of this request")
        return
    note(f"closest skills (an answer needs evidence of at least {bar:.2f}):")
    for m in near:
        own = m.parts.get("evidence", 0.0) + m.parts.get("semantic", 0.0)
        why = (
            "too few of the request's words, and none in its name"
            if own <= 0
            else f"evidence {own:.2f} is under the bar"
        )
        click.echo(f"{click.style(m.entry.key, bold=True)}  {m.score:.2f}  ({m.entry.source})")
        click.echo(f"  under the bar: {why}")
        score_parts(m.parts)


def _match_dict(m: Match) -> dict[str, object]:
    return {**m.entry.to_dict(), "score": m.score, "parts": dict(m.parts)}


@click.command("eval")
@queries_option("[keys]")
@cwd_option
@click.option(
    "--skills",
    "skills_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Rank only the <key>/SKILL.md folders of this directory (e.g. a skill repository).",
)
@click.option(
    "--max-results", default=10, show_default=True, type=click.IntRange(3), help="Depth for MRR."
)
@click.option(
    "--cv",
    "folds",
    type=click.IntRange(2),
    default=None,
    help="Also report K-fold cross-validation of the ranker's tunable constants.",
)
@json_option
@semantic_option
def eval_cmd(
    queries_file: Path,
    cwd: Path | None = None,
    skills_dir: Path | None = None,
    max_results: int = 10,
    folds: int | None = None,
    as_json: bool = False,
    semantic: bool | None = None,
) -> None:
    """Measure skill retrieval on labelled queries.

    \b
    Prints recall@1 and recall@3 (a query is a hit when any expected key is in the top 1 / 3),
    MRR, none-rejection (share of "expected": [] queries answered with nothing),
    false-rejection (share of targeted queries answered with nothing), recall per kind, and
    every query not answered right. With --cv K also the same figures cross-validated over
    the ranker's tunable constants: each of K folds answered by the setting best on the
    others, i.e. what the constants are worth on queries their choice never saw.
    """
    cases = load_cases(queries_file)
    report = evaluation.evaluate_queries(
        cases, cwd=cwd, skills_dir=skills_dir, max_results=max_results, semantic=semantic
    )
    tuned = None
    if folds is not None:
        tuned = evaluation.cross_validate_queries(
            cases,
            cwd=cwd,
            skills_dir=skills_dir,
            folds=folds,
            max_results=max_results,
            semantic=semantic,
        )
    if as_json:
        data = report.to_dict()
        if tuned is not None:
            data["cv"] = {
                "folds": tuned.folds,
                **tuned.cv.report.to_dict(),
                "picked": [{"setting": s, "folds": n} for s, n in tuned.picked()],
            }
        emit_json(data)
        return
    eval_report(report, noun="skill")
    if tuned is not None:
        _print_cv(tuned)


def _print_cv(t: Tuning) -> None:
    click.echo(f"\n{t.folds}-fold cross-validation over {len(t.settings)} settings")
    eval_metrics(t.cv.report)
    for setting, n in t.picked():
        values = " ".join(f"{k}={v:g}" for k, v in setting.items())
        click.echo(f"  picked by {n} fold(s): {values}")
