"""How quickly a waiting ``approvals.request`` notices a decision made by another process.

    python benchmarks/approvals_latency.py [ROUNDS]

A child process approves each pending approval as soon as it sees it and records the time of
its commit; the parent measures from that commit to the moment ``request()`` returns.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

CHILD = textwrap.dedent(
    """
    import sys, time
    from lemon_skills.approvals.store import ApprovalStore
    store = ApprovalStore()
    for _ in range(int(sys.argv[1])):
        while not (pending := store.list()):
            time.sleep(0.001)
        store.approve(pending[0].id, by="bench")
        print(time.time(), flush=True)
    """
)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    with tempfile.TemporaryDirectory() as agent:
        os.environ["LEMON_AGENT_DIR"] = agent
        from lemon_skills.approvals.store import ApprovalStore

        store = ApprovalStore()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(rounds)], stdout=subprocess.PIPE, text=True
        )
        woke = []
        for _ in range(rounds):
            store.request("bench", {}, rationale="latency", timeout=30)
            woke.append(time.time())
        decided = [float(line) for line in child.stdout or []]
        child.wait()
    lags = sorted((w - d) * 1000 for w, d in zip(woke, decided, strict=True))
    print(
        f"{rounds} rounds: decision -> waiter wakes  median {statistics.median(lags):.1f} ms, "
        f"p90 {lags[int(len(lags) * 0.9) - 1]:.1f} ms, max {lags[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
