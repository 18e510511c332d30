"""The import contract of the source tree, checked on every import statement (lazy ones and
``TYPE_CHECKING`` ones included) and on every module named in a string (``"pkg.mod:attr"``
plug-ins, ``python -m`` targets): layers point one way and no modules import each other in a
circle. ``docs/architecture.md`` explains the layers."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import lemon_skills

SRC = Path(lemon_skills.__file__).parent

#: The composition root: the public table and the facades a host imports. They may name any
#: layer (lazily); nothing below the CLI imports them (the version is ``lemon_skills.version``).
COMPOSITION = {"lemon_skills", "lemon_skills.__main__", "lemon_skills.prompt"}

#: Layer of each top-level name; a module may import only modules of a lower layer or its own.
#: skills and mcp share a floor but may not import each other; ``search`` is the corpus-neutral
#: ranking core, part of the kernel; ``selftest`` (the ``lemon mcp smoke`` proofs) drives the
#: whole stack, so it sits just under the CLI.
#: ``gateway`` and ``integrations`` (the MCP gateway, the agent-framework adapters) share a
#: floor above ``tools`` and never import each other.
LAYERS = {
    "kernel": 0,
    "search": 0,
    "skills": 1,
    "mcp": 1,
    "tools": 2,
    "gateway": 3,
    "integrations": 3,
    "selftest": 4,
    "cli": 5,
}

#: Programs run with ``python -m`` that must keep a documented path inside a lower package;
#: they sit at the CLI's floor whatever their folder.
ENTRY_POINTS = {"lemon_skills.mcp.conformance_client": "cli"}

MAX_MODULES_PER_FOLDER = 16

_NAMED = re.compile(r"lemon_skills(?:\.\w+)+")


def _module_name(path: Path) -> str:
    parts = ["lemon_skills", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py")}


def _targets(node: ast.AST, modules: dict[str, Path]) -> Iterator[str]:
    """The lemon_skills modules one import statement loads (the deepest that exist)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [f"{node.module}.{a.name}" for a in node.names]
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = [m.replace(":", ".") for m in _NAMED.findall(node.value.replace(":", "."))]
    else:
        return
    for name in names:
        while name not in modules and "." in name:
            name = name.rpartition(".")[0]
        if name.startswith("lemon_skills") and name in modules:
            yield name


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"))
        docs = {id(d) for d in _docstrings(tree)}
        edges = {
            t for node in ast.walk(tree) if id(node) not in docs for t in _targets(node, modules)
        }
        # A module's own packages are initialised before it, so naming one is no dependency.
        graph[name] = {
            t for t in edges if t != name and t not in COMPOSITION and not name.startswith(t + ".")
        }
    return graph


def _docstrings(tree: ast.Module) -> list[ast.AST]:
    """Docstring constants: they name modules to explain, not to load."""
    holders = [
        tree,
        *(
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ),
    ]
    return [
        h.body[0].value
        for h in holders
        if h.body and isinstance(h.body[0], ast.Expr) and isinstance(h.body[0].value, ast.Constant)
    ]


def _layer(module: str) -> str:
    if module in ENTRY_POINTS:
        return ENTRY_POINTS[module]
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    return top if top in LAYERS else "kernel"


def test_no_relative_imports():
    # Every import names its module in full, so the tree can be read (and moved) by grep.
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path.relative_to(SRC)}:{node.lineno} relative import"


def test_layers_point_one_way():
    violations = []
    for module, edges in _graph().items():
        if module in COMPOSITION:
            continue
        mine = _layer(module)
        for target in edges:
            theirs = _layer(target)
            upward = LAYERS.get(theirs, 0) > LAYERS.get(mine, 0)
            sideways = theirs != mine and LAYERS.get(theirs, 0) == LAYERS.get(mine, 0) > 0
            if upward or sideways:
                violations.append(f"{module} ({mine}) -> {target} ({theirs})")
    assert violations == []


def test_state_sits_under_the_stores_that_use_it():
    # lemon_skills.state (kernel) keeps rows for approvals, introspection, pins and usage; those
    # stores import it, so it may import none of them (nor anything above the kernel).
    graph = _graph()
    stores = {
        m for m in graph if m.startswith(("lemon_skills.approvals", "lemon_skills.introspection"))
    }
    for module, edges in graph.items():
        if module.startswith("lemon_skills.state"):
            assert not edges & stores, f"{module} imports a store: {sorted(edges & stores)}"
            assert all(_layer(t) in ("kernel", "search") for t in edges), module


def test_nothing_under_the_cli_imports_the_composition_root():
    # The root names every layer, so a module under the CLI importing it would close a cycle.
    modules = _modules()
    found = []
    for name, path in modules.items():
        if name in COMPOSITION or _layer(name) == "cli":
            continue
        tree = ast.parse(path.read_text("utf-8"))
        docs = {id(d) for d in _docstrings(tree)}
        for node in ast.walk(tree):
            if id(node) not in docs and isinstance(node, ast.Import | ast.ImportFrom):
                hits = set(_targets(node, modules)) & COMPOSITION
                found += [f"{name} -> {t}" for t in sorted(hits)]
    assert found == []


def test_no_import_cycles():
    graph = _graph()
    cycles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def test_folders_stay_small_and_have_no_prefix_families():
    for folder in [SRC, *(p for p in SRC.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        modules = [p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")]
        assert len(modules) <= MAX_MODULES_PER_FOLDER, f"{folder.relative_to(SRC)}: {len(modules)}"
        prefixes = [m.split("_")[0] for m in modules if "_" in m.strip("_")]
        families = {p for p in prefixes if prefixes.count(p) > 1}
        assert not families, f"{folder.relative_to(SRC)} has prefix families {families}"


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph is small, but recursion depth is not ours)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
    return found
