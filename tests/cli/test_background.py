"""The background index build: never imports from the caller's directory, one at a time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lemon_skills.cli._background import index_later
from lemon_skills.skills import api
from lemon_skills.skills.ranking import snapshot
from lemon_skills.skills.selection import relevance
from tests.helpers.skills import write_skill

_PAYLOAD = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\n"


def _spawned_children(needle: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rpartition(")")[2].split()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and needle.encode() in argv:
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the spawned build in /proc")
def test_the_build_imports_no_lemon_skills_package_from_the_callers_directory(
    project, project_skills, tmp_path, monkeypatch
):
    marker = tmp_path / "marker"
    write_skill(project_skills, "deploy")
    hostile = project / "lemon_skills"
    hostile.mkdir()
    for name in ("__init__.py", "__main__.py"):
        (hostile / name).write_text(_PAYLOAD.format(marker=str(marker)), encoding="utf-8")
    # The payload is live: a plain `python -m lemon_skills` started in the project runs it.
    subprocess.run(
        [sys.executable, "-m", "lemon_skills", "--version"],
        cwd=project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert marker.exists()
    marker.unlink()

    monkeypatch.chdir(project)
    monkeypatch.setattr(relevance, "claim_background_index", lambda cwd=None: True)
    index_later(None)
    pids = _spawned_children("--if-idle")
    assert len(pids) == 1
    _, status = os.waitpid(pids[0], 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not marker.exists()


def test_a_build_is_claimed_once_until_it_ends_or_goes_stale(project, project_skills):
    write_skill(project_skills, "deploy")
    entries = api.view(project).enabled()
    assert snapshot.claim_build(entries)
    assert not snapshot.claim_build(entries)
    assert snapshot.claim_build(entries, now=time.time() + snapshot.CLAIM_STALE_S + 1)
    snapshot.release_build(entries)
    assert snapshot.claim_build(entries)


_CLAIM = """
import sys, time
from lemon_skills.skills import api
from lemon_skills.skills.ranking import snapshot
entries = api.view(sys.argv[1]).enabled()
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
print(snapshot.claim_build(entries))
"""


@pytest.mark.slow
def test_parallel_commands_claim_one_build(project, project_skills):
    write_skill(project_skills, "deploy")
    start = time.time() + 3.0
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CLAIM, str(project), str(start)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    answers = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(answers) == ["False"] * 5 + ["True"]
