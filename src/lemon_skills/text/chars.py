"""Character-level checks shared by lint, the install audit and skill_manage.

Invisible characters (Unicode tag block, bidi controls, zero-width, soft hyphen, line and
paragraph separators) can smuggle instructions past a human reviewer; names mixing scripts
can impersonate another skill (``рdf`` with a Cyrillic ``р``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

_BIDI = {0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_ZERO_WIDTH = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E}
_OTHER = {0x00AD: "soft hyphen", 0x2028: "line separator", 0x2029: "paragraph separator"}


@dataclass(frozen=True, slots=True)
class Invisible:
    """One invisible or direction-changing character and where it is."""

    line: int
    column: int
    codepoint: int
    kind: str

    def describe(self) -> str:
        """``U+E0041 (tag character) at line 3, column 7``."""
        return f"U+{self.codepoint:04X} ({self.kind}) at line {self.line}, column {self.column}"


def classify(codepoint: int) -> str | None:
    """Return the kind of an invisible character, or None for a visible one."""
    if 0xE0000 <= codepoint <= 0xE007F:
        return "tag character"
    if codepoint in _BIDI:
        return "bidi control"
    if codepoint in _ZERO_WIDTH:
        return "zero-width character"
    if 0xFE00 <= codepoint <= 0xFE0F or 0xE0100 <= codepoint <= 0xE01EF:
        return None  # variation selectors are common in emoji; not hidden text
    return _OTHER.get(codepoint)


def find_invisible(text: str, *, skip_leading_bom: bool = True) -> Iterator[Invisible]:
    """Yield every invisible character in ``text`` with its 1-based line and column."""
    line, col = 1, 0
    for i, ch in enumerate(text):
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
            continue
        kind = classify(ord(ch))
        if kind is None or (skip_leading_bom and i == 0 and ch == "\ufeff"):
            continue
        yield Invisible(line, col, ord(ch), kind)


def decode_tags(text: str) -> str:
    """Reveal an instruction hidden in tag characters (U+E0020..E007E map onto ASCII)."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def scripts(text: str) -> set[str]:
    """The Unicode scripts of the letters in ``text`` (approximated from character names)."""
    found: set[str] = set()
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        script = name.split(" ", 1)[0] if name else "UNKNOWN"
        found.add(_SCRIPT_FAMILY.get(script, script))
    return found


# Scripts that one writing system mixes by design (Japanese text uses all three).
_SCRIPT_FAMILY = {
    "HIRAGANA": "JAPANESE",
    "KATAKANA": "JAPANESE",
    "KATAKANA-HIRAGANA": "JAPANESE",  # the prolonged sound mark in ツール
    "CJK": "JAPANESE",
}


def lookalike_reason(name: str) -> str | None:
    """Explain why ``name`` may impersonate another, or None when it looks honest."""
    found = scripts(name)
    if len(found) > 1:
        return "mixes scripts " + ", ".join(sorted(found)) + " (possible look-alike name)"
    if found and found != {"LATIN"} and _has_latin_confusable(name):
        return f"uses {', '.join(sorted(found))} letters that look like Latin ones"
    if unicodedata.normalize("NFKC", name) != name:
        return "contains compatibility characters that normalise to a different name"
    return None


# Cyrillic and Greek letters that render like Latin ones; a whole-Cyrillic name made only of
# these (``сорy``) is as deceptive as a mixed one.
_LATIN_LOOKALIKES = set("аеорсухіјѕԁԛԝаАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ")


def _has_latin_confusable(name: str) -> bool:
    letters = [c for c in name if c.isalpha()]
    return bool(letters) and all(c in _LATIN_LOOKALIKES for c in letters)
