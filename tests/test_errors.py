"""One exception tree: every domain error is a LemonSkillsError with a complete message."""

from __future__ import annotations

import inspect
from pathlib import Path

from lemon_skills import errors


def test_every_public_error_is_a_lemon_skills_error():
    classes = [
        c
        for name, c in inspect.getmembers(errors, inspect.isclass)
        if issubclass(c, Exception) and c.__module__ == errors.__name__ and not name.startswith("_")
    ]
    assert len(classes) > 10
    # UsageError is a caller's mistake (a RuntimeError), documented as outside the tree.
    outside = {c.__name__ for c in classes if not issubclass(c, errors.LemonSkillsError)}
    assert outside <= {"UsageError"}


def test_messages_name_the_file_and_keep_the_fields():
    err = errors.ConfigError("not JSON", path=Path("/x/skills.json"), hint="move it away")
    assert str(err) == "/x/skills.json: not JSON"
    assert (err.path, err.reason, err.hint) == (Path("/x/skills.json"), "not JSON", "move it away")
    bad = errors.ManifestError("bad YAML", path=Path("SKILL.md"), field="name")
    assert str(bad) == "SKILL.md (field 'name'): bad YAML"


def test_a_missing_skill_suggests_close_keys_or_how_to_look():
    assert errors.SkillNotFound("pdf", suggestions=["pdf-tools"]).hint == "did you mean pdf-tools?"
    assert "lemon skill list" in (errors.SkillNotFound("zzz").hint or "")


def test_a_failed_command_says_what_ran_and_why():
    err = errors.CommandError(
        ["git", "clone", "url", "dest"], returncode=128, stderr="a\nfatal: no\n"
    )
    assert str(err) == "`git clone url` exited with 128: fatal: no"
    assert str(errors.CommandError(["git"], returncode=None)) == "`git` timed out"
    advice = "fatal: '/x' does not appear to be a git repository\nfatal: Could not read\n\n"
    advice += "Please make sure you have the correct access rights\nand the repository exists.\n"
    missing = errors.CommandError(["git", "clone", "file:///x"], returncode=128, stderr=advice)
    assert str(missing).endswith(": fatal: '/x' does not appear to be a git repository")
