"""Skill telemetry: ``skill.load``, ``skill.write`` and ``skill.prompt_render`` events.

Hosts subscribe with ``attach(handler)``; every event also becomes an OpenTelemetry span event
on the current span when ``opentelemetry-api`` is importable. Metadata is normalised (None
dropped, paths stringified, ``reason`` capped) and never carries skill body text: the emitters
only pass keys, names, paths and counts, and keys that could hold content are stripped here too.

A handler that raises is logged and skipped; telemetry never breaks the call that emitted it.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

logger = logging.getLogger(__name__)

EventName = Literal["skill.load", "skill.write", "skill.prompt_render"]
EVENT_NAMES: Final = ("skill.load", "skill.write", "skill.prompt_render")

#: Longest ``reason`` kept on an event.
MAX_REASON = 500
#: Parameters that carry skill text; dropped even if an emitter passes them by mistake.
CONTENT_KEYS: Final = frozenset(
    {"content", "body", "file_content", "old_string", "new_string", "text"}
)
#: Metadata fields that identify the caller rather than describe the event.
CONTEXT_KEYS: Final = ("tool_call_id", "run_id", "session_key", "session_id", "agent_id")

MetaValue = str | int | float | bool | tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One telemetry event: its name, ``count``/``system_time`` measurements and metadata."""

    name: EventName
    metadata: Mapping[str, MetaValue]
    system_time_ns: int = field(default_factory=time.time_ns)
    count: int = 1

    @property
    def measurements(self) -> dict[str, int]:
        """``{"count": 1, "system_time": <ns since the epoch>}``."""
        return {"count": self.count, "system_time": self.system_time_ns}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "measurements": self.measurements,
            "metadata": {
                k: list(v) if isinstance(v, tuple) else v for k, v in self.metadata.items()
            },
        }


HandlerFn = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class _Subscription:
    handler: HandlerFn
    events: frozenset[str] | None


_lock = threading.Lock()
_handlers: dict[str, _Subscription] = {}
_ids = itertools.count(1)


def attach(
    handler: HandlerFn, *, events: Iterable[str] | None = None, handler_id: str | None = None
) -> str:
    """Call ``handler(event)`` for every event (or only the named ``events``); return its id.

    Attaching again under an existing ``handler_id`` replaces that handler.

    Raises:
        ValueError: an unknown event name in ``events``.
    """
    wanted = None if events is None else frozenset(events)
    unknown = sorted((wanted or frozenset()) - set(EVENT_NAMES))
    if unknown:
        raise ValueError(f"unknown telemetry events {unknown}; known: {list(EVENT_NAMES)}")
    with _lock:
        hid = handler_id or f"handler-{next(_ids)}"
        _handlers[hid] = _Subscription(handler, wanted)
    return hid


def detach(handler: str | HandlerFn) -> bool:
    """Remove a handler by id or by the function itself; return True if one was removed."""
    with _lock:
        ids = [
            hid
            for hid, sub in _handlers.items()
            if hid == handler or (not isinstance(handler, str) and sub.handler == handler)
        ]
        for hid in ids:
            del _handlers[hid]
    return bool(ids)


def attached() -> list[str]:
    """Ids of the attached handlers, in attach order."""
    with _lock:
        return list(_handlers)


def normalise(metadata: Mapping[str, Any]) -> dict[str, MetaValue]:
    """Drop None and content keys, stringify paths and odd values, cap ``reason``."""
    out: dict[str, MetaValue] = {}
    for key, value in metadata.items():
        if value is None or key in CONTENT_KEYS:
            continue
        if isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, os.PathLike):
            out[key] = os.fspath(value)
        elif isinstance(value, list | tuple | set | frozenset):
            out[key] = tuple(str(v) for v in value)
        else:
            out[key] = str(value)
    if "reason" in out:
        out["reason"] = str(out["reason"])[:MAX_REASON]
    return out


def emit(name: EventName, metadata: Mapping[str, Any]) -> Event:
    """Build the event, hand it to every subscribed handler and to OpenTelemetry; return it."""
    event = Event(name=name, metadata=normalise(metadata))
    with _lock:
        subs = list(_handlers.items())
    for hid, sub in subs:
        if sub.events is not None and name not in sub.events:
            continue
        try:
            sub.handler(event)
        except Exception:  # a subscriber's bug must never fail the tool call that emitted
            logger.exception("telemetry handler %s failed on %s", hid, name)
    _to_opentelemetry(event)
    return event


def _otel_trace() -> Any:
    """The ``opentelemetry.trace`` module if the host has loaded it, else None.

    Not imported here: a span can only be recording once a tracer provider was set through
    that module, and importing it for every short-lived ``lemon`` process costs more than
    the command it observes."""
    return sys.modules.get("opentelemetry.trace")


def _to_opentelemetry(event: Event) -> None:
    trace = _otel_trace()
    if trace is None:
        return
    span = trace.get_current_span()
    if not span.is_recording():
        return
    attributes = {
        f"lemon_skills.{k}": list(v) if isinstance(v, tuple) else v
        for k, v in event.metadata.items()
    }
    span.add_event(f"lemon_skills.{event.name}", attributes, timestamp=event.system_time_ns)
