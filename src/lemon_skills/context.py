"""The default context: the shared objects behind the module-level API.

``lemon_skills.list(...)``, ``default_source()``, the introspection store and the settings set
by ``configure()`` are conveniences over objects a host could build itself, the way
``httpx.get`` sits on ``httpx.Client``. Those objects live in one :class:`Context`, built on
first use by their factories: ``current()`` is the context in use, ``use(ctx)`` installs
another (a host embedding two independent setups, a test wanting a clean slate) and
``reset()`` a fresh one, closing what the old one built.

The context knows nothing of what it holds (the kernel may not import skills or mcp): each
owner asks for its service by key, e.g. ``current().service(Registry, Registry)``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

logger = logging.getLogger(__name__)


class Context:
    """Shared services keyed by their owner, each built once by its factory."""

    def __init__(self) -> None:
        self._services: dict[Hashable, Any] = {}
        #: Held while building a service; owners may hold it for a read-modify-write.
        self.lock = threading.RLock()

    def service(self, key: Hashable, factory: Callable[[], T]) -> T:
        """The service under ``key``, built by ``factory`` on first use."""
        with self.lock:
            try:
                found: T = self._services[key]
            except KeyError:
                found = self._services[key] = factory()
            return found

    def peek(self, key: Hashable) -> Any:
        """The service under ``key`` if one was built, else None (builds nothing)."""
        with self.lock:
            return self._services.get(key)

    def put(self, key: Hashable, value: object) -> None:
        """Set the service under ``key``, closing the one it replaces."""
        with self.lock:
            old = self._services.get(key)
            self._services[key] = value
        if old is not None and old is not value:
            _close(old)

    def discard(self, key: Hashable) -> None:
        """Drop (and close) the service under ``key``; the next ``service()`` builds anew."""
        with self.lock:
            old = self._services.pop(key, None)
        if old is not None:
            _close(old)

    def close(self) -> None:
        """Close every service that can be closed; the context is empty afterwards."""
        with self.lock:
            services, self._services = list(self._services.values()), {}
        for service in services:
            _close(service)


def _close(service: object) -> None:
    close = getattr(service, "close", None)
    if callable(close):
        # Closing one service must not stop the others (this also runs at interpreter exit).
        try:
            close()
        except Exception:
            logger.exception("closing %r failed", service)


class _Active:
    """The one mutable slot: which context the module-level API uses."""

    def __init__(self) -> None:
        self.context = Context()
        self.lock = threading.Lock()


_active = _Active()


def current() -> Context:
    """The context the module-level API uses."""
    return _active.context


def use(ctx: Context) -> Context:
    """Make ``ctx`` the context in use; return the previous one (left open)."""
    with _active.lock:
        previous, _active.context = _active.context, ctx
    return previous


def reset() -> Context:
    """Start a fresh context and close the old one; return the new one."""
    fresh = Context()
    use(fresh).close()
    return fresh


@contextlib.contextmanager
def using(ctx: Context | None = None) -> Iterator[Context]:
    """Run a block in ``ctx`` (default: a fresh context), then close it and restore the previous."""
    ctx = ctx or Context()
    previous = use(ctx)
    try:
        yield ctx
    finally:
        use(previous)
        ctx.close()


#: Implementations a lower layer uses without importing them, named by the composition root
#: (``lemon_skills/__init__.py``): role -> ``module:callable`` specs.
_provided: dict[str, tuple[str, ...]] = {}


def provide(role: str, *specs: str) -> None:
    """Name the ``module:callable`` implementations of ``role`` (the composition root does)."""
    _provided[role] = specs


def provided(role: str) -> tuple[Any, ...]:
    """The callables named for ``role``, imported now (none when nothing was provided)."""
    found = []
    for spec in _provided.get(role, ()):
        module, _, attr = spec.partition(":")
        found.append(getattr(importlib.import_module(module), attr))
    return tuple(found)


atexit.register(lambda: current().close())
