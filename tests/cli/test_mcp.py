from __future__ import annotations

from lemon_skills.cli import main
from tests.helpers.skills import write_skill


def test_serve_check_says_what_is_served_renamed_and_refused(project, project_skills, capsys):
    write_skill(project_skills, "pdf")
    write_skill(project_skills, "burp-testing", name="Burp Suite Testing")
    write_skill(project_skills, "___", name="Only Symbols")
    assert main(["mcp", "serve", "--check", "--cwd", str(project)]) == 1
    out = capsys.readouterr().out
    assert "2 skills served" in out
    assert "burp-testing: 'Burp Suite Testing' as 'burp-testing'" in out
    assert "1 not served:" in out and "___: its name 'Only Symbols' breaks" in out


def test_serve_check_succeeds_when_every_skill_is_served(project, project_skills, capsys):
    write_skill(project_skills, "pdf")
    assert main(["mcp", "serve", "--check", "--cwd", str(project)]) == 0
    assert capsys.readouterr().out.strip() == "1 skills served"
