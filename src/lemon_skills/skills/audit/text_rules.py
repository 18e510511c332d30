"""Text rules of the install audit: patterns, combined exfiltration, hidden characters.

``scan_text`` returns the findings for one file's text; ``audit`` decides which files are
scripts (where risky commands block) and which are documents (where they need approval).
"""

from __future__ import annotations

import bisect
import re

from lemon_skills.skills.audit.model import AuditFinding
from lemon_skills.text.chars import classify as classify_char
from lemon_skills.text.chars import decode_tags, find_invisible
from lemon_skills.text.rules import LINE_RULES, NETWORK_SENDS, SECRET_READS, Severity

_MAX_PER_RULE = 5
_FLAG = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
_EXCERPT = 160


class _Text:
    """A file's text with its line starts, for mapping match offsets to lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def line(self, no: int) -> str:
        end = self.starts[no] - 1 if no < len(self.starts) else len(self.text)
        return self.text[self.starts[no - 1] : end]

    def hit(
        self, rule: str, severity: Severity, message: str, path: str, offset: int
    ) -> AuditFinding:
        no = self.line_of(offset)
        return _hit(rule, severity, message, path, no, self.line(no), offset - self.starts[no - 1])


def scan_text(path: str, text: str, *, in_script: bool, markdown: bool) -> list[AuditFinding]:
    """Every text finding for one file; ``markdown`` enables the prompt-injection rules."""
    t = _Text(text)
    out = _invisible(path, t, in_script)
    for rule in LINE_RULES:
        if rule.applies == "markdown" and not markdown:
            continue
        sev = rule.in_script if in_script else rule.in_doc
        out.extend(
            t.hit(rule.rule, sev, rule.message, path, m.start())
            for m in rule.finditer(t.text, t.lower)
        )
    out.extend(_exfiltration(path, t, in_script))
    return _cap(out)


def _exfiltration(path: str, t: _Text, in_script: bool) -> list[AuditFinding]:
    sends = [
        (t.line_of(m.start()), m.group(0).strip())
        for probe in NETWORK_SENDS
        for m in probe.finditer(t.text, t.lower)
    ]
    if not sends:
        return []
    out = []
    reads = [m for probe in SECRET_READS for m in probe.finditer(t.text, t.lower)]
    for m in sorted(reads, key=lambda m: m.start()):
        no = t.line_of(m.start())
        other, tool = min(sends, key=lambda s: abs(s[0] - no))
        sev: Severity = "block" if other == no or in_script else "warn"
        message = (
            f"reads {m.group(0).strip()!r} and sends data off the machine (line {other}: {tool!r})"
        )
        out.append(t.hit("exfiltration", sev, message, path, m.start()))
    return out


_INVISIBLE = re.compile(
    "[\U000e0000-\U000e007f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069"
    "\u200b-\u200d\u2060\ufeff\u180e\u00ad\u2028\u2029]"
)


def _invisible(path: str, t: _Text, in_script: bool) -> list[AuditFinding]:
    by_line: dict[tuple[int, str], list[int]] = {}
    for m in _INVISIBLE.finditer(t.text):
        kind = classify_char(ord(m.group(0)))
        if kind is None or (m.start() == 0 and m.group(0) == "\ufeff"):
            continue
        by_line.setdefault((t.line_of(m.start()), kind), []).append(ord(m.group(0)))
    out = []
    for (no, kind), cps in sorted(by_line.items()):
        line = t.line(no)
        if kind == "tag character":
            # Subdivision flags (England, Scotland, Wales) are a black flag plus tag characters.
            rest = _FLAG.sub("", line)
            if not any(0xE0000 <= ord(c) <= 0xE007F for c in rest):
                continue
            sev: Severity = "block"
            message = f"hidden text in Unicode tag characters: {decode_tags(rest)!r}"
        elif kind == "bidi control":
            sev = "block" if in_script else "warn"
            message = "bidi control characters can make text read differently than it runs"
        else:
            sev = "warn"
            message = f"{len(cps)} {kind}(s) " + " ".join(f"U+{c:04X}" for c in sorted(set(cps)))
        out.append(_hit("invisible-unicode", sev, message, path, no, line, 0))
    return out


def _hit(
    rule: str, severity: Severity, message: str, path: str, line: int, text: str, at: int
) -> AuditFinding:
    start = max(0, at - 40) if len(text) > _EXCERPT else 0
    excerpt = visible(text[start : start + _EXCERPT].strip())
    return AuditFinding(
        rule=rule, severity=severity, message=message, file=path, line=line, excerpt=excerpt
    )


def visible(text: str) -> str:
    """Make invisible and control characters visible as ``<U+XXXX>`` for reviewers."""
    hidden = {i.column - 1 for i in find_invisible(text, skip_leading_bom=False)}
    return "".join(
        f"<U+{ord(c):04X}>" if i in hidden or (ord(c) < 32 and c != "\t") else c
        for i, c in enumerate(text)
    )


def _cap(findings: list[AuditFinding]) -> list[AuditFinding]:
    """One finding per rule and line; the first few of each rule per file, then a count."""
    seen: dict[tuple[str, str | None, Severity], int] = {}
    lines: set[tuple[str, int | None]] = set()
    out = []
    for f in sorted(findings, key=lambda f: (f.line or 0, f.severity != "block")):
        if f.line is not None and (f.rule, f.line) in lines:
            continue
        lines.add((f.rule, f.line))
        k = (f.rule, f.file, f.severity)
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= _MAX_PER_RULE:
            out.append(f)
    for (rule, path, sev), n in seen.items():
        if n > _MAX_PER_RULE:
            more = f"{n - _MAX_PER_RULE} more {rule} findings in this file"
            out.append(AuditFinding(rule=rule, severity=sev, file=path, message=more))
    return out
