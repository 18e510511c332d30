"""The background curator manager: idle, pause and interval gates, one pass at a time,
review submission through the host router."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.skills.curator import run as curator_run
from lemon_skills.skills.curator.scheduler import (
    CuratorConfig,
    CuratorManager,
    PassResult,
    ReviewRequest,
)
from lemon_skills.skills.curator.state import load_state, reports_root, run_lock, update_state
from lemon_skills.skills.usage.store import UsageStore, iso, usage_path
from tests.helpers.curator import NOW, Clock, days_ago, standard_library
from tests.helpers.skills import write_skill


class HostRouter:
    """A host platform's router: its active sessions and the review runs it was asked for."""

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.submitted: list[ReviewRequest] = []
        self.fail_submit = False
        self.fail_list = False
        self.listed = threading.Event()

    def list_active_sessions(self) -> Sequence[object]:
        self.listed.set()
        if self.fail_list:
            raise RuntimeError("router down")
        return list(self.sessions)

    def submit(self, request: ReviewRequest) -> str | None:
        if self.fail_submit:
            raise RuntimeError("queue full")
        self.submitted.append(request)
        return f"host-run-{len(self.submitted)}"


def runs_on_disk() -> list[str]:
    root = reports_root("global")
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


@pytest.fixture
def library(global_skills: Path) -> Path:
    standard_library(global_skills, usage_path("global"))
    return global_skills


def make(router: HostRouter, clock: Clock, **config: object) -> CuratorManager:
    return CuratorManager(router, CuratorConfig(**config), clock=clock)  # type: ignore[arg-type]


def test_first_pass_is_deferred_one_interval_after_the_manager_first_sees_the_scope(
    library: Path,
) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock)
    clock.advance(hours=3)
    assert m.tick().reason == "first_run_deferred"
    assert load_state("global").first_seen_at == iso(clock.now)
    clock.advance(hours=167)
    assert m.tick().reason == "not_due"
    clock.advance(hours=1)
    assert m.tick().started
    result = m.wait(10)
    assert result is not None and result.status == "ran"
    assert runs_on_disk() == ["20260513T030000"]


def test_never_runs_while_the_router_reports_active_sessions(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, defer_first_run=False)
    router.sessions = ["agent:default:main"]
    for _ in range(5):
        clock.advance(days=30)
        assert m.tick().reason == "busy"
    router.sessions = []
    assert m.tick().reason == "not_idle"  # idle time counts from the last busy tick
    clock.advance(hours=1, minutes=59)
    assert m.tick().reason == "not_idle"
    clock.advance(minutes=1)
    assert m.tick().started
    m.wait(10)
    assert len(runs_on_disk()) == 1


def test_a_failing_router_counts_as_busy_not_idle(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, defer_first_run=False)
    router.fail_list = True
    clock.advance(days=30)
    assert m.tick().reason == "router_error"
    assert runs_on_disk() == []


def test_not_before_the_interval_since_the_last_run(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, defer_first_run=False, interval_hours=24)
    clock.advance(hours=2)
    assert m.tick().started
    m.wait(10)
    clock.advance(hours=23, minutes=59)
    assert m.tick().reason == "not_due"
    clock.advance(minutes=1)
    assert m.tick().started
    m.wait(10)
    assert len(runs_on_disk()) == 2
    assert load_state("global").interval_hours == 24


def test_never_two_passes_at_once(library: Path) -> None:
    release, entered = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow_pass() -> PassResult:
        calls.append(1)
        entered.set()
        assert release.wait(10)
        return PassResult(status="ran", reason="test")

    router, clock = HostRouter(), Clock(NOW)
    m = CuratorManager(
        router, CuratorConfig(defer_first_run=False), clock=clock, run_pass=slow_pass
    )
    clock.advance(hours=3)
    assert m.tick().started
    assert entered.wait(10)
    for _ in range(3):
        clock.advance(days=30)
        assert m.tick().reason == "running"
    release.set()
    assert m.wait(10) == PassResult(status="ran", reason="test")
    assert calls == [1]
    assert m.tick().started  # the fake pass wrote no state, so it is due again
    m.wait(10)
    assert calls == [1, 1]


def test_a_pass_of_another_process_holding_the_scope_lock_is_not_doubled(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, defer_first_run=False)
    with run_lock("global"):
        assert m.run_once() == PassResult(status="skipped", reason="busy")
    assert runs_on_disk() == []


def test_pass_rechecks_the_interval_under_the_lock(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, defer_first_run=False)
    curator_run.run(now=NOW)  # another process ran meanwhile
    assert m.run_once().reason == "not_due"
    assert len(runs_on_disk()) == 1


