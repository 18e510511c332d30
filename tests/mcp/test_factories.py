"""The default per-server auth and sampling of a source, and who decides a call that needs
approval: the host's callback, else an operator through the approvals store."""

from __future__ import annotations

import threading

import anyio
import pytest

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ConfigError
from lemon_skills.mcp.config.entries import HttpServer, StdioServer
from lemon_skills.mcp.oauth.provider import LemonOAuthProvider
from lemon_skills.mcp.session.factories import call_approver, oauth_factory, sampling_factory

OAUTH = {"flow": "client_credentials", "client_id": "c", "client_secret": "s"}
REQUEST = {"server": "git", "tool": "push", "name": "mcp_git_push", "arguments": {}}


def test_only_http_entries_with_oauth_get_a_provider_kept_per_entry():
    build = oauth_factory()
    entry = HttpServer(name="a", url="https://h.example/mcp", oauth=OAUTH)
    provider = build(entry)
    assert isinstance(provider, LemonOAuthProvider)
    assert build(entry) is provider  # its tokens survive a reconnect
    assert build(HttpServer(name="b", url="https://h.example/mcp", oauth=OAUTH)) is not provider
    changed = HttpServer(name="a", url="https://h.example/mcp", oauth=OAUTH | {"scope": "x"})
    assert build(changed) is not provider
    assert build(HttpServer(name="c", url="https://h.example/mcp")) is None
    assert build(StdioServer(name="d", command="srv", oauth=OAUTH)) is None


def test_an_unusable_oauth_config_is_a_config_error():
    build = oauth_factory()
    with pytest.raises(ConfigError):
        build(HttpServer(name="a", url="https://h.example/mcp", oauth={"flow": "telepathy"}))


def test_sampling_is_offered_only_to_entries_with_a_policy():
    build = sampling_factory()
    assert build(StdioServer(name="a", command="srv")) is None
    assert callable(build(StdioServer(name="a", command="srv", sampling={"mode": "deny"})))


def test_the_hosts_decision_wins_sync_or_async():
    def yes(request: dict[str, object]) -> bool:
        return request["name"] == "mcp_git_push"

    async def no(request: dict[str, object]) -> bool:
        return False

    assert anyio.run(call_approver(decide=yes), REQUEST) is True
    assert anyio.run(call_approver(decide=no), REQUEST) == "the host declined it"


def test_without_a_host_decision_an_operator_decides_in_the_store(tmp_path):
    store = ApprovalStore(tmp_path / "approvals.db")
    approve = call_approver(approvals=store, timeout=10)

    def operator(verdict: str) -> None:
        for _ in range(400):
            pending = store.list(status="pending")
            if pending:
                if verdict == "approve":
                    store.approve(pending[0].id)
                else:
                    store.deny(pending[0].id, reason="not today")
                return
            threading.Event().wait(0.01)

    outcomes = []
    for verdict in ("approve", "deny"):
        worker = threading.Thread(target=operator, args=(verdict,))
        worker.start()
        outcomes.append(anyio.run(approve, REQUEST))
        worker.join()
    first, second = store.list(status=None)
    assert outcomes == [True, f"approval {second.id} was denied: not today"]
    assert first.tool == "mcp_git_push" and first.action["arguments"] == {}
    assert "tool 'push' is not annotated as safe to run unattended" in first.rationale
