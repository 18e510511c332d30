"""What a text meant for a model hides: the checks MCP tool descriptions pass before use (pure).

A description reaches the model verbatim, so it is read with the skill audit's document rules:
tag characters that spell out hidden text, bidi and zero-width characters, and instructions
that try to override the agent's, deceive the user, read secrets or send them away.
"""

from __future__ import annotations

import re

from lemon_skills.text.chars import decode_tags, find_invisible
from lemon_skills.text.rules import LINE_RULES, SECRET_READS

_DOCUMENT_RULES = tuple(r for r in LINE_RULES if r.applies == "markdown")
_HIDDEN = re.compile(
    "[\U000e0000-\U000e007f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069"
    "\u200b-\u200d\u2060\ufeff\u180e]"
)


def description_findings(text: str) -> list[str]:
    """One sentence per problem found in ``text`` (empty when it reads as what it shows)."""
    out: list[str] = []
    kinds = sorted({i.kind for i in find_invisible(text, skip_leading_bom=False)})
    for kind in kinds:
        if kind == "tag character" and (hidden := decode_tags(text)):
            out.append(f"hidden text in Unicode tag characters: {hidden!r}")
        else:
            out.append(f"contains {kind}s")
    lower = text.lower()
    for rule in _DOCUMENT_RULES:
        match = next(iter(rule.finditer(text, lower)), None)
        if match is not None:
            out.append(f"{rule.message}: {match.group(0).strip()!r}")
    for probe in SECRET_READS:
        match = next(iter(probe.finditer(text, lower)), None)
        if match is not None:
            out.append(f"points the agent at secrets: {match.group(0).strip()!r}")
            break
    return out


def without_hidden(text: str) -> str:
    """``text`` without invisible and direction-changing characters."""
    return _HIDDEN.sub("", text)
