from __future__ import annotations

import json

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.skills.install import lockfile


def test_missing_lock_reads_as_empty_and_removing_from_it_writes_nothing(tmp_path):
    path = tmp_path / "skills.lock.json"
    assert lockfile.read_lock(path) == {"version": 1, "skills": {}}
    assert lockfile.put(path, "pdf", None) is None
    assert not path.exists()


def test_put_returns_the_replaced_record_so_a_failed_install_can_restore_it(tmp_path):
    path = tmp_path / "skills.lock.json"
    assert lockfile.put(path, "pdf", {"commit": "a"}) is None
    assert lockfile.put(path, "pdf", {"commit": "b"}) == {"commit": "a"}
    assert lockfile.records(path) == {"pdf": {"commit": "b"}}
    assert lockfile.put(path, "pdf", None) == {"commit": "b"}
    assert json.loads(path.read_text("utf-8")) == {"version": 1, "skills": {}}


def test_records_skip_entries_that_are_not_objects(tmp_path):
    path = tmp_path / "skills.lock.json"
    path.write_text(json.dumps({"version": 1, "skills": {"a": {"x": 1}, "b": "junk"}}), "utf-8")
    assert lockfile.records(path) == {"a": {"x": 1}}


def test_corrupt_lock_raises_and_is_left_untouched(tmp_path):
    path = tmp_path / "skills.lock.json"
    path.write_text('{"version": 1, "skills": []}', "utf-8")
    with pytest.raises(ConfigError, match="skills"):
        lockfile.read_lock(path)
    with pytest.raises(ConfigError):
        lockfile.put(path, "pdf", {"commit": "a"})
    assert path.read_text("utf-8") == '{"version": 1, "skills": []}'


def test_lock_path_is_in_the_scope_root(project):
    assert lockfile.lock_path("project", project) == project / ".lemon" / "skills.lock.json"
