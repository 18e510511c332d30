"""``lemon mcp ...`` end to end, against fixture servers configured in a project.

The smoke and rich fixtures are served in this process (``in_memory``); one test runs the same
listing against the real spawned servers, and the broken and policy servers always run as
processes (their behaviour is the process's: a crash, its stderr, its environment).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from lemon_skills.cli import main
from tests.helpers.mcp import broken, configure_project, smoke
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.usefixtures("trusted_projects")


def write_config(project: Path, doc: dict[str, object]) -> Path:
    (project / ".lemon").mkdir(exist_ok=True)
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    return project


GHOST = {"name": "ghost", "command": "lemon-test-no-such-command"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_configured_servers_without_connecting(configured, capsys):
    code, out, _ = run(capsys, "mcp", "list", "--json", "--cwd", str(configured))
    data = json.loads(out)
    assert code == 0 and data["enabled"] is True
    assert [(s["name"], s["transport"], s["origin"]) for s in data["servers"]] == [
        ("rich", "stdio", "project"),
        ("fx", "stdio", "project"),
    ]


def test_tools_json_shape(configured, capsys):
    code, out, _ = run(capsys, "mcp", "tools", "--server", "fx", "--json", "--cwd", str(configured))
    rows = json.loads(out)
    assert code == 0
    assert all(set(r) == {"name", "server", "tool", "description", "input_schema"} for r in rows)
    echo = next(r for r in rows if r["name"] == "mcp_fx_echo")
    assert echo["server"] == "fx" and echo["tool"] == "echo"
    assert echo["input_schema"]["required"] == ["message"]
    assert {r["server"] for r in rows} == {"fx"}


def test_call_json_uses_mcp_field_names(configured, capsys):
    code, out, _ = run(capsys, "mcp", "call", "mcp_rich_image", "--json", "--cwd", str(configured))
    assert code == 0
    [block] = json.loads(out)["content"]
    assert block["mimeType"] == "image/png" and "mime_type" not in block


def test_call_json_shape_and_exit_codes(configured, capsys):
    args = ("--json", "--cwd", str(configured))
    code, out, _ = run(
        capsys, "mcp", "call", "mcp_rich_structured", "--args", '{"city": "Rome"}', *args
    )
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"isError", "content", "structuredContent"}
    assert data["isError"] is False
    assert data["structuredContent"] == {"city": "Rome", "celsius": 21}
    assert data["content"][0]["type"] == "text"
    code, out, _ = run(capsys, "mcp", "call", "mcp_rich_fail", *args)
    assert code == 1 and json.loads(out)["content"] == [{"type": "text", "text": "planned failure"}]


def test_call_errors_say_what_to_do(configured, capsys):
    code, _, err = run(capsys, "mcp", "call", "mcp_rich_ecko", "--cwd", str(configured))
    assert code == 1
    assert "unknown MCP tool" in err and "mcp_rich_echo" in err
    code, _, err = run(
        capsys, "mcp", "call", "mcp_rich_echo", "--args", "[1]", "--cwd", str(configured)
    )
    assert code == 2 and "must be a JSON object" in err


@pytest.mark.parametrize("served", ["in-process", "spawned"])
def test_status_json_shape(project, capsys, request, served):
    if served == "in-process":
        request.getfixturevalue("in_memory")
    configured = configure_project(project)
    code, out, _ = run(capsys, "mcp", "status", "--json", "--cwd", str(configured))
    data = json.loads(out)
    assert code == 0
    assert {"disabled", "servers", "cached_tools", "cache_ttl_ms"} <= set(data)
    keys = {
        "connected",
        "transport",
        "tool_count",
        "resource_count",
        "prompt_count",
        "capabilities",
        "last_error",
    }
    for server in data["servers"].values():
        assert keys <= set(server)
    assert data["servers"]["fx"]["connected"] is True
    assert (
        data["cached_tools"]
        == data["servers"]["fx"]["tool_count"] + data["servers"]["rich"]["tool_count"]
    )


def test_resources_and_prompts(configured, capsys):
    code, out, _ = run(
        capsys, "mcp", "resources", "--server", "rich", "--json", "--cwd", str(configured)
    )
    assert code == 0
    rows = json.loads(out)
    assert {(r["server"], r["uri"]) for r in rows} == {
        ("rich", "fixture://status"),
        ("rich", "fixture://secret"),
    }
    assert {r["mimeType"] for r in rows} == {"text/plain"}
    code, out, _ = run(capsys, "mcp", "prompts", "--json", "--cwd", str(configured))
    assert {(p["server"], p["name"]) for p in json.loads(out)} == {
        ("fx", "brief"),
        ("rich", "brief"),
        ("rich", "other"),
    }


def test_validate_reports_every_bad_entry(tmp_path, capsys):
    bad = tmp_path / "mcp.json"
    bad.write_text(
        json.dumps(
            {
                "servers": [
                    {"command": ""},
                    {"type": "http", "url": "nope"},
                    {"command": sys.executable},
                ]
            }
        )
    )
    code, out, _ = run(capsys, "mcp", "validate", str(bad), "--json")
    data = json.loads(out)
    assert code == 1
    assert data["valid"] == [None]
    assert [(e["index"], e["reason"]) for e in data["errors"]] == [
        (0, "stdio command cannot be empty"),
        (1, "invalid HTTP URL: nope"),
    ]
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"mcpServers": {"t": {"command": sys.executable}}}))
    code, out, _ = run(capsys, "mcp", "validate", str(good))
    assert code == 0 and "t (stdio)" in out


def test_disabled_mcp_is_reported(configured, capsys, monkeypatch):
    monkeypatch.setenv("LEMON_MCP_DISABLED", "1")
    code, out, _ = run(capsys, "mcp", "status", "--json", "--cwd", str(configured))
    data = json.loads(out)
    assert code == 0 and data["disabled"] is True and data["servers"] == {}


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "count"), [("stdio", 17), ("http", 24), ("sse", 14)])
def test_smoke_proofs_pass_every_check_and_are_written(kind, count, tmp_path, capsys, agent_dir):
    out_file = tmp_path / "proofs" / f"mcp-{kind}-latest.json"
    code, out, _ = run(capsys, "mcp", "smoke", kind, "--out", str(out_file))
    proof = json.loads(out_file.read_text())
    assert code == 0, [c for c in proof["checks"] if c["status"] != "completed"]
    assert json.loads(out) == proof
    assert proof["status"] == "completed" and proof["proof"] == f"mcp_{kind}_smoke"
    assert (proof["completed_count"], proof["failed_count"], proof["skipped_count"]) == (
        count,
        0,
        0,
    )
    assert len(proof["checks"]) == count
    assert len({c["name"] for c in proof["checks"]}) == count
    assert not any(proof["cleanup"].values())
    assert len(list(out_file.parent.glob(f"mcp-{kind}-smoke-*.json"))) == 1
    # The checks' approvals and tokens stay in their own throw-away agent dir.
    assert not (agent_dir / "approvals.db").exists()
    assert not (agent_dir / "secrets.json").exists()
    if kind == "http":
        assert_http_check_order([c["name"] for c in proof["checks"]])


def _one_failed_check_proof(kind: str) -> dict[str, object]:
    from lemon_skills.selftest.proof import Proof

    proof = Proof(kind)
    proof.check("mcp_stdio_lists_tools", lambda: None)
    proof.check("mcp_stdio_calls_tool", lambda: int("x"))
    return proof.result()


@pytest.fixture
def stub_smoke(monkeypatch):
    monkeypatch.setattr("lemon_skills.selftest.run_smoke", _one_failed_check_proof)


def test_smoke_on_a_terminal_prints_a_summary_naming_the_failed_check(
    stub_smoke, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    out_file = tmp_path / "proof.json"
    code, out, err = run(capsys, "mcp", "smoke", "stdio", "--out", str(out_file))
    assert code == 1
    assert click.unstyle(out).splitlines() == [
        "mcp_stdio_smoke: failed (1 passed, 1 failed, 0 skipped)",
        "  failed mcp_stdio_calls_tool: ValueError: invalid literal for int() with base 10: 'x'",
    ]
    assert json.loads(out_file.read_text())["failed_count"] == 1
    assert f"proof written to {out_file}" in err


def test_smoke_json_prints_the_proof_on_a_terminal_and_in_a_pipe(
    stub_smoke, tmp_path, capsys, monkeypatch
):
    out_file = tmp_path / "proof.json"
    code, piped, _ = run(capsys, "mcp", "smoke", "stdio", "--out", str(out_file))
    assert code == 1 and json.loads(piped) == json.loads(out_file.read_text())
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "mcp", "smoke", "stdio", "--json", "--out", str(out_file))
    assert json.loads(out)["checks"][1]["status"] == "failed"


def assert_http_check_order(names: list[str]) -> None:
    assert names[:4] == [
        "mcp_http_client_initializes",
        "mcp_http_lists_tools",
        "mcp_http_calls_tool_success",
        "mcp_http_calls_tool_error",
    ]
    assert names[8:17] == [
        "mcp_http_streamable_sse_response_and_session_headers",
        "mcp_http_oauth_protected_resource_metadata",
        "mcp_http_oauth_authorization_server_metadata",
        "mcp_http_oauth_client_credentials_token_acquisition",
        "mcp_http_oauth_client_credentials_token_refresh",
        "mcp_http_oauth_refresh_token_grant",
        "mcp_http_oauth_client_secret_basic_token_auth",
        "mcp_http_oauth_pkce_authorization_code",
        "mcp_http_oauth_token_cache_resume",
    ]
    assert names[-1] == "mcp_source_http_oauth_loopback_callback"


def test_listings_warn_about_a_server_that_failed_to_start(project, capsys, in_memory):
    write_config(project, {"servers": [smoke("fx"), GHOST]})
    args = ("--json", "--cwd", str(project))
    for command, healthy in [
        ("tools", ("fx", "mcp_fx_echo")),
        ("resources", ("fx", "fixture://status")),
        ("prompts", ("fx", "brief")),
    ]:
        code, out, err = run(capsys, "mcp", command, *args)
        rows = json.loads(out)
        key = "name" if command != "resources" else "uri"
        assert healthy in {(r["server"], r[key]) for r in rows}
        assert {r["server"] for r in rows} == {"fx"}
        warning = [line for line in err.splitlines() if "ghost" in line]
        assert len(warning) == 1, err
        assert "executable not found" in warning[0] and "lemon mcp status" in warning[0]
        assert code == 1


def test_a_healthy_server_named_with_server_lists_cleanly(project, capsys, in_memory):
    write_config(project, {"servers": [smoke("fx"), GHOST]})
    code, out, err = run(capsys, "mcp", "tools", "--server", "fx", "--cwd", str(project))
    assert code == 0 and "mcp_fx_echo" in out and "ghost" not in err
    code, out, err = run(
        capsys, "mcp", "tools", "--server", "ghost", "--json", "--cwd", str(project)
    )
    assert code == 1 and json.loads(out) == []
    assert "MCP server 'ghost' failed: executable not found" in err


def test_unknown_server_is_an_error_with_the_known_names(configured, capsys):
    for command in ("tools", "resources", "prompts"):
        code, out, err = run(
            capsys, "mcp", command, "--server", "rihc", "--json", "--cwd", str(configured)
        )
        assert code == 1 and out == ""
        assert "unknown MCP server 'rihc'" in err
        assert "did you mean 'rich'?" in err and "known servers: fx, rich" in err
    code, _, err = run(capsys, "mcp", "prompts", "--server", "zzz", "--cwd", str(configured))
    assert code == 1 and "did you mean" not in err and "known servers: fx, rich" in err


def test_cwd_help_says_what_the_project_directory_selects(capsys):
    for command in ("list", "status", "tools", "call", "resources", "prompts", "validate"):
        code, out, _ = run(capsys, "mcp", command, "--help")
        text = " ".join(out.split())
        assert code == 0 and ".lemon/mcp.json is merged over the global mcp.json" in text
        assert "skills are used" not in text
    _, out, _ = run(capsys, "skill", "list", "--help")
    assert "skills are used" in " ".join(out.split())


@pytest.mark.parametrize(
    ("command", "what"), [("serve", "the skills"), ("gateway", "every server and skill")]
)
def test_serve_and_gateway_teach_the_same_http_exposure(capsys, command, what):
    code, out, _ = run(capsys, "mcp", command, "--help")
    text = " ".join(out.split())
    assert code == 0 and f"--http HOST:PORT Serve {what} over Streamable HTTP" in text
    assert "--token-file FILE With --http: bearer tokens clients must send" in text
    assert "Required for any bind but 127.0.0.1, localhost or ::1." in text
    assert "--allow-origin ORIGIN With --http: also accept browser requests" in text
    code, _, err = run(capsys, "mcp", command, "--allow-origin", "https://app.example")
    assert code == 2 and "need --http HOST:PORT" in err


def test_list_shows_the_effective_state_when_mcp_is_off_for_the_project(project, capsys):
    write_config(project, {"enabled": False, "servers": [smoke("fx")]})
    code, out, err = run(capsys, "mcp", "list", "--cwd", str(project))
    row = next(line for line in out.splitlines() if line.startswith("fx "))
    assert code == 0 and "off (mcp disabled)" in row and "enabled" not in row
    assert "MCP is off here" in err
    _, out, _ = run(capsys, "mcp", "list", "--json", "--cwd", str(project))
    data = json.loads(out)
    assert data["enabled"] is False
    assert [(s["name"], s["state"], s["active"]) for s in data["servers"]] == [("fx", "off", False)]


def test_list_shows_each_entrys_own_switch_when_mcp_is_on(project, capsys):
    write_config(project, {"servers": [smoke("fx"), smoke("off", enabled=False)]})
    _, out, _ = run(capsys, "mcp", "list", "--json", "--cwd", str(project))
    states = {s["name"]: (s["state"], s["active"]) for s in json.loads(out)["servers"]}
    assert states == {"fx": ("enabled", True), "off": ("disabled", False)}
    _, out, _ = run(capsys, "mcp", "list", "--cwd", str(project))
    assert "off (mcp disabled)" not in out
    assert next(line for line in out.splitlines() if line.startswith("off ")).split()[3] == (
        "disabled"
    )


def test_status_of_one_server_starts_only_it_and_shows_its_stderr(project, capsys):
    hung = broken("hung", "hang", ready_timeout_ms=20_000)
    write_config(project, {"servers": [broken("crash", "crash"), hung]})
    started = time.monotonic()
    code, out, _ = run(capsys, "mcp", "status", "crash", "--cwd", str(project))
    assert time.monotonic() - started < 10
    assert code == 1
    assert "stderr (last lines):" in out and "fatal: bad configuration (planned crash)" in out
    assert "hung" not in out
    code, out, err = run(capsys, "mcp", "logs", "crash", "--cwd", str(project))
    assert code == 0 and out.strip() == "fatal: bad configuration (planned crash)"
    assert "mcp-logs" in err
    code, _, err = run(capsys, "mcp", "logs", "nope", "--cwd", str(project))
    assert code == 1 and "unknown MCP server 'nope'" in err


def test_status_without_servers_says_so(project, capsys):
    code, out, err = run(capsys, "mcp", "status", "--cwd", str(project))
    assert code == 0 and "no MCP servers configured" in err


def test_status_exits_1_when_a_server_failed(project, capsys, in_memory):
    write_config(project, {"servers": [smoke("fx"), GHOST]})
    code, out, _ = run(capsys, "mcp", "status", "--json", "--cwd", str(project))
    data = json.loads(out)
    assert code == 1 and data["servers"]["fx"]["connected"] is True
    assert "executable not found" in data["servers"]["ghost"]["last_error"]


def test_call_checks_its_arguments_before_loading_the_sdk(project):
    write_config(project, {"servers": [GHOST]})
    code = (
        "import sys; from lemon_skills.cli import main\n"
        "rc = main(['mcp', 'call', 'mcp_ghost_x', '--args', '[1]', '--cwd', sys.argv[1]])\n"
        "print(rc, 'mcp' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(project)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert "must be a JSON object" in done.stderr


def test_call_says_mcp_is_disabled(configured, capsys, monkeypatch):
    monkeypatch.setenv("LEMON_MCP_DISABLED", "1")
    code, _, err = run(capsys, "mcp", "call", "mcp_rich_echo", "--cwd", str(configured))
    assert code == 1 and "MCP is off here (disabled by LEMON_MCP_DISABLED)" in err


@pytest.mark.parametrize(
    ("fmt", "schema_key"),
    [("openai", "function"), ("anthropic", "input_schema"), ("gemini", "parameters")],
)
def test_tools_in_a_providers_format(configured, capsys, fmt, schema_key):
    code, out, _ = run(
        capsys,
        "mcp",
        "tools",
        "--server",
        "fx",
        "--format",
        fmt,
        "--json",
        "--cwd",
        str(configured),
    )
    defs = json.loads(out)
    assert code == 0
    echo = next(d for d in defs if (d.get("function") or d)["name"] == "mcp_fx_echo")
    assert schema_key in echo
    if fmt == "openai":
        assert echo["function"]["strict"] is True
        assert echo["function"]["parameters"]["additionalProperties"] is False


def test_validate_warns_about_what_will_not_work_as_written(tmp_path, capsys):
    doc = {
        "mcpServers": {
            "npx": {"command": "npx -y some-pkg"},
            "typo": {"command": sys.executable, "arg": ["-m", "x"]},
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "mcp", "validate", str(path), "--json")
    data = json.loads(out)
    # A server that can never start is an error; a likely typo is a warning.
    assert code == 1 and data["valid"] == ["typo"]
    assert [(e["name"], e["reason"]) for e in data["errors"]] == [
        (
            "npx",
            'executable not found: npx -y some-pkg; arguments belong in "args": '
            '"command": "npx", "args": ["-y", "some-pkg"]',
        )
    ]
    assert [(w["name"], w["reason"]) for w in data["warnings"]] == [
        ("typo", "unknown key 'arg' (did you mean 'args'?)"),
    ]
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    code, _, err = run(capsys, "mcp", "validate", str(empty))
    assert code == 0 and "no MCP servers are configured" in err


def test_a_command_with_its_arguments_in_it_fails_with_the_fix(project, capsys):
    write_config(project, {"mcpServers": {"npx": {"command": "npx -y some-pkg"}}})
    code, out, _ = run(capsys, "mcp", "status", "--json", "--cwd", str(project))
    error = json.loads(out)["servers"]["npx"]["last_error"]
    assert code == 1
    assert error.startswith("executable not found: npx -y some-pkg")
    assert '"command": "npx", "args": ["-y", "some-pkg"]' in error


def test_status_shows_policy_and_held_tools_until_approve_changes(
    project, capsys, tmp_path, in_memory
):
    from tests.mcp.servers import policy

    server = {"command": sys.executable, "args": [policy.__file__], "approve": "destructive"}
    write_config(project, {"mcpServers": {"pol": server | {"env": {"POLICY_DIR": str(tmp_path)}}}})
    code, out, err = run(capsys, "mcp", "status", "--cwd", str(project))
    assert code == 0
    assert "approve=destructive pin=withhold max=25000" in out
    assert "pol: tool 'poisoned' withheld: description hidden text" in err
    assert "lemon mcp approve-changes pol" in err
    code, out, _ = run(capsys, "mcp", "approve-changes", "pol", "--cwd", str(project))
    assert code == 0 and out.startswith("approved poisoned (description hidden text")
    code, out, err = run(capsys, "mcp", "tools", "--server", "pol", "--cwd", str(project))
    assert "mcp_pol_poisoned" in out and "withheld" not in err


def test_serve_check_says_what_is_served_renamed_and_refused(project, project_skills, capsys):
    write_skill(project_skills, "pdf")
    write_skill(project_skills, "burp-testing", name="Burp Suite Testing")
    write_skill(project_skills, "___", name="Only Symbols")
    assert main(["mcp", "serve", "--check", "--cwd", str(project)]) == 1
    out = capsys.readouterr().out
    assert "2 skills served" in out
    assert "burp-testing: 'Burp Suite Testing' as 'burp-testing'" in out
    assert "1 not served:" in out and "___: its name 'Only Symbols' breaks" in out


def test_serve_check_succeeds_when_every_skill_is_served(project, project_skills, capsys):
    write_skill(project_skills, "pdf")
    assert main(["mcp", "serve", "--check", "--cwd", str(project)]) == 0
    assert capsys.readouterr().out.strip() == "1 skills served"
