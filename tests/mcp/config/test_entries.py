from __future__ import annotations

from pathlib import Path

from lemon_skills.mcp.config.entries import ConfigIssue, HttpServer, SseServer, StdioServer


def test_listings_never_show_secret_values():
    stdio = StdioServer(name="git", command="srv", args=("--x",), env={"TOKEN": "s3cret"})
    http = HttpServer(name="web", url="https://x/mcp", headers={"Authorization": "Bearer s3cret"})
    assert stdio.to_dict()["env"] == {"TOKEN": "***"}
    assert http.to_dict()["headers"] == {"Authorization": "***"}
    assert "s3cret" not in repr([stdio.to_dict(), http.to_dict()])


def test_equal_entries_share_a_digest_whatever_their_name():
    a = StdioServer(name="a", command="srv", args=("--x",))
    b = StdioServer(name="b", command="srv", args=("--x",))
    assert a.digest() == b.digest()
    assert a.digest() != StdioServer(name="a", command="srv", args=("--y",)).digest()
    assert (
        a.digest() != StdioServer(name="a", command="srv", args=("--x",), env={"K": "v"}).digest()
    )


def test_transport_is_part_of_the_identity():
    assert HttpServer(url="https://x/mcp").digest() != SseServer(url="https://x/mcp").digest()


def test_relative_cwd_is_relative_to_the_entrys_project(tmp_path):
    project = StdioServer(command="srv", cwd="tools", base_dir=tmp_path)
    assert project.effective_cwd() == tmp_path / "tools"
    assert StdioServer(command="srv", cwd="/abs", base_dir=tmp_path).effective_cwd() == Path("/abs")
    assert StdioServer(command="srv", base_dir=tmp_path).effective_cwd() == tmp_path
    assert StdioServer(command="srv").effective_cwd() is None


def test_same_command_in_two_projects_is_two_servers(tmp_path):
    one = StdioServer(command="srv", base_dir=tmp_path / "one")
    two = StdioServer(command="srv", base_dir=tmp_path / "two")
    assert one.digest() != two.digest()


def test_connect_budget_is_the_ready_timeout_without_interactive_login():
    assert StdioServer(command="srv", ready_timeout_ms=2500).connect_budget_s() == 2.5


def test_always_load_pins_named_tools_or_all():
    assert StdioServer(command="s", always_load=("search",)).pins("search")
    assert not StdioServer(command="s", always_load=("search",)).pins("fetch")
    assert StdioServer(command="s", always_load=("*",)).pins("fetch")


def test_target_is_the_command_line_or_url():
    assert (
        StdioServer(command="uvx", args=("mcp-git", "--repo", ".")).target == "uvx mcp-git --repo ."
    )
    assert HttpServer(url="https://x/mcp").target == "https://x/mcp"


def test_issue_says_where_it_is():
    issue = ConfigIssue(
        reason="command missing", index=2, name="git", origin="project", path=Path("/p/mcp.json")
    )
    assert str(issue) == "/p/mcp.json entry 2 (git): command missing"
    assert str(ConfigIssue(reason="bad", origin="env")) == "env: bad"
