"""The ``sampling`` object of a server entry: its keys and their validation (pure, no SDK).

``mode`` is ``deny`` (the default), ``model`` or ``reviewed_model``; ``max_tokens`` (or
``maxTokens``) caps what a request may ask for; ``allowed_models`` restricts the requested
model; ``reviewer`` is ``ops_approval`` (or ``approval``, or ``require_approval: true``) or,
in code, a function; ``approval_timeout_ms`` and ``approval_context`` shape the approval; in
code a ``delegate`` function may be given too. :mod:`lemon_skills.mcp.sampling` applies it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

SamplingMode = Literal["deny", "model", "reviewed_model"]

MODES: tuple[SamplingMode, ...] = ("deny", "model", "reviewed_model")
DEFAULT_MAX_TOKENS = 1024
DEFAULT_APPROVAL_TIMEOUT_S = 300.0
OPS_APPROVAL = frozenset({"ops_approval", "approval"})


def validate_policy(raw: Any) -> list[str]:
    """Every problem with a ``sampling`` config object, as messages (empty when valid)."""
    if not isinstance(raw, Mapping):
        return ["sampling must be an object"]
    errors = []
    mode = raw.get("mode", "deny")
    if mode not in MODES:
        errors.append("sampling.mode must be model, reviewed_model, or deny")
    reviewer = raw.get("reviewer")
    if reviewer is not None and not (callable(reviewer) or reviewer in OPS_APPROVAL):
        errors.append("sampling.reviewer must be a function or ops_approval")
    max_tokens = raw.get("max_tokens", raw.get("maxTokens"))
    if max_tokens is not None and not positive_int(max_tokens):
        errors.append("sampling.max_tokens must be a positive integer")
    models = raw.get("allowed_models")
    if models is not None and not (
        isinstance(models, list | tuple) and all(isinstance(m, str) for m in models)
    ):
        errors.append("sampling.allowed_models must be a list of strings")
    timeout = raw.get("approval_timeout_ms")
    if timeout is not None and not positive_int(timeout):
        errors.append("sampling.approval_timeout_ms must be a positive integer")
    delegate = raw.get("delegate")
    if delegate is not None and not callable(delegate):
        errors.append("sampling.delegate must be a function")
    context = raw.get("approval_context")
    if context is not None and not isinstance(context, Mapping):
        errors.append("sampling.approval_context must be an object")
    return errors


def positive_int(value: Any) -> bool:
    """A real (non-bool) integer above zero."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def server_slug(name: str) -> str:
    """``name`` as used inside approval tool names: lower-case ``[a-z0-9_]``."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "server"
