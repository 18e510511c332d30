"""The ``skill_manage`` agent tool: create and maintain skills, pin, archive, report usage.

Parameter checks and the order of rejections follow Lemon's skill_manage; the work is done by
``skills.manage``. Every action except ``report`` emits ``skill.write``, rejected ones included.
A refusal comes back as an error result whose text says what to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from lemon_skills.errors import LemonSkillsError, SkillWriteError
from lemon_skills.paths import Scope, resolve_cwd
from lemon_skills.skills.authoring import ops as manage
from lemon_skills.skills.authoring.rules import (
    MAX_FILE_BYTES,
    MAX_SKILL_CHARS,
    SUPPORT_DIRS,
    check_name,
)
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.usage.observe import emit
from lemon_skills.tool import Tool, ToolContext, ToolResult

DESCRIPTION = (
    "Create and maintain skills (SKILL.md folders). Actions: create and edit (content = the "
    "whole SKILL.md with name/description frontmatter and instructions), patch (old_string -> "
    "new_string in SKILL.md or a file_path), write_file / remove_file (file_path under "
    f"{', '.join(d + '/' for d in SUPPORT_DIRS)}), delete, pin / unpin (protect from delete and "
    "archive), archive / restore (disable or re-enable), report (usage and stale candidates). "
    "scope is project (default, <cwd>/.lemon/skill) or global."
)

PARAMETERS: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(manage.ACTIONS)},
        "name": {
            "type": "string",
            "description": "Skill folder name: lowercase letters, digits, '.', '_', '-'.",
        },
        "scope": {"type": "string", "enum": ["project", "global"]},
        "content": {
            "type": "string",
            "description": f"Full SKILL.md for create/edit (at most {MAX_SKILL_CHARS} chars).",
        },
        "file_path": {
            "type": "string",
            "description": "Supporting file, e.g. references/api.md; omit for SKILL.md in patch.",
        },
        "file_content": {
            "type": "string",
            "description": f"Text of the file for write_file (at most {MAX_FILE_BYTES} bytes).",
        },
        "old_string": {"type": "string", "description": "Exact text to replace (patch)."},
        "new_string": {"type": "string", "description": "Replacement text, may be empty."},
        "replace_all": {"type": "boolean", "description": "Replace every match (patch)."},
        "approval_id": {
            "type": "string",
            "description": "An approval the user granted for changing, pinning, unpinning, "
            "archiving or restoring a skill you did not create, or for a create that hides an "
            "existing skill or that the audit warns about.",
        },
        "stale_after_days": {"type": ["integer", "string"], "description": "report: default 30"},
        "archive_after_days": {"type": ["integer", "string"], "description": "report: default 90"},
    },
    "required": ["action"],
}


def call(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Handle one ``skill_manage`` call."""
    action = params.get("action")
    scope_param = params.get("scope") or "project"
    meta = _meta(params, ctx, action, scope_param)
    try:
        t = _target(params, ctx, action, scope_param)
        if t.name:
            meta["name"] = t.name
            if (t.root / t.name).is_dir():
                meta["path"] = str(t.root / t.name)
        outcome = manage.run(str(action), t, params)
    except (LemonSkillsError, OSError) as exc:
        reason = _reason(exc)
        if action != "report":
            emit("skill.write", {**meta, "result": "error", "reason": reason})
        return ToolResult.error(reason, error=type(exc).__name__, action=action)
    if action != "report":
        d = outcome.details
        emit(
            "skill.write",
            {
                **meta,
                "result": "ok",
                "path": d.get("path"),
                "file_path": d.get("file_path") or meta.get("file_path"),
                "audit_status": (d.get("audit") or {}).get("status"),
                "lifecycle_state": d.get("lifecycle_state"),
                "replacements": d.get("replacements"),
            },
        )
    return ToolResult(outcome.text, dict(outcome.details))


def _reason(exc: LemonSkillsError | OSError) -> str:
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"could not change the skill on disk: {exc.strerror or exc}{where}"
    return str(exc) + (f" ({exc.hint})" if exc.hint else "")


def _target(params: Mapping[str, Any], ctx: ToolContext, action: Any, scope: Any) -> manage.Target:
    if not isinstance(action, str):
        raise SkillWriteError("missing required string parameter: action")
    if not action.strip():
        raise SkillWriteError("action must be a non-empty string")
    if scope not in ("project", "global"):
        raise SkillWriteError("scope must be 'project' or 'global'")
    sc: Scope = scope
    cwd = resolve_cwd(ctx.cwd) if ctx.cwd is not None else None
    t = manage.target(sc, cwd, agent_id=ctx.agent_id)
    raw_name = params.get("name")
    if action != "report" or (isinstance(raw_name, str) and raw_name.strip()):
        t = replace(t, name=check_name(raw_name))
    if t.name and ctx.agent_id:
        # A skill outside the calling agent's profile does not exist for it, to write either.
        profile = registry.view(cwd).enablement.profiles.get(ctx.agent_id)
        if profile is not None and not profile.admits(t.name):
            raise SkillWriteError(f"skill {t.name!r} is outside this agent's skill profile")
    return t


def _meta(params: Mapping[str, Any], ctx: ToolContext, action: Any, scope: Any) -> dict[str, Any]:
    cwd: Path | None = resolve_cwd(ctx.cwd) if ctx.cwd is not None else None
    return {
        "action": action if isinstance(action, str) else None,
        "name": params.get("name") if isinstance(params.get("name"), str) else None,
        "scope": scope if isinstance(scope, str) else None,
        "file_path": params.get("file_path") if isinstance(params.get("file_path"), str) else None,
        "cwd": str(cwd) if cwd is not None else None,
        **ctx.metadata(),
    }


skill_manage = Tool(
    name="skill_manage",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    handler=call,
    label="Manage skills",
)
