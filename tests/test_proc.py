"""Subprocesses: output captured, failures typed, timeouts kill the whole process group."""

from __future__ import annotations

import sys
import time

import pytest

from lemon_skills import _proc
from lemon_skills.errors import CommandError


def test_output_is_captured():
    done = _proc.run(
        [sys.executable, "-c", "print('out'); import sys; print('err', file=sys.stderr)"]
    )
    assert done.stdout == "out\n" and done.stderr == "err\n"


def test_a_non_zero_exit_raises_with_the_last_stderr_line():
    code = "import sys; print('first', file=sys.stderr); print('why', file=sys.stderr); sys.exit(3)"
    with pytest.raises(CommandError) as err:
        _proc.run([sys.executable, "-c", code])
    assert err.value.returncode == 3
    assert str(err.value).endswith("exited with 3: why")


def test_a_missing_executable_is_a_command_error_not_an_os_error():
    with pytest.raises(CommandError) as err:
        _proc.run(["definitely-not-a-command-here"])
    assert err.value.returncode is None and "cannot run" in err.value.stderr


def test_a_timeout_kills_the_command_and_its_children():
    # The child would keep the pipes open for 30 s if only the parent were killed.
    code = (
        "import subprocess, sys, time;"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']);"
        "time.sleep(30)"
    )
    start = time.monotonic()
    with pytest.raises(CommandError) as err:
        _proc.run([sys.executable, "-c", code], timeout=0.5)
    assert time.monotonic() - start < 10
    assert err.value.returncode is None and "timed out" in str(err.value)


def test_progress_lines_stream_as_they_come_including_carriage_returns():
    code = "import sys; sys.stderr.write('10%\\r50%\\r100%\\ndone\\n')"
    seen: list[str] = []
    _proc.run([sys.executable, "-c", code], on_stderr=seen.append)
    assert seen == ["10%", "50%", "100%", "done"]
