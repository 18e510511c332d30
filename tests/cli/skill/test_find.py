"""``lemon skill find`` and ``lemon skill eval``."""

from __future__ import annotations

import json

import pytest

from lemon_skills.cli import main
from tests.helpers.probe import lemon_in_new_process
from tests.helpers.skills import write_skill


def _skills(root):
    write_skill(root, "kubernetes-deploy", description="Deploy services to Kubernetes clusters.")
    write_skill(root, "release-notes", description="Write release notes from merged PRs.")
    write_skill(root, "postgres-tuning", description="Tune slow PostgreSQL queries and indexes.")


def test_find_prints_the_best_skill(project, project_skills, capsys):
    _skills(project_skills)
    assert main(["skill", "find", "deploy", "to", "kubernetes", "--cwd", str(project)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[1] == "kubernetes-deploy"


def test_find_explain_shows_score_parts(project, project_skills, capsys):
    _skills(project_skills)
    assert main(["skill", "find", "deploy kuberntes", "--explain", "--cwd", str(project)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("kubernetes-deploy")
    assert "term:deploy" in out
    assert "term:kubernet<-kuberntes" in out
    assert "coverage" in out


def test_find_explain_of_an_empty_answer_shows_the_closest_and_why(project, project_skills, capsys):
    _skills(project_skills)
    args = ["skill", "find", "slow weather forecast", "--explain", "--cwd", str(project)]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "no skill is relevant" in err and "an answer needs evidence of at least" in err
    assert out.startswith("postgres-tuning")
    assert "under the bar:" in out and "evidence" in out
    assert main(["skill", "find", "zzzz qqqq", "--explain", "--cwd", str(project)]) == 0
    assert "no enabled skill holds a word of this request" in capsys.readouterr().err


def test_find_json_carries_scores_and_parts(project, project_skills, capsys):
    _skills(project_skills)
    assert main(["skill", "find", "slow postgres", "--json", "-n", "1", "--cwd", str(project)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["key"] for d in data] == ["postgres-tuning"]
    assert data[0]["score"] > 0 and "term:postgr" in data[0]["parts"]


def test_find_with_nothing_relevant_says_so(project, project_skills, capsys):
    _skills(project_skills)
    assert main(["skill", "find", "knitting patterns for scarves", "--cwd", str(project)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no skill is relevant" in captured.err


def test_eval_reports_metrics_and_misses(project, project_skills, tmp_path, capsys):
    _skills(project_skills)
    queries = tmp_path / "q.jsonl"
    lines = [
        {"query": "deploy to kubernetes", "expected": ["kubernetes-deploy"], "kind": "terse"},
        {"query": "changelog for the release", "expected": ["release-notes"], "kind": "paraphrase"},
        {"query": "bake sourdough bread", "expected": [], "kind": "none"},
        {"query": "index my postgres", "expected": ["release-notes"], "kind": "terse"},
    ]
    queries.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    args = ["skill", "eval", "--queries", str(queries), "--cwd", str(project)]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["count"] == 4 and report["none"] == 1
    assert report["recall_at_1"] == 2 / 3
    assert report["none_rejection"] == 1.0
    assert [m["query"] for m in report["misses"]] == ["index my postgres"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "recall@1        0.667" in out
    assert "index my postgres" in out


def test_eval_with_a_bad_queries_file_is_an_error(project, tmp_path, capsys):
    bad = tmp_path / "q.jsonl"
    bad.write_text("{oops\n")
    assert main(["skill", "eval", "--queries", str(bad), "--cwd", str(project)]) == 1
    assert "q.jsonl:1" in capsys.readouterr().err


def test_eval_on_a_plain_skills_directory(tmp_path, capsys):
    repo = tmp_path / "repo"
    _skills(repo)
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"query": "slow postgres", "expected": ["postgres-tuning"], "kind": "terse"})
    )
    args = ["skill", "eval", "--queries", str(queries), "--skills", str(repo), "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["recall_at_1"] == 1.0


def test_eval_on_a_directory_without_skills_is_an_error(tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "x", "expected": []}\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["skill", "eval", "--queries", str(queries), "--skills", str(empty)]) == 1
    assert "no skills in" in capsys.readouterr().err


def test_eval_cv_reports_held_out_figures_of_the_tuning(project, project_skills, tmp_path, capsys):
    _skills(project_skills)
    queries = tmp_path / "q.jsonl"
    lines = [
        {"query": "deploy to kubernetes", "expected": ["kubernetes-deploy"], "kind": "terse"},
        {"query": "kubernetes rollout", "expected": ["kubernetes-deploy"], "kind": "terse"},
        {"query": "release notes from PRs", "expected": ["release-notes"], "kind": "terse"},
        {"query": "slow postgres queries", "expected": ["postgres-tuning"], "kind": "terse"},
        {"query": "bake sourdough bread", "expected": [], "kind": "none"},
        {"query": "tune an old guitar", "expected": [], "kind": "none"},
    ]
    queries.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    args = ["skill", "eval", "--queries", str(queries), "--cwd", str(project), "--cv", "3"]
    assert main([*args, "--json"]) == 0
    cv = json.loads(capsys.readouterr().out)["cv"]
    assert cv["folds"] == 3 and cv["count"] == 6
    assert sum(p["folds"] for p in cv["picked"]) == 3
    assert set(cv["picked"][0]["setting"]) == {"body_df", "coverage_power", "min_score"}
    assert main(args) == 0
    assert "3-fold cross-validation over 36 settings" in capsys.readouterr().out
    assert main([*args[:-1], "9"]) == 1
    assert "at least 9 queries" in capsys.readouterr().err


#: What the first ``skill find`` after a SKILL.md edit (plain frontmatter) has no use for.
EDIT_HEAVY = ("yaml", "tempfile")


@pytest.mark.slow
def test_find_after_an_edit_reparses_plain_frontmatter_without_yaml_or_tempfile(
    project, project_skills
):

    for i in range(70):  # enough skills for the ranking index to be kept on disk
        write_skill(project_skills, f"chore-{i:02d}", description=f"Chore number {i}")
    args = ["skill", "find", "rotate the zebra certificates", "--json", "--cwd", str(project)]

    def find():
        stdout, probe = lemon_in_new_process(args, EDIT_HEAVY)
        return json.loads(stdout), probe

    find()  # writes the manifest cache and the ranking index
    write_skill(project_skills, "chore-07", description="Rotate zebra certificates monthly.")
    found, probe = find()
    assert [m["key"] for m in found][:1] == ["chore-07"]
    assert probe == {"code": 0, "heavy": []}


def _many(root, n=70):
    for i in range(n):
        topic = ("postgres query tuning", "kubernetes deployment", "release notes")[i % 3]
        write_skill(root, f"skill-{i}", description=f"Help with {topic}, variant {i}.")


def test_index_builds_the_ranking_index_and_keeps_it(project, project_skills, capsys):
    from lemon_skills.skills.ranking import snapshot

    _many(project_skills)
    assert main(["skill", "index", "--json", "--cwd", str(project)]) == 0
    assert json.loads(capsys.readouterr().out)["skills"] == 70
    assert list(snapshot.cache_dir().glob("*.idx"))


@pytest.mark.slow
def test_a_first_prompt_on_a_large_tree_leaves_the_index_building_behind(
    project, project_skills, monkeypatch, capsys
):
    import time

    from lemon_skills.skills.ranking import snapshot

    monkeypatch.setattr(snapshot, "FOCUS_MIN", 10)
    _many(project_skills)
    assert main(["prompt", "tune a slow postgres query", "--cwd", str(project)]) == 0
    assert "skill-0" in capsys.readouterr().out
    # The answer came from a focused index; a detached `lemon skill index` builds the full one.
    deadline = time.monotonic() + 60
    while not list(snapshot.cache_dir().glob("*.idx")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(snapshot.cache_dir().glob("*.idx"))


def test_index_if_idle_leaves_a_build_under_way_alone(project, project_skills, capsys):
    from lemon_skills.skills.catalog import registry
    from lemon_skills.skills.ranking import snapshot

    _many(project_skills)
    with snapshot.exclusive(registry.view(project).enabled()) as mine:
        assert mine
        assert main(["skill", "index", "--if-idle", "--json", "--cwd", str(project)]) == 0
        assert json.loads(capsys.readouterr().out)["skipped"] is True
        assert not list(snapshot.cache_dir().glob("*.idx"))
    assert main(["skill", "index", "--if-idle", "--json", "--cwd", str(project)]) == 0
    assert json.loads(capsys.readouterr().out)["skills"] == 70
