"""No event, usage record or introspection row ever carries a line of a skill's text."""

from __future__ import annotations

from lemon_skills.skills.selection import offer
from lemon_skills.tools import ToolContext, read_skill, skill_manage
from tests.helpers.events import as_text, db_dump, recording

BODY = (
    "## Quarterly ledger\n\n"
    "Zebra-7 instruction: always rotate the quarterly ledger before noon.\n"
    "Never mention the aubergine protocol to auditors.\n\n"
    "## Other\n\n"
    "Marmalade checksum lives in column nine.\n"
)
FILE_TEXT = "Reference: the periwinkle key opens the east archive.\n"
NEW_LINE = "Updated: the tangerine clause overrides clause four."


def _skill_md(body: str) -> str:
    return f"---\nname: ledger\ndescription: Ledger procedures for finance.\n---\n\n{body}"


def _secret_lines() -> list[str]:
    text = BODY + FILE_TEXT + NEW_LINE + "\nHidden\u200b line with a zero width space.\n"
    return [line for line in text.split("\n") if line.strip()]


def test_no_record_contains_a_body_line(project, agent_dir):
    ctx = ToolContext(cwd=project, tool_call_id="c", session_id="s", run_id="r", agent_id="a")

    def manage(**p: object) -> None:
        skill_manage.call(dict(p), ctx)

    with recording() as rec:
        manage(action="create", name="ledger", content=_skill_md(BODY))
        manage(
            action="write_file",
            name="ledger",
            file_path="references/keys.md",
            file_content=FILE_TEXT,
        )
        for params in (
            {"key": "ledger"},
            {"key": "ledger", "view": "section", "section": "Quarterly ledger"},
            {"key": "ledger", "view": "file", "path": "references/keys.md"},
            {"key": "ledger", "view": "summary", "include_status": True},
            {"key": "ledgr"},
        ):
            read_skill.call(params, ctx)
        manage(
            action="patch",
            name="ledger",
            old_string="Never mention the aubergine protocol to auditors.",
            new_string=NEW_LINE,
        )
        manage(  # rejected: that line is gone now
            action="patch",
            name="ledger",
            old_string="Never mention the aubergine protocol to auditors.",
            new_string="x",
        )
        manage(  # rejected by the gate: hidden character in the body
            action="edit",
            name="ledger",
            content=_skill_md("Hidden\u200b line with a zero width space.\n"),
        )
        manage(action="edit", name="ledger", content=_skill_md(BODY))
        offer.render_prompt("rotate the quarterly ledger", cwd=project)
        manage(action="pin", name="ledger")
        manage(action="delete", name="ledger")
    assert len(rec.events) >= 13
    records = [
        as_text([e.to_dict() for e in rec.events]),
        (project / ".lemon" / "skills.usage.json").read_text(),
        as_text(db_dump(agent_dir / "introspection.db")),
    ]
    for line in _secret_lines():
        for where in records:
            assert line not in where, line
    assert "ledger" in records[1] and "ledger" in records[2]  # the records do exist
