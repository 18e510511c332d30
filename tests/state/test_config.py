"""Choosing the backend, showing its URL safely, and naming a project the same everywhere."""

from __future__ import annotations

import json

import pytest

from lemon_skills import settings, state
from lemon_skills.errors import ConfigError
from lemon_skills.state.config import redact
from lemon_skills.state.identity import normalise_remote, project_key
from tests.helpers.git import make_repo


def test_the_variable_wins_over_configure_and_configure_over_the_file(monkeypatch, agent_dir):
    assert state.database() is None
    assert state.backend().kind == "embedded"
    agent_dir.mkdir(parents=True)
    (agent_dir / "state.json").write_text(
        json.dumps({"database_url": "postgresql://file@h/db"}), encoding="utf-8"
    )
    assert state.database().url == "postgresql://file@h/db"
    settings.configure(database_url="postgresql://code@h/db")
    assert state.database().url == "postgresql://code@h/db"
    monkeypatch.setenv("LEMON_DATABASE_URL", "postgresql://env@h/db")
    assert state.backend().kind == "postgresql"
    assert state.database().url == "postgresql://env@h/db"


def test_only_postgresql_urls_are_accepted(monkeypatch):
    monkeypatch.setenv("LEMON_DATABASE_URL", "mysql://root:pw@h/db")
    with pytest.raises(ConfigError, match=r"unsupported state database URL mysql://root:\*\*\*@h"):
        state.database()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://u:secret@db:5432/x?sslmode=require",
            "postgresql://u:***@db:5432/x?sslmode=require",
        ),
        ("postgresql://u@db/x", "postgresql://u@db/x"),
        ("postgresql:///x?host=/run/pg", "postgresql:///x?host=/run/pg"),
    ],
)
def test_a_url_is_shown_without_its_password(url, shown):
    assert redact(url) == shown


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:Acme/app.git",
        "https://github.com/Acme/app",
        "https://ci:token@GitHub.com/Acme/app.git/",
        "ssh://git@github.com:22/Acme/app.git",
    ],
)
def test_every_spelling_of_a_remote_names_one_project_without_credentials(remote):
    assert normalise_remote(remote) == "github.com/Acme/app"


def test_a_project_without_a_remote_is_its_root_commit_and_outside_git_its_path(tmp_path):
    repo = tmp_path / "repo"
    root = make_repo(repo, {"f": "x"}).head()
    (repo / "services" / "api").mkdir(parents=True)
    assert project_key(repo) == f"commit:{root}"
    assert project_key(repo / "services" / "api") == f"commit:{root}//services/api"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_key(plain) == f"path:{plain.resolve()}"
