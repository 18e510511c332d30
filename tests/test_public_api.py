"""The public API: one table in ``lemon_skills/__init__.py``, in step with its type-checking
imports and with the README, and every documented ``lemon_skills...`` path importable."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import lemon_skills
import lemon_skills.mcp
import lemon_skills.skills
import lemon_skills.tools

SRC = Path(lemon_skills.__file__).parent
ROOT = SRC.parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _type_checking_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    return {
        a.asname or a.name for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names
    }


def test_the_public_table_is_the_one_list_of_names():
    names = set(lemon_skills._API)
    assert lemon_skills.__all__ == sorted(names)
    assert _type_checking_names(SRC / "__init__.py") == names
    for name in names:
        assert getattr(lemon_skills, name) is not None, name


def test_every_public_name_is_in_the_readme_table():
    readme = (ROOT / "README.md").read_text("utf-8")
    table = readme[readme.index("## Public API") :]
    table = table[: table.index("\n## ", 1)]
    shown = set(re.findall(r"`(\w+)`", table))
    assert set(lemon_skills.__all__) <= shown


def test_package_facades_resolve_every_name():
    for module in (lemon_skills.skills, lemon_skills.mcp, lemon_skills.tools):
        assert module.__all__ == sorted(module.__all__), module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_no_facade_name_is_also_a_submodule():
    # Importing a submodule binds its name on the package, replacing a lazy facade name.
    for package in (lemon_skills, lemon_skills.skills, lemon_skills.mcp, lemon_skills.tools):
        folder = Path(package.__file__).parent
        submodules = {p.stem for p in folder.glob("*.py")} | {
            p.name for p in folder.iterdir() if (p / "__init__.py").exists()
        }
        clashes = set(package.__all__) & submodules - {"prompt"}  # prompt *is* the module
        assert not clashes, f"{package.__name__}: {clashes}"


def test_facade_functions_match_the_design_document():
    for name in ("list", "get", "find_relevant", "status", "enable", "disable", "refresh"):
        assert callable(getattr(lemon_skills, name))
    assert lemon_skills.render_prompt is lemon_skills.prompt.render


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:n]))
        except ModuleNotFoundError:
            continue
        for attr in parts[n:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_documented_import_path_works():
    paths = {
        p
        for doc in DOCS
        for p in re.findall(r"\blemon_skills(?:\.\w+)+", doc.read_text("utf-8"))
        if not p.endswith(("_", ".py"))
    }
    failures = []
    for dotted in sorted(paths):
        try:
            _resolve(dotted)
        except (ImportError, AttributeError) as exc:
            failures.append(f"{dotted}: {exc}")
    assert failures == []


def test_importing_the_package_does_not_import_the_mcp_sdk():
    code = "import sys, lemon_skills; print('mcp' in sys.modules, 'httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
