"""``lemon mcp gateway`` at the command line: host snippets in each host's own format, and
the refusals that need no server."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from lemon_skills.cli import main


@pytest.mark.parametrize("host", ["claude", "cursor", "vscode", "codex"])
def test_print_config_gives_each_host_its_own_format(
    host: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["mcp", "gateway", "--cwd", str(project), "--tools", "search", "--agent", "dev"]
    assert main([*args, "--print-config", host]) == 0
    out = capsys.readouterr().out
    if host == "codex":
        entry = tomllib.loads(out)["mcp_servers"]["lemon"]
    elif host == "vscode":
        entry = json.loads(out)["servers"]["lemon"]
        assert entry.pop("type") == "stdio"
    else:
        entry = json.loads(out)["mcpServers"]["lemon"]
    assert Path(entry["command"]).name == "lemon"
    assert entry["args"] == [
        *("mcp", "gateway", "--cwd", str(project)),
        *("--tools", "search", "--agent", "dev"),
    ]


def test_a_network_bind_without_tokens_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "gateway", "--http", "0.0.0.0:8765"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: refusing to serve on 0.0.0.0 without bearer tokens")
    assert "Traceback" not in err
