"""The usage sidecar under real concurrent processes and SIGKILL.

These tests check lost updates and torn reads, not durability against power loss, so the
hot-loop ones keep their sidecar on tmpfs when the machine has one: the code path is the same
(lock, re-read, temp file, fsync, rename) but fsync does not wait for a shared disk.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lemon_skills import introspection
from lemon_skills.skills.usage.store import UsageStore
from tests.helpers.skills import write_skill

#: Many processes hammering one sidecar: run by .ci/run (pytest -m slow), not by default.
pytestmark = pytest.mark.slow

WORKER = Path(__file__).parents[2] / "helpers" / "usage_worker.py"
ROOT = Path(__file__).parents[3]


def spawn(mode: str, arg: Path, n: int = 0, **kw: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(  # noqa: S603
        [sys.executable, str(WORKER), mode, str(arg), str(n)],
        env=env,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A directory on tmpfs (``/dev/shm``) when available, else ``tmp_path``."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="lemon-usage-", dir=shm))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def load_count(path: Path) -> int:
    return json.loads(path.read_bytes())["skills"]["shared"]["load_count"]


class Poller(threading.Thread):
    """Reads the sidecar in a loop, counting reads that were not valid JSON."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.stop, self.reads, self.torn = path, threading.Event(), 0, []

    def run(self) -> None:
        while not self.stop.wait(0.002):  # poll often, but leave the CPUs to the writers
            try:
                raw = self.path.read_bytes()
            except FileNotFoundError:
                continue
            self.reads += 1
            try:
                json.loads(raw)
            except ValueError:
                self.torn.append(raw)


def test_eight_processes_lose_no_load_and_readers_never_see_a_torn_file(scratch):
    sidecar = scratch / "skills.usage.json"
    poller = Poller(sidecar)
    poller.start()
    procs = [spawn("loads", sidecar, 500) for _ in range(8)]
    codes = [p.wait(timeout=110) for p in procs]
    poller.stop.set()
    poller.join()
    assert codes == [0] * 8
    assert load_count(sidecar) == 4000
    assert poller.reads > 0 and poller.torn == []


def test_sigkill_inside_the_atomic_write_leaves_the_previous_sidecar(tmp_path):
    sidecar = tmp_path / "skills.usage.json"
    store = UsageStore(sidecar)
    store.record_load({"result": "ok", "key": "shared"})
    before = sidecar.read_bytes()
    child = spawn("hang", sidecar, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline().strip() == "in-write"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()
    assert sidecar.read_bytes() == before
    store.record_load({"result": "ok", "key": "shared"})  # the dead writer's lock is gone
    assert load_count(sidecar) == 2


def test_sigkill_at_arbitrary_moments_never_corrupts_the_sidecar(scratch):
    sidecar = scratch / "skills.usage.json"
    seen = 0
    for target in (5, 40, 120):
        child = spawn("loop", sidecar)
        while True:  # wait for progress, then kill wherever the writer happens to be
            assert child.poll() is None, "the writer died on its own"
            try:
                count = load_count(sidecar)
            except (FileNotFoundError, KeyError):
                continue
            if count >= seen + target:
                break
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        count = load_count(sidecar)  # parses: never torn
        assert count >= seen + target
        seen = count
    UsageStore(sidecar).record_load({"result": "ok", "key": "shared"})
    assert load_count(sidecar) == seen + 1


def test_concurrent_read_skill_calls_count_every_load_and_persist_every_event(
    project, global_skills, agent_dir
):
    write_skill(global_skills, "shared")
    procs = [spawn("read_skill", project, 25) for _ in range(4)]
    assert [p.wait(timeout=110) for p in procs] == [0] * 4
    assert load_count(agent_dir / "skills.usage.json") == 100
    rows = introspection.IntrospectionStore(agent_dir / "introspection.db").query()
    assert len(rows) == 100
    assert {r.type for r in rows} == {"skill_load_observed"}
    assert len({r.payload["tool_call_id"] for r in rows}) == 100
