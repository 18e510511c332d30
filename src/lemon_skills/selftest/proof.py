"""The proof JSON of the smoke checks, and the private state the checks run in.

A proof is ``status`` (failed / skipped / completed / unknown), ``proof`` and ``proof_scope``
(``mcp_<kind>_smoke``), ``generated_at``, the three counts, one record per check (a failure
names only the exception type and a path-free message) and the ``cleanup`` flags saying it
holds no raw paths, prompts, provider responses, tool data or server I/O.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lemon_skills._fs import write_json_atomic
from lemon_skills.approvals.records import Approval
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import McpToolError

_CLEANUP = dict.fromkeys(
    (
        "includes_raw_paths",
        "includes_raw_filenames",
        "includes_raw_prompts",
        "includes_raw_provider_responses",
        "includes_raw_tool_arguments",
        "includes_raw_tool_results",
        "includes_server_io",
    ),
    False,
)


class Proof:
    """Collects check records for one proof."""

    def __init__(self, kind: str) -> None:
        self.scope = f"mcp_{kind}_smoke"
        self.checks: list[dict[str, Any]] = []

    def check(self, name: str, fn: Callable[[], None]) -> None:
        """Run ``fn``; any exception is a failed check and the next check still runs."""
        record: dict[str, Any] = {"name": name, "proof_scope": self.scope}
        try:
            fn()
        except Exception as exc:  # a failed check is recorded, and the next one still runs
            record.update(
                status="failed", reason_kind=f"{self.scope}_failure", failure_hint=hint(exc)
            )
        else:
            record["status"] = "completed"
        self.checks.append(record)

    def result(self) -> dict[str, Any]:
        """The proof JSON."""
        counts = {
            s: sum(1 for c in self.checks if c["status"] == s)
            for s in ("completed", "failed", "skipped")
        }
        if counts["failed"]:
            status = "failed"
        elif counts["completed"]:
            status = "completed"
        else:
            status = "skipped" if counts["skipped"] else "unknown"
        return {
            "version": 1,
            "status": status,
            "proof": self.scope,
            "proof_scope": self.scope,
            "generated_at": datetime.now(UTC).isoformat(),
            "completed_count": counts["completed"],
            "failed_count": counts["failed"],
            "skipped_count": counts["skipped"],
            "checks": self.checks,
            "cleanup": dict(_CLEANUP),
        }


def write_proof(proof: dict[str, Any], *, out: Path | None, cwd: Path) -> list[Path]:
    """Write ``proof`` to ``out`` (default ``<cwd>/.lemon/proofs/mcp-<kind>-latest.json``)
    and an archive copy ``mcp-<kind>-smoke-<stamp>.json`` next to it."""
    kind = proof["proof"].removeprefix("mcp_").removesuffix("_smoke")
    target = out if out is not None else cwd / ".lemon" / "proofs" / f"mcp-{kind}-latest.json"
    stamp = re.sub(r"[^0-9A-Za-z]", "", datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ"))
    archive = target.parent / f"mcp-{kind}-smoke-{stamp}.json"
    for path in (target, archive):
        write_json_atomic(path, proof)
    return [target, archive]


@contextlib.contextmanager
def private_state() -> Iterator[Path]:
    """Run the checks against a throw-away agent dir with file-backed secrets.

    The proofs create approvals and store OAuth tokens; none of that may reach the operator's
    real approvals queue, secrets file or keyring.
    """
    keys = ("LEMON_AGENT_DIR", "LEMON_SECRETS_BACKEND")
    saved = {k: os.environ.get(k) for k in keys}
    with tempfile.TemporaryDirectory(prefix="lemon-smoke-") as tmp:
        os.environ["LEMON_AGENT_DIR"] = tmp
        os.environ["LEMON_SECRETS_BACKEND"] = "file"
        try:
            yield Path(tmp)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def wait_for_approval(
    store: ApprovalStore, matches: Callable[[Approval], bool], *, timeout: float
) -> Approval:
    """The first pending approval ``matches`` accepts (polled; the checks play the operator).

    Raises:
        AssertionError: none appeared within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for approval in store.list():
            if matches(approval):
                return approval
        time.sleep(0.02)
    raise AssertionError("no pending approval appeared")


def expect(cond: bool, what: str) -> None:
    """Fail the current check with ``what`` unless ``cond``."""
    if not cond:
        raise AssertionError(what)


def expect_raises(fn: Callable[[], Any], fragment: str) -> None:
    """Fail unless ``fn`` raises an McpToolError whose text has ``fragment``."""
    try:
        fn()
    except McpToolError as exc:
        expect(fragment in str(exc), f"unexpected error: {exc}")
        return
    raise AssertionError("the blocked item was served")


def hint(exc: Exception) -> str:
    """The exception type and its message without file paths (the proof holds no paths)."""
    text = re.sub(r"(/[^\s:'\"]+)+", "<path>", str(exc))[:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
