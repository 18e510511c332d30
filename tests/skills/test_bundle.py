from __future__ import annotations

import os

from lemon_skills.skills.format import bundle


def _skill(tmp_path):
    root = tmp_path / "skill"
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_bytes(b"---\nname: s\n---\nbody\n")
    run = root / "scripts" / "run.sh"
    run.write_bytes(b"echo hi\n")
    run.chmod(0o755)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_bytes(b"ref")
    return root


def test_collect_reads_files_marks_executables_and_skips_git(tmp_path):
    got = bundle.collect(_skill(tmp_path))
    assert sorted(got.files) == ["SKILL.md", "scripts/run.sh"]
    assert got.executables == {"scripts/run.sh"}
    assert got.overflow is None


def test_symlinks_are_recorded_never_followed(tmp_path):
    root = _skill(tmp_path)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key").write_text("k", "utf-8")
    os.symlink(secret, root / "linked-dir")
    os.symlink(secret / "key", root / "linked-file")
    got = bundle.collect(root)
    assert got.symlinks == {"linked-dir": str(secret), "linked-file": str(secret / "key")}
    assert not any("key" in rel for rel in got.files)


def test_bundle_hash_tracks_content_and_names_but_not_timestamps(tmp_path):
    root = _skill(tmp_path)
    before = bundle.hash_dir(root)
    os.utime(root / "SKILL.md", (1, 1))
    assert bundle.hash_dir(root) == before
    (root / "scripts" / "run.sh").rename(root / "scripts" / "go.sh")
    assert bundle.hash_dir(root) != before


def test_content_hash_is_the_skill_md_only():
    a = bundle.content_hash({"SKILL.md": b"x", "other": b"1"})
    assert a == bundle.content_hash({"SKILL.md": b"x", "other": b"2"})


def test_drift_reports_changed_added_removed_and_symlink_swaps(tmp_path):
    root = _skill(tmp_path)
    expected = bundle.file_hashes(bundle.collect(root).files)
    assert not bundle.drift(expected, bundle.collect(root))
    (root / "SKILL.md").write_bytes(b"edited")
    (root / "scripts" / "run.sh").unlink()
    os.symlink("/etc/passwd", root / "scripts" / "run.sh")
    (root / "new.txt").write_bytes(b"n")
    found = bundle.drift({**expected, "gone.md": "h"}, bundle.collect(root))
    assert found.changed == ("SKILL.md", "scripts/run.sh")
    assert found.added == ("new.txt",)
    assert found.removed == ("gone.md",)
    assert (
        found.describe()
        == "2 changed (SKILL.md, scripts/run.sh); 1 added (new.txt); 1 removed (gone.md)"
    )


def test_describe_shortens_long_lists():
    many = bundle.Drift(changed=tuple(f"f{i}" for i in range(5)))
    assert many.describe() == "5 changed (f0, f1, f2, ...)"
