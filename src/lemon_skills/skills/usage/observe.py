"""The bridge from telemetry to storage: each skill event updates usage and is persisted.

``emit`` is what the tools and the prompt renderer call: it attaches the bridge on first use
(once per process; ``telemetry.detach(BRIDGE_ID)`` turns it off for good) and emits. The bridge
is best-effort by design: a corrupt sidecar or a busy database is logged, never raised into
the tool call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lemon_skills import telemetry
from lemon_skills.context import current
from lemon_skills.errors import LemonSkillsError
from lemon_skills.telemetry import Event, EventName

if TYPE_CHECKING:
    from lemon_skills.skills.prompt import RenderedPrompt

logger = logging.getLogger(__name__)

BRIDGE_ID: Final = "lemon-skills-introspection-bridge"
OBSERVED: Final = {
    "skill.load": "skill_load_observed",
    "skill.write": "skill_write_observed",
    "skill.prompt_render": "skill_prompt_render_observed",
}
#: Caller ids stored in their own columns rather than in the payload.
_ID_COLUMNS: Final = ("run_id", "session_key", "session_id", "agent_id")


def ensure_bridge() -> None:
    """Attach the bridge unless this context attached (or detached) it before."""
    current().service(BRIDGE_ID, _attach)


def _attach() -> bool:
    telemetry.attach(bridge, handler_id=BRIDGE_ID)
    return True


def emit(name: EventName, metadata: Mapping[str, Any]) -> Event:
    """Emit a skill event with the bridge in place."""
    ensure_bridge()
    return telemetry.emit(name, metadata)


def bridge(event: Event) -> None:
    """Update the usage sidecar for loads and writes, then persist the event."""
    try:
        update_usage(event)
    except (LemonSkillsError, OSError) as exc:
        logger.warning("skill usage not recorded for %s: %s", event.name, exc)
    try:
        persist(event)
    except (LemonSkillsError, OSError) as exc:
        logger.warning("skill event not persisted for %s: %s", event.name, exc)


def update_usage(event: Event) -> bool:
    """Count the event into its scope's sidecar; return True when a record changed."""
    if event.name == "skill.prompt_render":
        return False
    from lemon_skills.skills.usage.store import UsageStore, scope_of  # loads on the first event

    where = scope_of(event.metadata)
    if where is None:
        return False
    store = UsageStore.for_scope(*where)
    if event.name == "skill.load":
        return store.record_load(event.metadata)
    return store.record_write(event.metadata)


def persist(event: Event) -> int:
    """Write the event to the introspection store; return its row id."""
    from lemon_skills import introspection  # sqlite3 loads on the first event, not at import

    meta = event.metadata
    payload = {k: (list(v) if isinstance(v, tuple) else v) for k, v in meta.items()}
    for k in _ID_COLUMNS:
        payload.pop(k, None)
    return introspection.default_store().record(
        OBSERVED[event.name],
        payload,
        ts=event.system_time_ns / 1e9,
        key=_str(meta.get("key") or meta.get("name")),
        result=_str(meta.get("result")),
        run_id=_str(meta.get("run_id")),
        session_key=_str(meta.get("session_key") or meta.get("session_id")),
        session_id=_str(meta.get("session_id")),
        agent_id=_str(meta.get("agent_id")),
    )


#: How many left-out keys a ``skill.prompt_render`` event names (``omitted_count`` stays
#: exact): the first are the matches and nearest skills that did not fit; naming every skill a
#: large catalogue leaves out would make each event, and each render, grow with the catalogue.
OMITTED_KEYS = 50


def prompt_metadata(
    rendered: RenderedPrompt,
    cwd: Path | None,
    mode: str,
    context: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``skill.prompt_render`` metadata: which keys were shown, cut or left out (the first
    ``OMITTED_KEYS`` of those); no text."""
    ctx = {k: v for k, v in (context or {}).items() if k in telemetry.CONTEXT_KEYS}
    return {
        "surface": "relevant" if rendered.relevant else "available",
        "mode": mode,
        "skill_count": len(rendered.relevant) + len(rendered.listed),
        "skill_keys": [*rendered.relevant, *rendered.listed],
        "relevant_keys": list(rendered.relevant),
        "omitted_keys": list(rendered.omitted[:OMITTED_KEYS]),
        "truncated_count": len(rendered.truncated),
        "shortened_count": len(rendered.shortened),
        "omitted_count": len(rendered.omitted),
        "budget": rendered.budget,
        "chars": len(rendered.text),
        "cwd": str(cwd) if cwd is not None else None,
        **ctx,
    }


def set_bridge(enabled: bool) -> None:
    """Turn the usage/introspection bridge on or off for the default context."""
    ctx = current()
    with ctx.lock:
        if enabled:
            telemetry.attach(bridge, handler_id=BRIDGE_ID)
        else:
            telemetry.detach(BRIDGE_ID)
        ctx.put(BRIDGE_ID, enabled)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
