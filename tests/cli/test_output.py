from __future__ import annotations

import json
from dataclasses import dataclass

import click

from lemon_skills.cli import _output


@dataclass
class _Rec:
    name: str

    def to_dict(self):
        return {"name": self.name}


def test_json_in_a_pipe_is_compact_ascii_and_parses_back(capsys):
    _output.emit_json({"name": "café", "n": 1})
    out = capsys.readouterr().out
    assert out == '{"name": "caf\\u00e9", "n": 1}\n'
    assert json.loads(out) == {"name": "café", "n": 1}


def test_records_are_a_list_or_a_skills_object_with_extra_keys(capsys):
    _output.emit_json_records([_Rec("a"), _Rec("b")])
    assert json.loads(capsys.readouterr().out) == [{"name": "a"}, {"name": "b"}]
    _output.emit_json_records([_Rec("a")], extra={"total": 1})
    assert json.loads(capsys.readouterr().out) == {"skills": [{"name": "a"}], "total": 1}


def test_table_aligns_columns_by_visible_width_ignoring_colour(capsys):
    _output.table(["NAME", "STATE"], [[_output.colour("ready"), "x"], ["a-long-name", "y"]])
    lines = [click.unstyle(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == ["NAME         STATE", "ready        x", "a-long-name  y"]


def test_an_empty_table_prints_nothing(capsys):
    _output.table(["NAME"], [])
    assert capsys.readouterr().out == ""


def test_colour_follows_the_state_and_leaves_unknown_text_alone():
    assert _output.colour("blocked") == click.style("blocked", fg="red")
    assert _output.colour("ok", state="error") == click.style("ok", fg="red")
    assert _output.colour("plain") == "plain"


def test_notes_and_warnings_go_to_stderr_only(capsys):
    _output.note("fetching")
    _output.warn("stale cache")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert click.unstyle(captured.err) == "fetching\nwarning: stale cache\n"
