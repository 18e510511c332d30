from __future__ import annotations

import lemon_skills
from lemon_skills.skills.prompt import render
from tests.helpers.skills import write_skill


def seed(project_skills):
    write_skill(
        project_skills,
        "database",
        description="Use for database migrations and SQL",
        body="## Migrations\n\nAlways write a down migration.\n",
    )
    write_skill(project_skills, "react", description="Build React components and hooks")
    write_skill(project_skills, "k8s", description="Debug Kubernetes pods with kubectl")
    write_skill(project_skills, "api", description="Design REST endpoints and status codes")


def test_prompt_contains_relevant_content_and_catalogue(project, project_skills):
    seed(project_skills)
    out = lemon_skills.render_prompt("write database migrations", cwd=project)
    assert out.relevant == ("database",)
    assert "Always write a down migration." in out.text
    assert "<available_skills>" in out.text
    assert set(out.listed) == {"react", "k8s", "api"}
    assert out.omitted == ()


def test_metadata_mode_leaves_out_bodies(project, project_skills):
    seed(project_skills)
    out = lemon_skills.render_prompt("database migrations", cwd=project, mode="metadata")
    assert out.relevant == ("database",)
    assert "Always write a down migration." not in out.text
    assert "Use for database migrations and SQL" in out.text


def test_budget_cuts_are_named_never_silent(project, project_skills):
    for i in range(60):
        write_skill(project_skills, f"skill-{i:02d}", description="word " * 40)
    out = lemon_skills.render_prompt("nothing matches zzz", cwd=project, budget=700)
    assert len(out.text) <= 700
    assert out.omitted, "something must have been left out at this budget"
    assert set(out.listed) | set(out.omitted) == {f"skill-{i:02d}" for i in range(60)}
    assert any("left out for budget" in d for d in out.diagnostics)


def test_long_relevant_body_is_truncated_with_pointer(project, project_skills):
    seed(project_skills)
    write_skill(
        project_skills,
        "database",
        description="Use for database migrations and SQL",
        body="line of guidance\n" * 2000,
    )
    out = lemon_skills.render_prompt("database migrations", cwd=project, budget=4000)
    assert out.truncated == ("database",)
    assert "read_skill" in out.text and len(out.text) <= 4000


def test_disable_model_invocation_and_incompatible_skills_are_not_offered(project, project_skills):
    seed(project_skills)
    write_skill(
        project_skills,
        "manual-only",
        description="Deploy database migrations manually",
        extra="disable-model-invocation: true",
    )
    write_skill(
        project_skills,
        "other-os",
        description="database helper",
        extra="platforms: [beos, win32]"
        if __import__("sys").platform != "win32"
        else "platforms: [linux]",
    )
    out = lemon_skills.render_prompt("database migrations", cwd=project)
    assert "manual-only" not in out.text
    assert "other-os" not in out.text


def test_xml_is_escaped(project, project_skills):
    write_skill(project_skills, "esc", description='Use <b> & "quotes"')
    out = lemon_skills.render_prompt("zzz", cwd=project)
    assert "Use &lt;b&gt; &amp; &quot;quotes&quot;" in out.text


def test_no_skills_renders_nothing():
    out = render([], [])
    assert out.text == "" and out.listed == ()


def test_project_skills_are_listed_before_global(project, project_skills, global_skills):
    write_skill(global_skills, "aaa-global", description="global one")
    write_skill(project_skills, "zzz-project", description="project one")
    out = lemon_skills.render_prompt("qqq", cwd=project)
    assert out.listed == ("zzz-project", "aaa-global")


