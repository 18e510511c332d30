"""``lemon mcp smoke``: the MCP smoke proofs against the bundled fixture servers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from lemon_skills.cli._output import colour, emit_json, note, project_option
from lemon_skills.paths import resolve_cwd


@click.command("smoke")
@click.argument("kind", type=click.Choice(["stdio", "http", "sse"]))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Proof JSON path (default .lemon/proofs/mcp-<kind>-latest.json).",
)
@project_option("Project directory whose .lemon/proofs/ receives the proof (default: current dir).")
@click.option("--json", "as_json", is_flag=True, help="Print the proof JSON instead of a summary.")
def smoke_cmd(
    kind: str, out: Path | None = None, cwd: Path | None = None, as_json: bool = False
) -> int:
    """Run the MCP smoke proof for KIND against the bundled fixture servers.

    \b
    stdio: 17 checks (sampling policies and the ops_approval bridge included)
    http:  24 checks (OAuth discovery, client credentials, refresh, PKCE, token cache,
           loopback sign-in behind an approval) against a fixture authorization server
    sse:   14 checks
    Everything runs on 127.0.0.1 with a throw-away agent dir; exit 1 when a check fails.
    A terminal gets a summary; --json, or a pipe, gets the proof JSON.
    """
    from lemon_skills.selftest import run_smoke, write_proof

    proof = run_smoke(kind)
    paths = write_proof(proof, out=out, cwd=resolve_cwd(cwd))
    # Scripts written before --json read the proof from a pipe; they keep getting it.
    if as_json or not sys.stdout.isatty():
        emit_json(proof)
    else:
        _smoke_summary(proof)
    note("proof written to " + ", ".join(str(p) for p in paths))
    return 1 if proof["status"] == "failed" else 0


def _smoke_summary(proof: dict[str, Any]) -> None:
    click.echo(
        f"{proof['proof']}: {colour(proof['status'], _PROOF_STATE.get(proof['status']))} "
        f"({proof['completed_count']} passed, {proof['failed_count']} failed, "
        f"{proof['skipped_count']} skipped)"
    )
    for c in proof["checks"]:
        if c["status"] != "completed":
            hint = f": {c['failure_hint']}" if c.get("failure_hint") else ""
            click.echo(f"  {colour(c['status'], _PROOF_STATE.get(c['status']))} {c['name']}{hint}")


_PROOF_STATE = {"completed": "pass", "failed": "error", "skipped": "warn", "unknown": "warn"}
