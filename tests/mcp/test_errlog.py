"""A stdio server's stderr: lines in memory, bytes on disk, rotation and following (no server)."""

from __future__ import annotations

import stat

from lemon_skills.mcp.session import errlog
from lemon_skills.mcp.session.errlog import StderrLog, follow, read_log


def test_lines_are_reassembled_and_only_the_last_ones_kept(tmp_path):
    log = StderrLog(tmp_path / "s.log")
    log.feed(b"first li")
    log.feed(b"ne\nsecond\n" + b"".join(b"n%d\n" % i for i in range(300)) + b"tail")
    log.finish()
    assert len(log.lines) == errlog.MEMORY_LINES
    assert log.tail(2) == ["n299", "tail"]
    assert log.summary(2) == "n299 | tail"
    assert read_log(tmp_path / "s.log").startswith(b"first line\nsecond\n")


def test_the_disk_copy_is_private_and_rotated_keeping_the_newest_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(errlog, "DISK_BYTES", 100)
    path = tmp_path / "logs" / "s.log"
    log = StderrLog(path)
    for i in range(30):
        log.feed(b"line %02d\n" % i)
    log.finish()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.with_name("s.log.1").exists()
    kept = read_log(path, max_bytes=100)
    assert kept.endswith(b"line 29\n") and len(kept) == 100


def test_an_unwritable_log_dir_costs_only_the_disk_copy(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    log = StderrLog(tmp_path / "file" / "s.log")
    log.feed(b"still kept\n")
    assert log.tail() == ["still kept"]


def test_follow_yields_what_is_appended_after_it_started_across_a_rotation(tmp_path):
    path = tmp_path / "s.log"
    path.write_bytes(b"old\n")
    chunks = follow(path, poll_s=0.01)
    with path.open("ab") as f:
        f.write(b"new\n")
    assert next(chunks) == b"new\n"
    path.write_bytes(b"r\n")  # rotated: a new, shorter file
    assert next(chunks) == b"r\n"
