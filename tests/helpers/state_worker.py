"""One of many processes hammering the shared state: ``python -m tests.helpers.state_worker N
TAG`` asks, approves and counts ``N`` times (``LEMON_DATABASE_URL`` names the database)."""

from __future__ import annotations

import sys

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.skills.usage.store import UsageStore


def main() -> None:
    rounds, tag = int(sys.argv[1]), sys.argv[2]
    approvals = ApprovalStore()
    usage = UsageStore.for_scope("global")
    for i in range(rounds):
        asked = approvals.create("stress", {"worker": tag, "i": i}, rationale="stress")
        approvals.approve(asked.id, by=tag)
        usage.record_load({"key": "shared", "result": "ok", "run_id": tag})
        usage.record_write({"name": "shared", "result": "ok", "action": "edit", "agent_id": tag})
    print("done", tag)


if __name__ == "__main__":
    main()
