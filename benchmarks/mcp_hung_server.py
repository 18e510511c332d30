"""`lemon mcp call` with one hung server in a five-server config against the same call without it.

    python benchmarks/mcp_hung_server.py [--repeat 7]

A project config holds four fixture servers (the bundled SDK server) and, in the "hung" case, a
fifth that never answers ``initialize`` (default ready timeout: 20 s). Each run is a fresh
``lemon mcp call mcp_good_echo`` process; the two configs are run interleaved and compared by
their medians. Target: hung / without at most 1.2x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HANG = HERE.parent / "tests" / "mcp" / "servers" / "broken.py"
LEMON = [sys.executable, "-m", "lemon_skills"]


def config(hung: bool) -> dict[str, Any]:
    fixture = ["-m", "lemon_skills.selftest.fixtures.server"]
    servers = [
        {"name": name, "command": sys.executable, "args": fixture}
        for name in ("good", "alpha", "beta", "gamma")
    ]
    if hung:
        servers.append({"name": "hung", "command": sys.executable, "args": [str(HANG), "hang"]})
    return {"servers": servers}


def project(root: Path, hung: bool) -> Path:
    path = root / ("hung" if hung else "clean")
    (path / ".lemon").mkdir(parents=True)
    (path / ".lemon" / "mcp.json").write_text(json.dumps(config(hung)), encoding="utf-8")
    return path


def one_call(cwd: Path, env: dict[str, str]) -> float:
    cmd = [*LEMON, "mcp", "call", "mcp_good_echo", "--args", '{"message": "x"}', "--cwd", str(cwd)]
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t
    if done.returncode != 0 or "echo:x" not in done.stdout:
        raise SystemExit(f"call failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = dict(os.environ, HOME=str(root / "home"), LEMON_AGENT_DIR=str(root / "agent"))
        env["LEMON_TRUST_PROJECT_MCP"] = "1"  # the two projects are this script's own
        env.pop("LEMON_MCP_SERVERS", None)
        clean, hung = project(root, False), project(root, True)
        one_call(clean, env)  # warm the interpreter's file caches
        times: dict[str, list[float]] = {"without": [], "hung": []}
        for _ in range(opts.repeat):
            times["without"].append(one_call(clean, env))
            times["hung"].append(one_call(hung, env))
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(f"{k:8s} median {med[k] * 1000:7.0f} ms  runs: {[round(x * 1000) for x in v]}")
    print(f"ratio hung/without: {med['hung'] / med['without']:.3f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