def test_weak_runners_up_stay_in_the_catalogue_not_in_the_prompt(project, project_skills):
    write_skill(
        project_skills,
        "database",
        description="Use for reversible SQL migrations that add or alter database tables",
        body="## Migrations\n\nAlways write a down migration.\n",
    )
    write_skill(
        project_skills,
        "api",
        description="Design REST endpoints and status codes",
        body="## Orders\n\nThe orders endpoint pages results.\n",
    )
    write_skill(project_skills, "react", description="Build React components and hooks")
    query = "add a reversible migration for the orders table"
    found = [e.key for e in lemon_skills.find_relevant(query, cwd=project)]
    assert found == ["database", "api"]  # the body mention of "orders" makes api a runner-up
    out = lemon_skills.render_prompt(query, cwd=project)
    assert out.relevant == ("database",)
    assert "The orders endpoint pages results." not in out.text
    assert "api" in out.listed


def test_skills_the_audit_blocked_are_not_offered(project, project_skills):
    import json

    seed(project_skills)
    lock = project / ".lemon" / "skills.lock.json"
    lock.write_text(
        json.dumps({"version": 1, "skills": {"react": {"audit": {"verdict": "block"}}}}), "utf-8"
    )
    out = lemon_skills.render_prompt("build react components and hooks", cwd=project)
    assert "react" not in out.relevant and "react" not in out.listed
    assert "<name>react</name>" not in out.text


def test_the_contract_name_renders_the_same_block(project, project_skills):
    from lemon_skills import prompt

    seed(project_skills)
    out = prompt.render("write database migrations", cwd=project, budget=prompt.DEFAULT_BUDGET)
    assert isinstance(out, prompt.RenderedPrompt)
    assert out == lemon_skills.render_prompt("write database migrations", cwd=project)


def test_a_catalogue_without_matches_does_not_claim_they_matched(project, project_skills):
    seed(project_skills)
    matched = lemon_skills.render_prompt("write database migrations", cwd=project)
    assert "matched the request" in matched.text
    none = lemon_skills.render_prompt("knit a scarf for winter", cwd=project)
    assert none.relevant == ()
    assert "<relevant_skills>" not in none.text
    assert "matched the request" not in none.text
    assert "None was matched to this request" in none.text
    assert "<available_skills>" in none.text


def _many(project_skills, n=300):
    for i in range(n):
        write_skill(
            project_skills,
            f"a{i:03d}-tool",
            description=f"Helper number {i} for assorted chores, described at some length. " * 2,
        )
    write_skill(
        project_skills,
        "zz-kubernetes-debugging",
        description="Debug crash-looping Kubernetes pods with kubectl logs and events.",
    )


def test_the_catalogue_puts_the_closest_skills_first_and_names_the_rest(project, project_skills):
    _many(project_skills)
    out = lemon_skills.render_prompt(
        "my kubernetes pods are crash-looping", cwd=project, max_results=0, budget=8000
    )
    assert "<name>zz-kubernetes-debugging</name><description>" in out.text
    assert out.text.count("<other_skills>") == 1
    assert out.omitted == ()  # every other skill is at least named
    assert out.diagnostics == [f"{len(out.shortened)} catalogue descriptions shortened for budget"]


def test_matches_left_out_for_budget_are_named_not_denied(project, project_skills):
    _many(project_skills, 20)
    out = lemon_skills.render_prompt(
        "my kubernetes pods are crash-looping", cwd=project, budget=200
    )
    assert "zz-kubernetes-debugging" in out.omitted
    assert "None was matched" not in out.text
    assert "left out for budget" in out.text and "zz-kubernetes-debugging" in out.text
    assert any(d.startswith(f"{len(out.omitted)} skills left out") for d in out.diagnostics)


def test_skills_missing_a_binary_are_listed_without_any_path_lookup(
    project, project_skills, monkeypatch
):
    import shutil

    seed(project_skills)
    write_skill(
        project_skills, "tf", description="Plan terraform changes", extra="requires:\n  bins: [tf]"
    )

    def no_lookup(name, *args, **kwargs):
        raise AssertionError(f"a render looked up {name} on PATH")

    monkeypatch.setattr(shutil, "which", no_lookup)
    out = lemon_skills.render_prompt("zzz", cwd=project)
    assert "tf" in out.listed  # not ready yet is still offered; readiness is read on use


