"""Re-run the hardening attacks of issue 12 and print what got through (run by hand).

    python benchmarks/hardening_attacks.py [--kills 50]

1. symlink reads: SKILL.md and supporting files symlinked to a secret, read through every view
   (list, show, prompt, read_skill full/section/summary/file); counts views that leaked it.
2. agent deletes: skill_manage delete/edit/patch/write_file/remove_file against an installed and
   a hand-written skill without approval; counts skills removed or changed.
3. crash leftovers: SIGKILL writers (enable/disable and skill_manage edits) at random moments,
   then one more write; counts ``.staging-*``, ``*.lemon-tmp`` and lock files among the skills.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SECRET = "TOP-SECRET-9f3c"
WRITER = """
import sys
from lemon_skills.tools import ToolContext, skill_manage
import lemon_skills
p = sys.argv[1]
i = 0
while True:
    i += 1
    lemon_skills.disable("mine", cwd=p, scope="project")
    lemon_skills.enable("mine", cwd=p, scope="project")
    skill_manage.call({"action": "patch", "name": "mine", "old_string": "Body", "new_string": "Body"
                       + str(i % 2)}, ToolContext(cwd=p))
    skill_manage.call({"action": "patch", "name": "mine", "old_string": "Body" + str(i % 2),
                       "new_string": "Body"}, ToolContext(cwd=p))
"""


def skill(root: Path, key: str, body: str = "## Usage\n\nBody\n") -> Path:
    d = root / key
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {key}\ndescription: demo {key} tool\n---\n{body}")
    return d


def symlink_reads(tmp: Path) -> int:
    import lemon_skills
    from lemon_skills.cli import main
    from lemon_skills.tools import ToolContext, read_skill

    secret = tmp / "secret"
    secret.write_text(f"---\nname: leak\ndescription: {SECRET}\n---\n## Usage\n\n{SECRET}\n")
    proj = tmp / "p1"
    (proj / ".git").mkdir(parents=True)
    root = proj / ".lemon" / "skill"
    (root / "x").mkdir(parents=True)
    (root / "x" / "SKILL.md").symlink_to(secret)
    ok = skill(root, "ok")
    (ok / "ref.md").symlink_to(secret)
    leaks = 0
    ctx = ToolContext(cwd=proj)
    for params in (
        {"key": "x"},
        {"key": "x", "view": "section", "section": "Usage"},
        {"key": "x", "view": "summary"},
        {"key": "ok", "view": "file", "path": "ref.md"},
        {"key": "ok", "view": "file", "path": str(secret)},
        {"key": "ok", "view": "file", "path": "../../../../secret"},
    ):
        leaks += SECRET in read_skill.call(params, ctx).text
    leaks += SECRET in lemon_skills.render_prompt("demo leak tool", cwd=proj).text
    for argv in (["skill", "list"], ["skill", "show", "x"], ["prompt", "leak"]):
        out = subprocess.run(
            [sys.executable, "-m", "lemon_skills", *argv, "--cwd", str(proj)],
            capture_output=True,
            text=True,
            check=False,
        )
        leaks += SECRET in out.stdout + out.stderr
    del main
    return leaks


def agent_deletes(tmp: Path) -> int:
    from lemon_skills.skills.install.service import install
    from lemon_skills.tools import ToolContext, skill_manage

    proj = tmp / "p2"
    (proj / ".git").mkdir(parents=True)
    src = skill(tmp / "src", "installed")
    install(str(src), cwd=proj, scope="project", approve=True)
    hand = skill(proj / ".lemon" / "skill", "hand")
    before = {
        k: (proj / ".lemon" / "skill" / k / "SKILL.md").read_text() for k in ("installed", "hand")
    }
    ctx = ToolContext(cwd=proj, agent_id="attacker")
    for key in before:
        for params in (
            {"action": "edit", "content": f"---\nname: {key}\ndescription: evil\n---\nEvil\n"},
            {"action": "patch", "old_string": "Body", "new_string": "Evil"},
            {"action": "write_file", "file_path": "references/x.md", "file_content": "evil"},
            {"action": "delete"},
        ):
            skill_manage.call({**params, "name": key}, ctx)
    changed = 0
    for key, text in before.items():
        d = proj / ".lemon" / "skill" / key
        changed += not (d / "SKILL.md").exists() or (d / "SKILL.md").read_text() != text
        changed += (d / "references").exists()
    del hand
    return changed


def crash_leftovers(tmp: Path, kills: int) -> dict[str, int]:
    proj = tmp / "p3"
    (proj / ".git").mkdir(parents=True)
    from lemon_skills.tools import ToolContext, skill_manage

    skill_manage.call(
        {
            "action": "create",
            "name": "mine",
            "content": "---\nname: mine\ndescription: d\n---\nBody\n",
        },
        ToolContext(cwd=proj),
    )
    rng = random.Random(12)
    env = {**os.environ}
    for _ in range(kills):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(proj)], env=env)
        time.sleep(1.0 + rng.random() * 0.8)  # past start-up, into the writes
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    root = proj / ".lemon" / "skill"
    before = _leftovers(proj)
    skill_manage.call(
        {"action": "patch", "name": "mine", "old_string": "Body", "new_string": "Body"},
        ToolContext(cwd=proj),
    )
    import lemon_skills

    lemon_skills.disable("mine", cwd=proj, scope="project")
    after = _leftovers(proj)
    del root
    return {"before_last_write": before, "after_last_write": after}


def _leftovers(proj: Path) -> int:
    root = proj / ".lemon"
    n = 0
    for p in root.rglob("*"):
        name = p.name
        in_skills = (root / "skill") in p.parents
        transient = name.startswith(".staging-") or name.endswith(".lemon-tmp")
        if transient or (in_skills and name.endswith(".lock")):
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.environ["HOME"] = str(tmp / "home")
        os.environ["LEMON_AGENT_DIR"] = str(tmp / "home" / ".lemon" / "agent")
        print(f"symlink reads that leaked the secret: {symlink_reads(tmp)}")
        print(f"skills deleted or changed by an agent without approval: {agent_deletes(tmp)}")
        print(f"crash leftovers after {args.kills} SIGKILLs: {crash_leftovers(tmp, args.kills)}")


if __name__ == "__main__":
    main()
