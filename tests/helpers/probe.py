"""Run ``lemon`` in a new interpreter and report which of some modules it imported.

Start-up tests use it: a module a command has no use for must not cost it import time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

_PROBE = """
import json, sys
from lemon_skills.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in json.loads(sys.stdin.read()) if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def lemon_in_new_process(args: Sequence[str], heavy: Iterable[str]) -> tuple[str, dict[str, Any]]:
    """``lemon ARGS``'s stdout, and ``{"code": exit code, "heavy": the modules of ``heavy``
    it imported}``; the command must succeed."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        input=json.dumps(list(heavy)),
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads(proc.stderr.splitlines()[-1])
