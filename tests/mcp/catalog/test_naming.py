"""Model-facing names: derivation, sanitising, the 64-character limit, collisions."""

from __future__ import annotations

import re

from lemon_skills.mcp.catalog.naming import (
    NameRequest,
    assign_server_names,
    assign_tool_names,
    derive_server_name,
    slug,
    tool_name,
)
from lemon_skills.mcp.config.parse import parse_server

VALID = re.compile(r"^[a-z0-9_]{1,64}$")


def derived(entry: dict[str, object]) -> str:
    return derive_server_name(parse_server(entry))


def test_slug_keeps_only_lowercase_alphanumerics_and_single_underscores():
    assert slug("My Server.v2 (beta)") == "my_server_v2_beta"
    assert slug("--") == ""


def test_server_names_come_from_the_launched_package_not_the_launcher():
    assert (
        derived({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/d"]})
        == "filesystem"
    )
    assert derived({"command": "uvx", "args": ["mcp-server-git", "--repository", "."]}) == "git"
    assert derived({"command": "python3", "args": ["tools/weather.py"]}) == "weather"
    assert derived({"command": "python", "args": ["-m", "acme.search.server"]}) == "search"
    assert (
        derived({"command": "node", "args": ["/opt/m/server-everything/dist/index.js"]})
        == "everything"
    )
    assert derived({"command": "/usr/bin/elixir", "args": ["x.exs"]}) == "elixir"
    assert derived({"command": "mcp-server-time"}) == "time"


def test_server_names_from_urls_keep_host_and_port_apart():
    assert derived({"url": "http://127.0.0.1:4000/mcp"}) == "localhost_4000"
    assert derived({"url": "http://127.0.0.1:4001/mcp"}) == "localhost_4001"
    assert derived({"url": "https://mcp.example.com/github/mcp"}) == "example_github"


def test_derived_names_are_made_unique_and_given_names_are_kept():
    configs = [
        parse_server({"url": "http://localhost:80/mcp"}),
        parse_server({"url": "http://localhost:80/mcp", "headers": {"X": "1"}}),
        parse_server({"name": "localhost_80", "command": "x"}),
    ]
    assert assign_server_names(configs) == ["localhost_80_2", "localhost_80_3", "localhost_80"]


def test_tool_names_are_sanitised_and_prefixed():
    assert tool_name("git", "git-status") == "mcp_git_git_status"
    assert tool_name("fs", "read.file") == "mcp_fs_read_file"


def test_long_names_are_cut_to_64_with_a_stable_hash():
    long = "x" * 100
    name = tool_name("server", long)
    assert len(name) == 64 and VALID.match(name)
    assert name == tool_name("server", long)
    assert name != tool_name("server", long + "y")


def test_colliding_names_are_resolved_deterministically_and_reported():
    a = NameRequest(server="s", item="a-b")
    b = NameRequest(server="s", item="a_b")
    names, conflicts = assign_tool_names([b, a])
    again, _ = assign_tool_names([a, b])
    assert names == again
    assert names[b] == "mcp_s_a_b"
    assert names[a] != names[b] and VALID.match(names[a])
    assert conflicts[0].to_dict() == {
        "name": "mcp_s_a_b",
        "kept": {"server": "s", "tool": "a_b", "lemon_utility": False},
        "renamed": [{"server": "s", "tool": "a-b", "lemon_utility": False, "name": names[a]}],
        "message": f"mcp_s_a_b is server 's''s tool 'a_b'; server 's''s tool 'a-b' is {names[a]}",
    }


def test_the_name_that_needed_no_sanitising_keeps_it_whatever_the_order():
    reqs = [NameRequest(server="s", item=i) for i in ("Foo.Bar", "foo-bar", "foo_bar")]
    for order in (reqs, reqs[::-1], [reqs[1], reqs[2], reqs[0]]):
        names, _ = assign_tool_names(order)
        assert names[reqs[2]] == "mcp_s_foo_bar"


def test_collisions_across_servers_are_never_overwrites():
    x = NameRequest(server="x_y", item="z")
    y = NameRequest(server="x", item="y_z")
    names, conflicts = assign_tool_names([x, y])
    assert len(set(names.values())) == 2
    assert len(conflicts) == 1


def test_a_servers_own_tool_keeps_its_name_over_lemons_utility():
    tool = NameRequest(server="s", item="resources_list")
    util = NameRequest(server="s", item="resources_list", utility=True)
    names, [conflict] = assign_tool_names([util, tool])
    assert names[tool] == "mcp_s_resources_list"
    assert names[util] != names[tool]
    assert conflict.describe() == (
        "mcp_s_resources_list is server 's''s tool 'resources_list'; lemon's resources_list "
        f"utility for server 's' is {names[util]}"
    )
