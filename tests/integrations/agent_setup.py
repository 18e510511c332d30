"""The world the framework adapter tests run agents in: a skill, a 362-tool MCP server and a
server whose destructive tool leaves a marker, all in the global agent config."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.skills import write_skill

ROOT = Path(__file__).resolve().parents[2]
CORPUS_SERVER = ROOT / "benchmarks" / "_tool_corpus_server.py"
RECORDED = ROOT / "tests" / "data" / "server_tools.jsonl"
MARKER_SERVER = Path(__file__).resolve().parent / "servers" / "marker.py"

SKILL = "kubernetes-deploy"
SKILL_TEXT = "Run helm upgrade --install with the chart in deploy/chart (KUBE-7731)."
REQUEST = "Please deploy the billing service to our kubernetes cluster"
SEARCH = "create a new git branch"
FOUND = "mcp_big_git_create_branch"
FOUND_ARGS = {"repo_path": ".", "branch_name": "feature"}
DESTRUCTIVE = "mcp_ops_drop_table"
BIG_SERVER_TOOLS = 362

_AREAS = (
    "invoice", "calendar", "ticket", "contact", "playlist", "recipe", "warehouse", "flight",
    "payroll", "survey", "coupon", "podcast", "sensor", "lease", "vaccine", "greenhouse",
)  # fmt: skip
_ACTIONS = (
    "create", "archive", "rename", "export", "import", "merge", "split", "approve", "reject",
    "schedule", "cancel", "restore", "share", "tag", "untag", "summarise", "translate", "print",
    "duplicate", "validate",
)  # fmt: skip


@dataclass(frozen=True)
class World:
    marker: Path

    def drops(self) -> list[str]:
        """The lines the destructive tool wrote: one per call that really ran."""
        return self.marker.read_text().splitlines() if self.marker.exists() else []


def big_server_tools(path: Path) -> Path:
    """A tool file for one server ``big``: the 42 recorded tools and 320 made-up ones."""
    lines = []
    for line in RECORDED.read_text(encoding="utf-8").splitlines():
        lines.append(json.dumps(json.loads(line) | {"server": "big"}))
    for area in _AREAS:
        for action in _ACTIONS:
            record = {
                "server": "big",
                "name": f"{area}_{action}",
                "description": (
                    f"{action.capitalize()} a {area} record in the {area} register; returns the "
                    f"updated {area} with its id, owner, status and the time of the change."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": f"The {area} id."},
                        "note": {"type": "string", "description": "Why, for the audit log."},
                    },
                    "required": ["id"],
                },
            }
            lines.append(json.dumps(record))
    assert len(lines) == BIG_SERVER_TOOLS
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_world(tmp_path: Path, agent_dir: Path, global_skills: Path) -> World:
    """The skill, the servers ``big`` (362 tools) and ``ops`` (approve: destructive)."""
    write_skill(
        global_skills,
        SKILL,
        description="Deploy a service to a Kubernetes cluster with Helm charts and kubectl.",
        body=f"## Steps\n\n{SKILL_TEXT}\n",
    )
    marker = tmp_path / "drops.txt"
    tools = big_server_tools(tmp_path / "big_tools.jsonl")
    config = {
        "mcpServers": {
            "big": {
                "command": sys.executable,
                "args": [str(CORPUS_SERVER), "--tools", str(tools), "--server", "big"],
            },
            "ops": {
                "command": sys.executable,
                "args": [str(MARKER_SERVER)],
                "env": {"MARKER_FILE": str(marker)},
                "approve": "destructive",
            },
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    return World(marker)
