"""``lemon skill doctor``: explain in words why a skill is or is not active."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lemon_skills.paths import PathArg
from lemon_skills.skills import api
from lemon_skills.skills import prompt as prompt_mod
from lemon_skills.skills.catalog import enablement, registry
from lemon_skills.skills.catalog.readiness import SkillStatus
from lemon_skills.skills.catalog.registry import View
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.selection import activation, offer
from lemon_skills.skills.usage.report import lifecycle_reasons

#: Extra explainers (usage lifecycle, audit...) registered by other modules of the package.
Explainer = Callable[[Entry, View], list[str]]
EXPLAINERS: list[Explainer] = [lifecycle_reasons]


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Why one skill is or is not active, in words."""

    key: str
    state: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"key": self.key, "state": self.state, "reasons": list(self.reasons)}


def doctor(key: str | None = None, *, cwd: PathArg = None) -> list[DoctorReport]:
    """Reports for one key, or for every visible skill and every skill that failed to load."""
    v = registry.view(cwd)
    if key is not None:
        return [_one(key, v)]
    keys = sorted({*v.by_key, *(d.key for d in v.diagnostics if d.key)})
    return [_one(k, v) for k in keys]


def _one(key: str, v: View) -> DoctorReport:
    entry = v.by_key.get(key)
    problems = [d for d in v.diagnostics if d.key == key]
    # An unreadable skills.json disables everything; it is the first thing to fix.
    state = [f"{d.path}: {d.reason}" for d in v.diagnostics if d.code == "corrupt_state"]
    if entry is None:
        reasons = [f"{d.path} failed to load: {d.reason}" for d in problems if d.level == "error"]
        if not reasons:
            close = registry.suggest(key, v.by_key)
            reasons = [
                f"no skill named {key!r} in any search directory"
                + (f"; did you mean {', '.join(close)}?" if close else "")
            ]
        return DoctorReport(key, "missing", tuple(reasons))
    st = api.status(key, cwd=v.cwd)
    reasons = [*state, *_status_reasons(st, v, key)]
    for shadow in v.shadowed.get(key, []):
        reasons.append(f"shadows the {shadow.source} skill at {shadow.path} (this one wins)")
    reasons.extend(f"{d.path}: {d.reason}" for d in problems if d.code != "shadowed")
    if entry.paths or entry.flag("always_apply"):
        reasons.append("activates: " + activation.describe(entry))
    if entry.manifest.disable_model_invocation:
        reasons.append(
            "disable-model-invocation is set: never offered to the model, load it explicitly"
        )
    for explain in EXPLAINERS:
        reasons.extend(explain(entry, v))
    if st.activation_state in ("active", "not_ready"):
        reasons.extend(_budget_reasons(entry, v))
    if not reasons:
        reasons.append(f"active ({entry.source} skill at {entry.path})")
    return DoctorReport(key, st.activation_state, tuple(reasons))


def _status_reasons(st: SkillStatus, v: View, key: str) -> list[str]:
    out: list[str] = []
    if st.disabled:
        for b in v.enablement.disabled_by(key):
            path = enablement.skills_json_path(b.scope, v.cwd)
            why = "" if b.key == key else f" by its namespace {b.key}"
            out.append(f"disabled{why} in {path} (run `{b.command}`)")
        return out
    if not st.platform_compatible:
        out.append(f"not available on {st.platform}")
    if st.blocked:
        out.append("blocked by the install audit (see `lemon skill verify`)")
    if st.missing_bins:
        out.append("missing binaries on PATH: " + ", ".join(st.missing_bins))
    if st.missing_any_bins:
        out.append("needs one of: " + ", ".join(st.missing_any_bins))
    if st.missing_env:
        out.append("unset environment variables: " + ", ".join(st.missing_env))
    if st.missing_config:
        out.append(
            "missing config (env var or skills.json skills.<key>.config): "
            + ", ".join(st.missing_config)
        )
    if st.missing_skills:
        out.append("required skills not available: " + ", ".join(st.missing_skills))
    if st.missing_any_skills:
        out.append("needs one of the skills: " + ", ".join(st.missing_any_skills))
    if st.missing_mcp_servers:
        out.append("required MCP servers not configured: " + ", ".join(st.missing_mcp_servers))
    if st.missing_dependencies:
        out.append("not offered in prompts until its dependencies are there")
    return out


def _budget_reasons(entry: Entry, v: View) -> list[str]:
    rendered = prompt_mod.render([], offer.prompt_catalogue(v))
    if entry.key in rendered.omitted:
        return [f"left out of the prompt catalogue: over the {rendered.budget}-character budget"]
    if entry.key in rendered.shortened:
        return ["description shortened in the prompt catalogue to fit the budget"]
    return []