def test_a_second_render_checks_no_skill_again(project, project_skills, monkeypatch):
    from lemon_skills.skills import api
    from lemon_skills.skills.selection import offer

    seed(project_skills)
    other = "win32" if __import__("sys").platform != "win32" else "linux"
    write_skill(project_skills, "win", description="Elsewhere", extra=f"platforms: [{other}]")
    write_skill(
        project_skills, "needs", description="Needs a skill", extra="requires:\n  skills: [gone]"
    )
    first = lemon_skills.render_prompt("zzz", cwd=project)
    calls = []
    for module, name in ((api, "evaluate"), (offer, "offerable")):
        real = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _real=real, **k: calls.append(a) or _real(*a, **k)
        )
    second = lemon_skills.render_prompt("zzz", cwd=project)
    assert calls == []
    assert second == first and {"win", "needs"}.isdisjoint(second.listed)


def test_the_kept_catalogue_follows_lock_verdicts_and_configured_servers(project, project_skills):
    import json

    from lemon_skills import settings

    seed(project_skills)
    write_skill(
        project_skills, "gh", description="GitHub issues", extra="requires:\n  mcp_servers: [gh]"
    )
    settings.configure(mcp_server_names=lambda cwd: [])
    try:
        assert "gh" not in lemon_skills.render_prompt("zzz", cwd=project).listed
        settings.configure(mcp_server_names=lambda cwd: ["gh"])
        assert "gh" in lemon_skills.render_prompt("zzz", cwd=project).listed
    finally:
        settings.configure(mcp_server_names=None)
    lock = project / ".lemon" / "skills.lock.json"
    lock.write_text(
        json.dumps({"version": 1, "skills": {"react": {"audit": {"verdict": "block"}}}}), "utf-8"
    )
    assert "react" not in lemon_skills.render_prompt("zzz", cwd=project).listed


def _entries(n):
    from lemon_skills.skills.format.model import Entry

    return [
        Entry(
            key=f"s{i:05d}",
            name=f"s{i:05d}",
            description="A skill described at some length for the catalogue. " * 3,
            source="project" if i % 3 else "global",
            path=f"/skills/s{i:05d}",
        )
        for i in range(n)
    ]


def test_a_render_over_a_kept_catalogue_reads_only_the_skills_it_shows(monkeypatch):
    from lemon_skills.skills import prompt

    entries = _entries(5_000)
    catalogue = prompt.Catalogue.of(entries)
    expected = render([], entries, budget=4_000, near=["s04999"])
    escaped = []
    real = prompt.escape
    monkeypatch.setattr(prompt, "escape", lambda t: escaped.append(t) or real(t))
    out = render([], catalogue, budget=4_000, near=["s04999"])
    assert out == expected and out.listed[0] == "s04999"
    assert len(out.listed) + len(out.omitted) == 5_000
    # What the ~470 skills it shows or names need (the first few lines twice), not 5,000.
    assert len(out.listed) < 500 and len(escaped) < 1.2 * len(out.listed)


def test_a_kept_catalogue_renders_as_the_list_it_was_built_from():
    import random

    from lemon_skills.skills import prompt

    rng = random.Random(7)
    entries = _entries(400)
    for trial in range(60):
        relevant = rng.sample(entries, rng.choice([0, 1, 3]))
        near = [e.key for e in rng.sample(entries, rng.choice([0, 5, 20]))]
        budget = rng.choice([300, 2_000, 9_000, 120_000])
        shuffled = rng.sample(entries, len(entries))
        kept = prompt.Catalogue.of(shuffled).without(["s00010"])
        listed = [e for e in shuffled if e.key != "s00010"]
        assert render(relevant, kept, budget=budget, near=near) == render(
            relevant, listed, budget=budget, near=near
        ), trial