def test_paused_and_disabled_managers_do_not_run(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    update_state("global", None, lambda s: replace(s, paused=True))
    paused, off = make(router, clock, defer_first_run=False), make(router, clock, enabled=False)
    clock.advance(days=30)
    assert paused.tick().reason == "paused"
    assert off.tick().reason == "disabled"
    assert runs_on_disk() == []


def test_review_is_submitted_with_the_default_target_and_learning_only_tools(
    library: Path,
) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, defer_first_run=False)
    clock.advance(hours=2)
    assert m.tick().started
    result = m.wait(10)

    assert result is not None and result.reason == "submitted"
    [req] = router.submitted
    assert req.session_key == "agent:default:main"
    assert req.agent_id == "default"
    assert req.origin == "skill_curator"
    assert req.tool_policy == {
        "allow": ["read_skill", "skill_manage", "search_memory", "memory_topic"]
    }
    assert req.prompt.startswith("You are running as Lemon's background skill curator.")
    assert "- mid state=stale" in req.prompt
    assert "old" not in req.prompt.split("Candidates:")[1]
    assert req.meta["skill_curator"] is True
    assert req.meta["skill_curator_candidate_count"] == 1
    assert result.run is not None and result.run.report_path is not None
    doc = json.loads(result.run.report_path.read_text(encoding="utf-8"))
    assert doc["review_submission"]["run_id"] == "host-run-1"
    assert doc["review_submission"]["status"] == "submitted"
    assert doc["review_submission"]["session_key"] == "agent:default:main"
    report = (result.run.report_path.parent / "REPORT.md").read_text(encoding="utf-8")
    assert "- Run id: host-run-1" in report
    assert "- Status: submitted" in report


def test_agent_id_and_session_key_are_configurable(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    clock.advance(hours=2)
    make(router, clock, defer_first_run=False, agent_id="ops").run_once()
    clock.advance(hours=168)
    make(router, clock, defer_first_run=False, session_key="agent:ops:review").run_once()
    assert [r.session_key for r in router.submitted] == ["agent:ops:main", "agent:ops:review"]
    assert router.submitted[0].agent_id == "ops"


def test_no_submission_when_no_agent_authored_candidate_is_left(global_skills: Path) -> None:
    usage = usage_path("global")
    UsageStore(usage, clock=lambda: days_ago(100)).record_load({"key": "mine", "result": "ok"})
    router, clock = HostRouter(), Clock(NOW)
    result = make(router, clock, defer_first_run=False).run_once()
    assert result.reason == "no_review_required"
    assert router.submitted == []
    assert result.run is not None and result.run.report_path is not None
    assert "Not submitted." in (result.run.report_path.parent / "REPORT.md").read_text("utf-8")


def test_a_failed_submission_is_recorded(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    router.fail_submit = True
    result = make(router, clock, defer_first_run=False).run_once()
    assert result.reason == "failed"
    assert result.run is not None and result.run.report_path is not None
    doc = json.loads(result.run.report_path.read_text(encoding="utf-8"))
    assert doc["review_submission"]["status"] == "failed"
    assert doc["review_submission"]["error"] == "queue full"


def test_background_pass_caps_archives_per_run(global_skills: Path) -> None:
    usage = usage_path("global")
    for i in range(5):
        UsageStore(usage, clock=lambda: days_ago(200)).record_write(
            {"name": f"s{i}", "action": "create", "result": "ok"}
        )
        write_skill(global_skills, f"s{i}")
        UsageStore(usage, clock=lambda: days_ago(100)).record_load({"key": f"s{i}", "result": "ok"})
    router, clock = HostRouter(), Clock(NOW)
    result = make(router, clock, defer_first_run=False, max_archives=2).run_once()
    assert result.run is not None
    assert len(result.run.document["archived"]) == 2
    assert len(result.run.document["marked_stale"]) == 3


def test_start_ticks_on_a_thread_and_stop_ends_it(library: Path) -> None:
    router, clock = HostRouter(), Clock(NOW)
    m = make(router, clock, tick_seconds=0.01)
    with m:
        assert router.listed.wait(10)
    assert m.stop(timeout=10)
    assert not m.running
    assert m.tick().reason == "stopped"


def test_stop_waits_for_a_running_pass_and_says_whether_it_finished(library: Path) -> None:
    release, entered = threading.Event(), threading.Event()

    def slow_pass() -> PassResult:
        entered.set()
        assert release.wait(10)
        return PassResult(status="ran", reason="test")

    router, clock = HostRouter(), Clock(NOW)
    cfg = CuratorConfig(defer_first_run=False, tick_seconds=0.01)
    m = CuratorManager(router, cfg, clock=clock, run_pass=slow_pass)
    clock.advance(hours=3)
    m.start()
    assert entered.wait(10)
    assert not m.stop(timeout=0.05)  # still inside the pass
    release.set()
    assert m.stop(timeout=10)
    assert m.last_pass == PassResult(status="ran", reason="test")


def test_unknown_config_keys_and_bad_thresholds_fail_at_construction() -> None:
    with pytest.raises(ConfigError, match="unknown curator setting"):
        CuratorConfig.from_mapping({"intervl_hours": 5})
    cfg = CuratorConfig.from_mapping({"agent_id": "ops", "cwd": "/tmp/x", "scope": "project"})
    assert cfg.cwd == Path("/tmp/x") and cfg.target_session == "agent:ops:main"
    with pytest.raises(ConfigError, match="archive-after-days"):
        CuratorManager(HostRouter(), CuratorConfig(stale_after_days=50, archive_after_days=10))
