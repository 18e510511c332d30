"""``lemon prompt``: the skills (and with ``--tools`` the MCP tools) an agent would be given
for a request."""

from __future__ import annotations

import json

import pytest

from lemon_skills.cli import main
from tests.helpers.probe import lemon_in_new_process
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.usefixtures("trusted_projects")


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prompt_command(capsys, project, project_skills):
    write_skill(project_skills, "database", description="Use for database migrations and SQL")
    write_skill(project_skills, "react", description="Build React components and hooks")
    write_skill(project_skills, "k8s", description="Debug Kubernetes pods with kubectl")
    code, out, err = run(capsys, "prompt", "database migrations", "--cwd", str(project))
    assert code == 0 and "<relevant_skills>" in out and "relevant: database" in err
    code, out, _ = run(capsys, "prompt", "database migrations", "--json", "--cwd", str(project))
    assert json.loads(out)["relevant"] == ["database"]


def test_prompt_with_tools_sends_the_fitting_tools_and_tool_search(configured, capsys):
    args = ("--tools", "--json", "--cwd", str(configured))
    code, out, _ = run(capsys, "prompt", "structured weather for a city", *args)
    data = json.loads(out)
    names = [t["name"] for t in data["tools"]]
    assert code in (0, None) and "mcp_rich_structured" in names and "tool_search" in names
    assert "mcp_rich_pid" not in names  # deferred behind tool_search
    assert data["tool_chars"] > 0 and data["chars"] + data["tool_chars"] <= data["budget"]


#: What a skills-only `lemon prompt` with its caches in place has no use for.
HEAVY = (
    "yaml",
    "jsonschema",
    "lemon_skills.tool",
    "lemon_skills.tools.registry",
    "lemon_skills.skills.remote.store",
    "importlib.metadata",
    "opentelemetry.trace",
)


@pytest.mark.slow
def test_a_prompt_with_caches_loads_no_tool_layer_parser_or_tracer(project, project_skills):

    for i in range(70):  # enough skills for the ranking index to be kept on disk
        write_skill(project_skills, f"skill-{i:02d}", description=f"Chore number {i}")
    write_skill(project_skills, "k8s", description="Debug crash-looping Kubernetes pods")
    args = ["prompt", "my kubernetes pods keep crashing", "--cwd", str(project)]
    for _ in range(2):  # the first writes the manifest and index caches
        stdout, probe = lemon_in_new_process(args, HEAVY)
    assert probe == {"code": 0, "heavy": []}
    assert '<skill key="k8s"' in stdout
