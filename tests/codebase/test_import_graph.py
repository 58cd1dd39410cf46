"""The host's subpackages import each other without a circle, and the deterministic core
does no I/O.

Each module of `host/railbird` belongs to a unit: its subpackage (`railbird.core`,
`railbird.outputs`, ...) or, for a top-level module, the module itself (`railbird.config`).
Every import, at module level or inside a function, is an edge between units; a circle
between units is a layout error (docs/architecture.md, "Layout").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HOST = REPO / "host"

# The core is a pure function of its inputs (docs/architecture.md): none of these may
# appear in it, so `railbird replay` reproduces the daemon exactly.
IO_MODULES = {
    "socket",
    "threading",
    "sqlite3",
    "paho",
    "serial",
    "subprocess",
    "http",
    "urllib",
    "asyncio",
    "selectors",
    "select",
    "queue",
    "multiprocessing",
}


def unit_of(module: str) -> str:
    parts = module.split(".")
    return module if parts[0] != "railbird" else ".".join(parts[:2])


def module_name(path: Path) -> str:
    rel = path.relative_to(HOST).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[str]:
    """Every module `path` imports, absolute, at any depth of the file."""
    me = module_name(path)
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append(mod)
            # `from railbird import outputs` imports the subpackage `railbird.outputs`
            out.extend(
                f"{mod}.{a.name}"
                for a in node.names
                if HOST.joinpath(*f"{mod}.{a.name}".split(".")).is_dir()
            )
    return out


def graph(root: Path = HOST / "railbird") -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        src = unit_of(module_name(path))
        for mod in imports_of(path):
            dst = unit_of(mod)
            if dst.startswith("railbird.") and dst != src:
                edges.setdefault(src, set()).add(dst)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of units (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                return [*stack[stack.index(v) :], v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(edges):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


def test_no_import_circle_between_host_subpackages():
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_detector_finds_a_circle(tmp_path):
    # The check above must be able to fail: two subpackages importing each other, the
    # shape the outputs/web circle had, is reported.
    pkg = tmp_path / "railbird"
    for name, body in {
        "a/__init__.py": "from railbird.b import x\n",
        "b/__init__.py": "def f():\n    from railbird.a import y\n",
        "c.py": "import railbird.a\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(body)
    global HOST
    saved, HOST = HOST, tmp_path
    try:
        cycle = find_cycle(graph(pkg))
    finally:
        HOST = saved
    assert cycle == ["railbird.a", "railbird.b", "railbird.a"]


@pytest.mark.parametrize(
    "path", sorted((HOST / "railbird" / "core").rglob("*.py")), ids=lambda p: p.name
)
def test_core_does_no_io(path):
    used = {m.split(".")[0] for m in imports_of(path)}
    assert not used & IO_MODULES, f"{path.name} imports {sorted(used & IO_MODULES)}"
    units = {unit_of(m) for m in imports_of(path) if m.startswith("railbird.")}
    assert units <= {"railbird.core", "railbird.rules"}, f"{path.name} imports {units}"
