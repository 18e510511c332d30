"""What the framework adapter tests ask their agents, beside the shared server and skill
(``conftest``): the skill's key and text, a search across turns, and the marker's lines."""

from __future__ import annotations

from pathlib import Path

SKILL = "invoice-chaser"
SKILL_TEXT = "Send a reminder"
#: A request the found tool is not ranked for, so it can only come from tool_search.
UNRELATED = "check the weather dashboards"
SEARCH = "send an invoice by email to a customer"
FOUND_ARGS = {"customer": "ACME", "amount": 120}
FOUND_TEXT = "invoice of 120 EUR sent to ACME"


def drops(marker: Path) -> list[str]:
    """The lines the destructive tool wrote: one per call that reached the server."""
    return marker.read_text().splitlines() if marker.exists() else []
