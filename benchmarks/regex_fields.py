"""``entry_fields`` as it was before it scanned bodies with ``str.find``: code fences dropped by
a multi-line regex anchored at line starts, headings and "when to use" sections found by
more. The baseline of ``field_extraction.py`` and the definition the index tests hold the
scan to (it must give exactly these fields).
"""

from __future__ import annotations

import re

from lemon_skills.search import tokens
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import index as ranking

_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.M)
_LEVEL = re.compile(r"^ {0,3}(#{1,6})[ \t]", re.M)
_USAGE = re.compile(
    r"^ {0,3}(#{1,6})[ \t]+(when to (use|activate|apply)\b|use (this skill )?when\b"
    r"|(common |related )?use cases\b|(proactive )?triggers?\b)[^\n]*$",
    re.I | re.M,
)


def regex_entry_fields(entry: Entry) -> dict[str, str]:
    """The fields of ``entry`` as ``entry_fields`` gave them."""
    m = entry.manifest
    body = entry.body[: ranking.BODY_CHARS]
    key = entry.key if entry.server is None else entry.key.partition(":")[2]
    words = [*tokens.key_words(key), *tokens.key_words(entry.name)]
    return dict(
        name=" ".join(dict.fromkeys(words)),
        keywords=" ".join([*m.keywords, *m.tags, *([m.category] if m.category else [])]),
        description=entry.description,
        **body_fields(body),
        body=body,
    )


def body_fields(body: str) -> dict[str, str]:
    """The headings and usage sections of ``body`` (already cut to ``BODY_CHARS``)."""
    prose = _FENCE.sub("", body)
    return {"headings": "\n".join(_HEADING.findall(prose)), "usage": usage_sections(prose)}


def usage_sections(body: str) -> str:
    """``usage_sections`` as it was."""
    out = []
    for m in _USAGE.finditer(body):
        level = len(m.group(1))
        ends = (h.start() for h in _LEVEL.finditer(body, m.end()) if len(h.group(1)) <= level)
        out.append(body[m.end() : next(ends, len(body))].strip())
    return "\n".join(out)
