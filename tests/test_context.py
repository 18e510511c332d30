"""The default context: shared services built once, replaced and closed as a whole."""

from __future__ import annotations

import threading

import lemon_skills
from lemon_skills import context, settings
from lemon_skills.skills.catalog.registry import default_registry


class Closable:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_a_service_is_built_once_per_context():
    built = []
    ctx = context.Context()

    def factory() -> Closable:
        built.append(1)
        return Closable()

    threads = [threading.Thread(target=ctx.service, args=("k", factory)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1
    assert ctx.service("k", factory) is ctx.peek("k")


def test_reset_closes_what_the_old_context_built_and_starts_empty():
    old = context.current()
    service = old.service("svc", Closable)
    fresh = context.reset()
    assert service.closed == 1
    assert fresh is context.current() and fresh is not old
    assert fresh.peek("svc") is None


def test_put_and_discard_close_the_replaced_service():
    ctx = context.Context()
    first = ctx.service("svc", Closable)
    ctx.put("svc", Closable())
    assert first.closed == 1
    second = ctx.peek("svc")
    ctx.discard("svc")
    assert second.closed == 1 and ctx.peek("svc") is None


def test_module_level_api_follows_the_context_in_use(project, project_skills):
    outer = default_registry()
    with context.using() as inner:
        assert default_registry() is inner.peek(type(outer)) is not outer
        lemon_skills.configure(mcp_disabled=True)
        assert settings.settings().mcp_disabled
    assert default_registry() is outer
    assert not settings.settings().mcp_disabled


def test_settings_generations_only_grow_across_contexts():
    first = lemon_skills.configure(mcp_cache_ttl_ms=1000).generation
    context.reset()
    assert settings.settings().generation > first
    assert settings.settings().mcp_cache_ttl_ms == 300_000
