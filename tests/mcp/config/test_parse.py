"""Config entries: shapes, validation messages, sources, precedence and switches."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lemon_skills import settings
from lemon_skills.mcp import validate_mcp_servers
from lemon_skills.mcp.config.entries import HttpServer, SseServer, StdioServer
from lemon_skills.mcp.config.parse import parse_server
from lemon_skills.mcp.config.resolve import load

pytestmark = pytest.mark.usefixtures("trusted_projects")


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_dict_entries_become_typed_records():
    stdio = parse_server(
        {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}}
    )
    http = parse_server({"type": "http", "url": "http://127.0.0.1:4000/mcp", "headers": {"X": "y"}})
    sse = parse_server({"type": "sse", "url": "http://127.0.0.1:4001/sse", "timeout_ms": 500})
    assert isinstance(stdio, StdioServer) and stdio.args == ("mcp-server-git",)
    assert stdio.env == {"A": "1"}
    assert isinstance(http, HttpServer) and http.headers == {"X": "y"}
    assert isinstance(sse, SseServer) and sse.timeout_ms == 500


def test_tuple_entries_as_in_the_design_document():
    stdio = parse_server(("stdio", "npx", ["-y", "server"], {"allow_tools": ["a"]}))
    http = parse_server(("http", "https://api.example.com/mcp"))
    assert isinstance(stdio, StdioServer)
    assert stdio.command == "npx" and stdio.args == ("-y", "server")
    assert stdio.filters.allow_tools == ("a",)
    assert isinstance(http, HttpServer)


def test_type_is_inferred_when_missing():
    assert parse_server({"command": "x"}).transport == "stdio"
    assert parse_server({"url": "http://h/sse"}).transport == "sse"
    assert parse_server({"url": "http://h/mcp"}).transport == "http"
    assert parse_server({"url": "http://h/x", "type": "streamable-http"}).transport == "http"


def test_validation_names_every_bad_entry_and_its_reason():
    valid, errors = validate_mcp_servers(
        [
            {"type": "stdio", "command": "ok"},
            {"type": "stdio", "command": "  ", "name": "blank"},
            {"type": "http", "url": "ftp://x"},
            {"type": "stdio", "command": "x", "allow_tools": "echo"},
            {"type": "sse", "url": "http://h/sse", "ready_timeout_ms": 0},
            {"type": "stdio", "command": "x", "oauth": "yes"},
            {"type": "carrier-pigeon"},
            42,
        ]
    )
    assert [v.command for v in valid if isinstance(v, StdioServer)] == ["ok"]
    reasons = [(e.index, e.reason) for e in errors]
    assert reasons == [
        (1, "stdio command cannot be empty"),
        (2, "invalid HTTP URL: ftp://x"),
        (3, "allow_tools must be a list of strings"),
        (4, "ready_timeout_ms must be a positive integer"),
        (5, "oauth must be an object"),
        (6, "unknown transport type 'carrier-pigeon' (use stdio, http or sse)"),
        (7, "invalid MCP server config: 42"),
    ]
    assert errors[0].name == "blank"
    assert "entry 1 (blank): stdio command cannot be empty" in str(errors[0])


def test_duplicate_names_in_one_source_are_an_error():
    valid, errors = validate_mcp_servers(
        [{"name": "git", "command": "a"}, {"name": "git", "command": "b"}]
    )
    assert len(valid) == 1 and valid[0].command == "a"  # type: ignore[union-attr]
    assert errors[0].reason == "duplicate server name 'git'"


def test_names_that_become_the_same_tool_prefix_are_a_conflict_not_a_silent_drop(project):
    write(
        project / ".lemon" / "mcp.json",
        {"mcpServers": {"t": {"command": "a"}, "T": {"command": "b"}}},
    )
    resolved = load(project)
    assert [s.name for s in resolved.servers] == ["t"]
    [issue] = resolved.issues
    assert issue.name == "T"
    assert issue.reason == (
        "server name 'T' conflicts with 't': both are called 't' in tool names; rename one"
    )


def test_vs_code_servers_object_is_accepted(project):
    doc = {"servers": {"git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}}}
    write(project / ".lemon" / "mcp.json", doc)
    resolved = load(project)
    assert [(s.name, s.target) for s in resolved.servers] == [("git", "uvx mcp-server-git")]
    assert resolved.issues == ()


def test_oauth_and_sampling_are_kept_for_the_auth_and_sampling_layers():
    oauth = {"client_id": "c", "client_secret_secret": "C_SECRET"}
    cfg = parse_server({"url": "https://h/mcp", "oauth": oauth, "sampling": {"mode": "deny"}})
    assert cfg.oauth == oauth
    assert cfg.sampling == {"mode": "deny"}
    assert cfg.to_dict()["oauth"] == {"configured": True}


def test_listing_redacts_header_and_env_values():
    http = parse_server({"url": "https://h/mcp", "headers": {"Authorization": "Bearer s3cret"}})
    stdio = parse_server({"command": "x", "env": {"TOKEN": "s3cret"}})
    assert "s3cret" not in json.dumps(http.to_dict()) + json.dumps(stdio.to_dict())


def test_all_sources_are_merged(agent_dir, project, monkeypatch):
    write(agent_dir / "mcp.json", {"servers": [{"name": "g", "command": "global-server"}]})
    write(project / ".lemon" / "mcp.json", {"mcpServers": {"p": {"command": "project-server"}}})
    monkeypatch.setenv("LEMON_MCP_SERVERS", json.dumps([{"name": "e", "command": "env-server"}]))
    settings.configure(mcp_servers=[{"name": "c", "command": "code-server"}])
    resolved = load(project)
    assert [(s.name, s.origin) for s in resolved.servers] == [
        ("c", "programmatic"),
        ("e", "env"),
        ("g", "global"),
        ("p", "project"),
    ]
    assert resolved.enabled and not resolved.issues


def test_project_entry_overrides_global_entry_of_the_same_name(agent_dir, project):
    write(agent_dir / "mcp.json", {"servers": [{"name": "git", "command": "global-git"}]})
    write(project / ".lemon" / "mcp.json", {"servers": [{"name": "git", "command": "project-git"}]})
    resolved = load(project)
    assert [s.command for s in resolved.servers] == ["project-git"]  # type: ignore[union-attr]
    assert [s.command for s in resolved.overridden] == ["global-git"]  # type: ignore[union-attr]


def test_identical_unnamed_entries_collapse_and_different_ones_get_unique_names(agent_dir, project):
    entry = {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}
    write(agent_dir / "mcp.json", {"servers": [entry, entry]})
    write(project / ".lemon" / "mcp.json", {"servers": [entry]})
    # The project's copy runs in the project directory, so it is a server of its own; the
    # global server keeps its plain name.
    assert [(s.name, s.origin) for s in load(project).servers] == [
        ("git", "global"),
        ("git_2", "project"),
    ]


def test_project_enabled_false_turns_mcp_off_there(agent_dir, project, tmp_path):
    write(agent_dir / "mcp.json", {"servers": [{"command": "x"}]})
    write(project / ".lemon" / "mcp.json", {"enabled": False})
    off = load(project)
    assert not off.enabled and off.active() == ()
    assert "enabled" in (off.disabled_reason or "")
    assert load(tmp_path / "elsewhere").enabled


def test_project_enabled_true_wins_over_a_global_switch_off(agent_dir, project):
    write(agent_dir / "mcp.json", {"enabled": False, "servers": [{"command": "x"}]})
    assert not load(agent_dir.parent).enabled
    write(project / ".lemon" / "mcp.json", {"enabled": True})
    assert load(project).enabled


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", "on"])
def test_lemon_mcp_disabled_turns_mcp_off(value, monkeypatch, project):
    monkeypatch.setenv("LEMON_MCP_DISABLED", value)
    resolved = load(project)
    assert not resolved.enabled
    assert resolved.disabled_reason == "disabled by LEMON_MCP_DISABLED"


def test_configure_switch_turns_mcp_off(project):
    settings.configure(mcp_disabled=True)
    assert not load(project).enabled


def test_a_corrupt_file_is_reported_and_the_other_sources_still_load(agent_dir, project):
    (project / ".lemon").mkdir(parents=True)
    (project / ".lemon" / "mcp.json").write_text("{not json", encoding="utf-8")
    write(agent_dir / "mcp.json", {"servers": [{"name": "g", "command": "x"}, {"type": "http"}]})
    resolved = load(project)
    assert [s.name for s in resolved.servers] == ["g"]
    reasons = sorted(i.reason for i in resolved.issues)
    assert reasons[0].startswith("corrupt JSON")
    assert reasons[1] == "invalid HTTP URL: None"


def test_bad_env_variable_is_reported_not_raised(monkeypatch, project):
    monkeypatch.setenv("LEMON_MCP_SERVERS", "[{")
    resolved = load(project)
    assert resolved.servers == ()
    assert "LEMON_MCP_SERVERS is not valid JSON" in resolved.issues[0].reason


def test_project_stdio_servers_start_in_the_project_directory(project):
    write(
        project / ".lemon" / "mcp.json",
        {"servers": [{"command": "a"}, {"command": "b", "cwd": "sub"}]},
    )
    a, b = load(project).servers
    assert isinstance(a, StdioServer) and isinstance(b, StdioServer)
    assert a.effective_cwd() == project
    assert b.effective_cwd() == project / "sub"


def test_disabled_entries_are_listed_but_not_connected(project):
    settings.configure(mcp_servers=[{"name": "off", "command": "x", "disabled": True}])
    resolved = load(project)
    assert [s.name for s in resolved.servers] == ["off"]
    assert resolved.active() == ()


def test_every_invalid_oauth_and_sampling_field_is_reported_with_its_entry():
    valid, errors = validate_mcp_servers(
        [
            {
                "name": "a",
                "url": "https://h/mcp",
                "oauth": {"flow": "magic", "client_id": 5, "scopes": "x"},
                "sampling": {"mode": "auto", "max_tokens": 0},
            },
            {"name": "b", "command": "x", "oauth": {"client_id": "c", "client_secret": "s"}},
            {"name": "c", "url": "https://h/mcp", "sampling": "yes", "timeout_ms": -1},
            {
                "name": "ok",
                "url": "https://h/mcp",
                "oauth": {"client_id": "c", "client_secret": "s"},
            },
        ]
    )
    assert [v.name for v in valid] == ["ok"]
    assert [(e.name, e.reason) for e in errors] == [
        ("a", "oauth.client_id must be a non-empty string"),
        (
            "a",
            "oauth.flow must be client_credentials, authorization_code_pkce, jwt_bearer"
            " or enterprise",
        ),
        ("a", "oauth.scopes must be a list of strings"),
        ("a", "sampling.mode must be model, reviewed_model, or deny"),
        ("a", "sampling.max_tokens must be a positive integer"),
        ("b", "oauth is supported on Streamable HTTP servers only"),
        ("c", "timeout_ms must be a positive integer"),
        ("c", "sampling must be an object"),
    ]
    assert (
        str(errors[5])
        == "programmatic entry 1 (b): oauth is supported on Streamable HTTP servers only"
    )
    with pytest.raises(ValueError, match="oauth.flow must be .*; oauth.scopes must be"):
        parse_server({"url": "https://h/mcp", "oauth": {"flow": "magic", "scopes": "x"}})


def test_tool_policy_keys_parse_with_defaults_and_reasons():
    from lemon_skills.mcp.config.lint import entry_warnings

    plain = parse_server({"command": "x"})
    assert plain.policy.to_dict() == {
        "max_result_tokens": 25_000,
        "approve": "never",
        "pinning": "withhold",
    }
    raw = {
        "command": "x",
        "max_result_tokens": 0,
        "approve": "destructive",
        "approve_tools": {"read": "never"},
        "pinning": "warn",
    }
    cfg = parse_server(raw)
    assert cfg.policy.approve_mode("read") == "never"
    assert cfg.policy.approve_mode("write") == "destructive"
    assert cfg.to_dict()["pinning"] == "warn"
    assert not [w for w in entry_warnings(raw) if "unknown key" in w]
    bad = {"command": "x", "max_result_tokens": -1, "approve": "sometimes", "pinning": True}
    from lemon_skills.mcp.config.parse import validate_servers

    _, issues = validate_servers([bad])
    assert [i.reason for i in issues] == [
        "max_result_tokens must be a non-negative integer (0: no limit)",
        "approve must be never, destructive or always",
        "pinning must be withhold, warn or off",
    ]


def test_always_load_pins_every_tool_or_the_named_ones():
    assert parse_server({"command": "x", "always_load": True}).always_load == ("*",)
    assert parse_server({"command": "x", "always_load": False}).always_load == ()
    named = parse_server({"command": "x", "always_load": ["git_status"]})
    assert named.pins("git_status") and not named.pins("git_log")
    assert named.to_dict()["always_load"] == ["git_status"]
    # What a server pins does not make it another server process.
    assert named.digest() == parse_server({"command": "x"}).digest()
    _, issues = validate_mcp_servers([{"name": "a", "command": "x", "always_load": "yes"}])
    assert [i.reason for i in issues] == ["always_load must be true, false or a list of tool names"]
    from lemon_skills.mcp.config.lint import entry_warnings

    assert entry_warnings({"command": sys.executable, "always_load": True}) == []
