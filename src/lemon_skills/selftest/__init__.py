"""``lemon mcp smoke``: the original's MCP smoke checks against the bundled fixture servers.

``run_smoke("stdio")`` runs the 17 stdio checks (the three sampling checks included),
``run_smoke("http")`` the 24 Streamable HTTP checks (OAuth against the fixture authorization
server among them; see ``http.py``) and ``run_smoke("sse")`` the 14 SSE checks. Each returns the
proof JSON (see ``proof.py``). The checks run against a throw-away agent dir, so their approvals
and tokens never reach the operator's real ones. This package sits above ``tools`` (the checks
drive the tool registry too) and ships so that an installed ``lemon`` can prove itself.
"""

from __future__ import annotations

from typing import Any

from lemon_skills.selftest.proof import Proof, private_state, write_proof

__all__ = ["run_smoke", "write_proof"]


def run_smoke(kind: str) -> dict[str, Any]:
    """Run the proof for ``"stdio"``, ``"http"`` or ``"sse"`` and return its JSON."""
    proof = Proof(kind)
    with private_state():
        if kind == "http":
            from lemon_skills.selftest.http import run_http

            run_http(proof)
            return proof.result()
        from lemon_skills.selftest.checks import (
            client_checks,
            degraded,
            fixture_entries,
            initialized_notification,
            source_checks,
        )

        with fixture_entries(kind) as make:
            if kind == "stdio":
                proof.check("mcp_stdio_degraded_startup_missing_command", lambda: degraded(make))
            client_checks(proof, kind, make(kind))
            source_checks(proof, kind, make, server=kind)
            if kind == "stdio":
                from lemon_skills.selftest.sampling import sampling_checks

                proof.check(
                    "mcp_server_accepts_spec_initialized_notification",
                    initialized_notification,
                )
                sampling_checks(proof)
    return proof.result()
