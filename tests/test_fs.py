from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from lemon_skills import _fs
from lemon_skills.errors import ConfigError


def test_write_json_atomic_replaces_whole_file(tmp_path):
    path = tmp_path / "d" / "state.json"
    _fs.write_json_atomic(path, {"version": 1, "a": 1})
    _fs.write_json_atomic(path, {"version": 1, "b": 2})
    assert json.loads(path.read_text("utf-8")) == {"version": 1, "b": 2}
    assert [p.name for p in path.parent.iterdir()] == ["state.json"]


def test_write_with_mode(tmp_path):
    path = tmp_path / "secret.json"
    _fs.write_json_atomic(path, {}, mode=0o600)
    assert path.stat().st_mode & 0o777 == 0o600


def test_read_json_missing_gives_default_and_corrupt_raises(tmp_path):
    assert _fs.read_json(tmp_path / "none.json", default=lambda: {"version": 1}) == {"version": 1}
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", "utf-8")
    with pytest.raises(ConfigError, match="corrupt JSON") as err:
        _fs.read_json(bad, default=dict)
    assert err.value.path == bad
    bad.write_text("[1, 2]", "utf-8")
    with pytest.raises(ConfigError, match="JSON object"):
        _fs.read_json(bad, default=dict)


def test_update_json_does_not_write_when_unchanged(tmp_path):
    path = tmp_path / "s.json"
    _fs.update_json(path, lambda s: None, default=lambda: {"version": 1})
    assert not path.exists()


def test_failed_write_leaves_original_and_no_temp(tmp_path):
    path = tmp_path / "d" / "s.json"
    _fs.write_json_atomic(path, {"version": 1, "keep": True})
    with pytest.raises(TypeError):
        _fs.write_json_atomic(path, {"bad": object()})
    assert json.loads(path.read_text("utf-8")) == {"version": 1, "keep": True}
    assert sorted(p.name for p in path.parent.iterdir()) == ["s.json"]


def _bump(path: str, times: int) -> None:
    def change(state):
        state["n"] = state.get("n", 0) + 1

    for _ in range(times):
        _fs.update_json(_Path(path), change, default=lambda: {"version": 1})


def _Path(p):  # noqa: N802 - a picklable constructor for the child processes
    from pathlib import Path

    return Path(p)


@pytest.mark.slow
def test_concurrent_processes_lose_no_update(tmp_path):
    path = tmp_path / "counter.json"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump, args=(str(path), 50)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert json.loads(path.read_text("utf-8"))["n"] == 200
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".lemon-tmp")]


def _hold_scratch(root: str, ready) -> None:  # a writer that gets killed mid-write
    import time

    with _fs.scratch_dir(_Path(root), ".staging-victim-"):
        fd, _ = __import__("tempfile").mkstemp(suffix=_fs.TEMP_SUFFIX, dir=root)
        _fs._claim(fd, _)
        ready.set()
        time.sleep(60)


def test_the_next_write_sweeps_what_a_killed_writer_left_however_young(tmp_path):
    import signal

    tmp_path = tmp_path / "dir"
    tmp_path.mkdir()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    victim = ctx.Process(target=_hold_scratch, args=(str(tmp_path), ready))
    victim.start()
    assert ready.wait(30)
    with _fs.scratch_dir(tmp_path, ".staging-live-"):
        live = sorted(p.name for p in tmp_path.iterdir())
        _fs.write_json_atomic(tmp_path / "s.json", {"a": 1})  # the victim is still alive
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*live, "s.json"])
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        _fs.write_json_atomic(tmp_path / "s.json", {"a": 2})
        left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and left[0].startswith(".staging-live-") and left[1] == "s.json"


def test_a_non_empty_backup_is_kept_for_a_day(tmp_path):
    tmp_path = tmp_path / "dir"
    (tmp_path / ".backup-a-1" / "a").mkdir(parents=True)
    (tmp_path / ".backup-b-2").mkdir()
    _fs.write_json_atomic(tmp_path / "s.json", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == [".backup-a-1", "s.json"]
