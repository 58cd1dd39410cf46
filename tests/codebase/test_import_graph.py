"""The host's modules import each other without a circle, its subpackages too, and the
deterministic core and the competition package do no I/O.

Two graphs are checked (docs/architecture.md, "Layout"):

- modules: every `railbird` module is a node; every import of another `railbird` module
  is an edge, whether it is `import railbird.x.y`, `from railbird.x import y` (y a module),
  `from railbird.x.y import name` or a relative `from . import y`, at module level or
  inside a function (a function-level import still needs the other module importable in
  the same process: a circle through one is a circle). A circle is a layout error: one of
  the two modules holds what both need and it belongs in a third.
- units: each module belongs to its subpackage (`railbird.core`, `railbird.outputs`, ...)
  or, at the top level, is its own unit (`railbird.cli`); a circle between units is a
  layout error even when no two modules form one.
"""

from __future__ import annotations

import ast
import itertools
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


def is_module(name: str) -> bool:
    """`name` is a module or package of the tree under HOST."""
    p = HOST.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`. They are left out of the graphs:
    they never run, so they cannot make an import circle at run time (annotations only)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
            if name == "TYPE_CHECKING":
                skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def module_imports(path: Path) -> list[tuple[str, int]]:
    """(module, line) for every module `path` imports, absolute, at any depth of the file.

    `from X import a` imports the module `X.a` when there is one, else takes the name `a`
    from `X` (an edge to `X`): a submodule importing a sibling with `from . import b` needs
    `b`, not the package's `__init__`."""
    me = module_name(path)
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_only(tree)
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((sub if is_module(sub) else mod, node.lineno))
    return out


def imports_of(path: Path) -> list[str]:
    """Every module `path` imports, and for `from X import y` the package X too (the units'
    view: what a file needs of other parts)."""
    out = []
    for mod, _ in module_imports(path):
        out.append(mod)
        if "." in mod:
            out.append(mod.rsplit(".", 1)[0])
    return out


def graph(root: Path | None = None) -> dict[str, set[str]]:
    """Units -> the units they import."""
    edges: dict[str, set[str]] = {}
    for path in sorted((root or HOST / "railbird").rglob("*.py")):
        src = unit_of(module_name(path))
        for mod in imports_of(path):
            dst = unit_of(mod)
            if dst.startswith("railbird.") and dst != src:
                edges.setdefault(src, set()).add(dst)
    return edges


def module_graph(root: Path | None = None) -> dict[str, dict[str, int]]:
    """Modules -> {module it imports: the line of the first such import}."""
    edges: dict[str, dict[str, int]] = {}
    for path in sorted((root or HOST / "railbird").rglob("*.py")):
        src = module_name(path)
        for mod, line in module_imports(path):
            if (mod == "railbird" or mod.startswith("railbird.")) and mod != src:
                edges.setdefault(src, {}).setdefault(mod, line)
    return edges


def find_cycles(edges) -> list[list[str]]:
    """One circle (first == last) per strongly connected component of more than one node,
    so every separate circle is reported, not only the first found (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    comps: list[set[str]] = []

    def strong(u: str) -> None:
        index[u] = low[u] = len(index)
        stack.append(u)
        on.add(u)
        for v in sorted(edges.get(u, ())):
            if v not in index:
                strong(v)
                low[u] = min(low[u], low[v])
            elif v in on:
                low[u] = min(low[u], index[v])
        if low[u] == index[u]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == u:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for u in sorted(edges):
        if u not in index:
            strong(u)
    return sorted(_circle_in(edges, comp) for comp in comps)


def _circle_in(edges, comp: set[str]) -> list[str]:
    """The shortest circle through the component's first node (breadth first)."""
    start = min(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for u in frontier:
            for v in sorted(edges.get(u, ())):
                if v not in comp:
                    continue
                if v == start:
                    path = [u]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if v not in prev:
                    prev[v] = u
                    nxt.append(v)
        frontier = nxt
    raise AssertionError(f"no circle in a strongly connected component {sorted(comp)}")


def find_cycle(edges) -> list[str] | None:
    cycles = find_cycles(edges)
    return cycles[0] if cycles else None


def describe(edges: dict[str, dict[str, int]], cycle: list[str]) -> str:
    def where(a: str, b: str) -> str:
        path = HOST.joinpath(*a.split("."))
        f = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        return f"host/{f.relative_to(HOST)}:{edges[a][b]}"

    hops = [f"  {a} -> {b}  ({where(a, b)})" for a, b in itertools.pairwise(cycle)]
    return " -> ".join(cycle) + "\n" + "\n".join(hops)


def test_no_import_circle_between_host_modules():
    edges = module_graph()
    cycles = find_cycles(edges)
    assert not cycles, "import circles between modules:\n" + "\n".join(
        describe(edges, c) for c in cycles
    )


def test_no_import_circle_between_host_subpackages():
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "railbird"
    for name, body in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(body)
    return pkg


@pytest.fixture
def host_at(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__, fromlist=["HOST"]), "HOST", tmp_path)
    return tmp_path


def test_the_detector_finds_a_circle_between_units(host_at):
    # Two subpackages importing each other, the shape the outputs/web circle had.
    pkg = _tree(
        host_at,
        {
            "a/__init__.py": "from railbird.b import x\n",
            "b/__init__.py": "def f():\n    from railbird.a import y\n",
            "c.py": "import railbird.a\n",
        },
    )
    assert find_cycle(graph(pkg)) == ["railbird.a", "railbird.b", "railbird.a"]


def test_the_detector_finds_every_circle_between_modules(host_at):
    # The shapes the review found: top-level modules importing each other by
    # `from railbird import module` inside functions (bench <-> bench_inplay), a relative
    # import in a function answering a module-level one (journal <-> migrations), a
    # three-module circle; and what is not a circle: a sibling through `from . import`,
    # a name from a package whose __init__ imports the importer, TYPE_CHECKING imports.
    pkg = _tree(
        host_at,
        {
            "__init__.py": "",
            "bench.py": "def f():\n    from railbird import bench_inplay\n",
            "bench_inplay.py": "def g():\n    from railbird.bench import host\n",
            "d/__init__.py": "",
            "d/journal.py": "from railbird.d import migrations\n",
            "d/migrations.py": "def h():\n    from .journal import JournalError\n",
            "d/x.py": "import railbird.d.y\n",
            "d/y.py": "from . import z\n",
            "d/z.py": "from ..d.x import X\n",
            "r/__init__.py": "from .engine import apply\n",
            "r/engine.py": "from . import state\n",
            "r/state.py": "",
            "r/fouls.py": "from railbird.r import apply\n",
            "t.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import railbird.u\n",
            "u.py": "import railbird.t\n",
        },
    )
    edges = module_graph(pkg)
    assert find_cycles(edges) == [
        ["railbird.bench", "railbird.bench_inplay", "railbird.bench"],
        ["railbird.d.journal", "railbird.d.migrations", "railbird.d.journal"],
        ["railbird.d.x", "railbird.d.y", "railbird.d.z", "railbird.d.x"],
    ]
    # each hop with the importing file and line (here bench.py line 2, bench_inplay.py line 2)
    hops = describe(edges, find_cycles(edges)[0]).splitlines()[1:]
    assert [h.split("  (")[0].strip() for h in hops] == [
        "railbird.bench -> railbird.bench_inplay",
        "railbird.bench_inplay -> railbird.bench",
    ]
    assert [h.rsplit("/", 1)[1] for h in hops] == ["bench.py:2)", "bench_inplay.py:2)"]


@pytest.mark.parametrize(
    "path", sorted((HOST / "railbird" / "core").rglob("*.py")), ids=lambda p: p.name
)
def test_core_does_no_io(path):
    used = {m.split(".")[0] for m in imports_of(path)}
    assert not used & IO_MODULES, f"{path.name} imports {sorted(used & IO_MODULES)}"
    units = {unit_of(m) for m in imports_of(path) if m.startswith("railbird.")}
    assert units <= {"railbird.core", "railbird.rules"}, f"{path.name} imports {units}"


# The competition package is pure too (docs/events.md): a stored tournament replays to the
# same state, so nothing in it may read a clock, a file or the network.
COMPETITION_BANNED = IO_MODULES | {"time", "datetime", "os", "pathlib", "io", "json"}


@pytest.mark.parametrize(
    "path", sorted((HOST / "railbird" / "competition").rglob("*.py")), ids=lambda p: p.name
)
def test_competition_does_no_io(path):
    used = {m.split(".")[0] for m in imports_of(path)}
    assert not used & COMPETITION_BANNED, f"{path.name} imports {sorted(used & COMPETITION_BANNED)}"
    units = {unit_of(m) for m in imports_of(path) if m.startswith("railbird.")}
    assert units <= {"railbird.competition", "railbird.rules"}, f"{path.name} imports {units}"
