from __future__ import annotations

import ast
from pathlib import Path

import lemon_skills
import lemon_skills.skills
import lemon_skills.tools

SRC = Path(lemon_skills.__file__).parent


def test_all_lists_are_sorted_and_resolve():
    for module in (lemon_skills, lemon_skills.skills, lemon_skills.tools):
        assert module.__all__ == sorted(module.__all__), module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_facade_functions_match_the_design_document():
    for name in ("list", "get", "find_relevant", "status", "enable", "disable", "refresh"):
        assert callable(getattr(lemon_skills, name))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.add(base)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_layers_point_one_way():
    # The library never imports the CLI; the core modules import neither skills nor mcp.
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] in ("cli", "__main__.py"):
            continue
        for imp in _imports(path):
            assert "cli" not in imp.split("."), f"{rel} imports the CLI ({imp})"


def test_importing_the_package_does_not_import_the_mcp_sdk():
    import subprocess
    import sys

    code = "import sys, lemon_skills; print('mcp' in sys.modules, 'httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
