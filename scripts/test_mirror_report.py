"""List source modules with logic that have no test module at the mirrored path.

A module "has logic" when it defines a function or a class. Its mirror is
tests/<package path>/test_<module>*.py; a package __init__ with logic maps to
tests/<parent>/test_<package>*.py. Run: python scripts/test_mirror_report.py [--missing]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "lemon_skills"
TESTS = ROOT / "tests"
SKIPPED = ("selftest/fixtures/",)


def has_logic(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(isinstance(node, kinds) for node in tree.body)


def mirror_dir_and_stem(module: Path) -> tuple[Path, str]:
    rel = module.relative_to(SRC)
    if rel.name == "__init__.py":
        if rel.parent == Path("."):
            return TESTS, "lemon_skills"
        return TESTS / rel.parent.parent, rel.parent.name
    return TESTS / rel.parent, rel.stem.lstrip("_")


def is_mirrored(module: Path) -> bool:
    folder, stem = mirror_dir_and_stem(module)
    return any(folder.glob(f"test_{stem}*.py")) or any(folder.glob(f"test__{stem}*.py"))


def main(argv: list[str]) -> int:
    modules = sorted(
        p
        for p in SRC.rglob("*.py")
        if has_logic(p) and not any(s in p.relative_to(SRC).as_posix() for s in SKIPPED)
    )
    missing = [m for m in modules if not is_mirrored(m)]
    covered = len(modules) - len(missing)
    print(f"modules with logic: {len(modules)}  mirrored: {covered}  missing: {len(missing)}")
    if "--missing" in argv:
        for module in missing:
            print(module.relative_to(SRC).as_posix())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
