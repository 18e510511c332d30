"""A human operator in another terminal, as a real second process.

``python -m tests.helpers.approval_operator approve|deny [--tool NAME] [--login]`` waits for the
first pending approval (optionally for one tool), prints it as JSON on stdout, optionally plays the
browser (GET the approval's ``authorization_url``, then GET the redirect target, which is the
loopback callback) and finally decides through the ``lemon approvals`` CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import httpx2

from lemon_skills import approvals
from lemon_skills.approvals.records import Approval
from lemon_skills.cli import main as lemon


def wait_for_pending(tool: str | None, timeout: float) -> Approval:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for item in approvals.list_approvals():
            if tool is None or item.tool == tool:
                return item
        time.sleep(0.02)
    raise SystemExit(9)


def login(authorization_url: str) -> None:
    """Be the browser: the AS auto-consents and redirects to the loopback callback."""
    with httpx2.Client(follow_redirects=False, timeout=10) as browser:
        consent = browser.get(authorization_url)
        assert consent.status_code in (302, 303), consent.status_code
        callback = browser.get(consent.headers["location"])
        assert callback.status_code == 200, callback.status_code


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("verb", choices=["approve", "deny"])
    parser.add_argument("--tool")
    parser.add_argument("--login", action="store_true")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    pending = wait_for_pending(args.tool, args.timeout)
    print(json.dumps(pending.to_dict()), flush=True)
    if args.login:
        login(pending.action["authorization_url"])
    return lemon(["approvals", args.verb, pending.id, "--by", "operator"])


def spawn(*args: str) -> subprocess.Popen[str]:
    """Start the operator process with this test's environment (agent dir included)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.approval_operator", *args],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )


def finish(proc: subprocess.Popen[str]) -> dict[str, object]:
    """Wait for the operator; return the approval it saw."""
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, (proc.returncode, out)
    return json.loads(out.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
