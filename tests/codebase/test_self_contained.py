"""A clone of the repository is self-contained: every document, comment and docstring refers
only to files the clone holds, nothing points at the project's old design notes outside the
repository (their content lives in docs/architecture.md), the licence that pyproject.toml
declares is there, and no build artefact is committed.

Which paths are checked: the target of every relative markdown link, and every path whose
first segment is a top-level folder of the repository (`docs/`, `host/`, `firmware/`, ...)
when it is backticked or looks like a file (has an extension or ends in `/`). Paths that git
ignores (`firmware/build/...`) are build output, not references; topic names
(`railbird/v1/...`), device paths (`/dev/ttyUSB0`) and placeholders (`hardware/wiring-<id>.svg`)
do not start with a top-level folder or are skipped as templates.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# This file's own samples are bad on purpose (test_the_checker_flags_a_bad_sample).
SELF = Path(__file__).resolve().relative_to(REPO).as_posix()

# Spelled in pieces so that this file does not mention what it forbids.
FORBIDDEN = re.compile(
    "|".join(
        [
            re.escape("DESIGN" + ".md"),
            re.escape("../" + "shared"),
            r"(?<![\w.-])" + "shared" + r"/(?:seeds|rules)\b",
        ]
    )
)

# Build artefacts never belong in git: `make firmware`, pip and the interpreter make them.
ARTEFACTS = ("*.whl", "*.mpy", "*.pyc", "*.pyo", "*.so", "*.egg", "*.tar.gz", "*.zip", "*.bin")

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
BACKTICKED = re.compile(r"`([^`\n]+)`")
# Backticked module names (`railbird.core.shots.assemble`) resolve in the folder that holds
# the package; a file name that only starts like one (`railbird.toml`) is not a module.
MODULE_ROOTS = {"railbird": "host", "rbproto": "protocol", "rbnode": "firmware"}
DOTTED = re.compile("(?:" + "|".join(MODULE_ROOTS) + r")(?:\.\w+)+")
FILE_SUFFIX = re.compile(r"\.(?:toml|json|md|py|txt|conf|svg|sqlite|csv)$")
# `docs/host.md, "Table time"`, `protocol/SPEC.md §Security`, `protocol/REFEREE.md §3a`: a
# section is named by (part of) a heading or a bold lead-in of the page.
SECTION = re.compile(
    r'(?<![\w./-])([\w./-]+\.md)`?,? (?:§ ?"([^"]+)"|§ ?([A-Z][\w-]*|\d+[a-z]?\b)|"([^"]+)")'
)
TEMPLATE = re.compile(r"[<>$%]|\{(?![\w.-]+(?:,[\w.-]+)+\})")


def git_files() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    return [f for f in out.decode().split("\0") if f and (REPO / f).exists()]


def read_text(rel: str, root: Path = REPO) -> str | None:
    """The file's text, or None for a binary file."""
    data = (root / rel).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def forbidden_mentions(text: str) -> list[tuple[int, str]]:
    return [
        (n, m.group(0))
        for n, line in enumerate(text.splitlines(), 1)
        for m in FORBIDDEN.finditer(line)
    ]


def expand(path: str) -> list[str]:
    """`a/{b,c}.py` -> `a/b.py`, `a/c.py` (the shell's brace expansion)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [
        p
        for alt in m.group(1).split(",")
        for p in expand(path[: m.start()] + alt + path[m.end() :])
    ]


def path_references(rel: str, text: str, tops: set[str]) -> list[tuple[int, str, str]]:
    """(line, reference as written, path from the repository root) for each path `rel`
    refers to. Links resolve against the file's folder; top-level paths against the root."""
    start = r"(?<![\w./@:~-])"
    heads = "(?:" + "|".join(map(re.escape, sorted(tops))) + ")"
    token = re.compile(start + "(" + heads + r"/[\w./*{},<>$%-]*)")
    packages = "(?:" + "|".join(MODULE_ROOTS) + ")"
    module_file = re.compile(start + "(" + packages + r"/[\w./-]*\.py)\b")
    here = posixpath.dirname(rel)
    refs = []
    for n, line in enumerate(text.splitlines(), 1):
        if rel.endswith(".md"):
            for m in LINK.finditer(line):
                target = m.group(1).split("#")[0]
                if target and not re.match(r"[a-z][a-z0-9+.-]*:", target):
                    refs.append((n, target, posixpath.normpath(posixpath.join(here, target))))
        quoted = [(m.start(1), m.end(1)) for m in BACKTICKED.finditer(line)]
        for m in token.finditer(line):
            raw = m.group(1).rstrip(".,:;")
            if TEMPLATE.search(raw) or "..." in m.group(1) or line[m.end(1) : m.end(1) + 1] == "…":
                continue
            in_backticks = any(a <= m.start(1) < b for a, b in quoted)
            last = raw.rstrip("/").rsplit("/", 1)[-1]
            if not (in_backticks or raw.endswith("/") or re.search(r"\.\w+$", last)):
                continue  # prose like "host/installer", not a path
            refs.extend((n, raw, p.rstrip("/")) for p in expand(raw))
        for m in module_file.finditer(line):
            # a package's own path (`railbird/core/shots.py`) lives in its top-level folder
            head = m.group(1).split("/")[0]
            refs.append((n, m.group(1), f"{MODULE_ROOTS[head]}/{m.group(1)}"))
    return refs


def top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def module_resolves(name: str, root: Path = REPO) -> bool:
    """`pkg.module.attr`: the longest prefix that is a module, and then one name defined
    at the top of it (a method after a class name is not looked up)."""
    parts = name.split(".")
    base = root / MODULE_ROOTS[parts[0]]
    for i in range(len(parts), 0, -1):
        where = base.joinpath(*parts[:i])
        if where.is_dir():
            where = where / "__init__.py"
            break
        if where.with_suffix(".py").is_file():
            where = where.with_suffix(".py")
            break
    rest = parts[i:]
    if not rest:
        return True
    return where.is_file() and rest[0] in top_level_names(where)


def module_references(text: str) -> list[tuple[int, str]]:
    return [
        (n, m.group(0))
        for n, line in enumerate(text.splitlines(), 1)
        for q in BACKTICKED.finditer(line)
        if (m := DOTTED.match(q.group(1))) and not FILE_SUFFIX.search(m.group(0))
    ]


def section_references(rel: str, text: str, files: list[str]) -> list[tuple[int, str, str]]:
    """(line, section as written, page path) for each named section of a markdown page; a
    page given by its bare name (`SPEC.md`) is the one page of that name."""
    tracked = set(files)
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(posixpath.basename(f), []).append(f)
    refs = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in SECTION.finditer(line) if ".md" in line else ():
            page, name = m.group(1), next(g for g in m.groups()[1:] if g)
            here = posixpath.normpath(posixpath.join(posixpath.dirname(rel), page))
            found = [p for p in (page, here) if p in tracked]
            if not found and len(by_name.get(page, [])) == 1:
                found = by_name[page]
            if found:
                refs.append((n, name, found[0]))
    return refs


def has_section(page_text: str, name: str) -> bool:
    heads = [h.lstrip("#").strip().lower() for h in page_text.splitlines() if h.startswith("#")]
    if re.fullmatch(r"\d+[a-z]?", name):  # "## 3a. Uncertain ..." or a list's item "8. ..."
        numbered = re.compile(r"(?:#+ *|\s*)" + re.escape(name) + r"[. ]", re.M)
        return bool(numbered.search(page_text))
    bold = [b.lower() for b in re.findall(r"\*\*([^*]+)\*\*", page_text)]
    return any(name.lower() in h for h in heads + bold)


def dangling(refs, files: list[str], ignored: set[str]) -> list[tuple[int, str]]:
    tracked = set(files)
    folders = {posixpath.dirname(f) for f in files}
    for d in list(folders):
        while d:
            folders.add(d)
            d = posixpath.dirname(d)

    def exists(path: str) -> bool:
        if any(c in path for c in "*?["):
            return any(fnmatch.fnmatch(f, path) for f in files)
        return path in tracked or path in folders

    def generated(path: str) -> bool:
        parts = path.split("/")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
        return path.endswith(".mpy") or bool(prefixes & ignored)

    return [(n, raw) for n, raw, path in refs if not exists(path) and not generated(path)]


def ignored_by_git(paths: set[str]) -> set[str]:
    """The paths (and their parent folders) that .gitignore covers: build output."""
    candidates = set()
    for p in paths:
        parts = p.split("/")
        for i in range(1, len(parts) + 1):
            # with a trailing slash too: `build/` patterns match folders only, and a folder
            # that is not built yet is not on disk for git to see
            candidates.update({"/".join(parts[:i]), "/".join(parts[:i]) + "/"})
    out = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=REPO,
        input="\n".join(sorted(candidates)),
        capture_output=True,
        text=True,
    ).stdout
    return {p.rstrip("/") for p in out.split()}


def top_folders(files: list[str]) -> set[str]:
    return {f.split("/")[0] for f in files if "/" in f}


def scan(
    files: list[str], root: Path = REPO, skip: set[str] = frozenset()
) -> tuple[list[str], list[str]]:
    """(forbidden mentions, dangling references) in `files` but `skip`, as "file:line: text"."""
    tops = top_folders(files)
    bad_mentions, refs, bad_refs = [], [], []
    for rel in files:
        text = None if rel in skip else read_text(rel, root)
        if text is None:
            continue
        bad_mentions += [f"{rel}:{n}: {s}" for n, s in forbidden_mentions(text)]
        refs += [(rel, r) for r in path_references(rel, text, tops)]
        bad_refs += [
            f"{rel}:{n}: {name}"
            for n, name in module_references(text)
            if not module_resolves(name, root)
        ]
        bad_refs += [
            f"{rel}:{n}: {page} section {name!r}"
            for n, name, page in section_references(rel, text, files)
            if not has_section(read_text(page, root) or "", name)
        ]
    ignored = ignored_by_git({r[2] for _, r in refs})
    for rel in files:
        mine = [r for f, r in refs if f == rel]
        bad_refs += [f"{rel}:{n}: {raw}" for n, raw in dangling(mine, files, ignored)]
    return bad_mentions, bad_refs


def test_nothing_refers_to_the_design_notes_outside_the_repository():
    mentions, _ = scan(git_files(), skip={SELF})
    assert not mentions, "the design is docs/architecture.md now:\n" + "\n".join(mentions)


def test_every_referenced_repository_path_exists():
    _, refs = scan(git_files(), skip={SELF})
    assert not refs, "references to files a clone does not contain:\n" + "\n".join(refs)


def test_the_checker_flags_a_bad_sample(tmp_path):
    # The two checks above must be able to fail: a sample with one of each kind of dangling
    # reference and a forbidden mention, next to things that only look like paths.
    files = [
        "docs/a.md",
        "docs/b.md",
        "host/railbird/core/shots.py",
        "hardware/pinmaps/x.json",
        "firmware/main.py",
        "tests/test_x.py",
    ]
    sample = "\n".join(
        [
            "See [b](b.md), [a section](b.md#x), [root](../README.md) and the [web](https://x/y).",
            "Old paths: `host/railbird/host/pipeline.py` and docs/gone.md, [lost](lost.md).",
            "Fine: `host/railbird/core/shots.py`, hardware/pinmaps/*.json, `host/railbird/core/`,",
            "`host/railbird/core/{shots,timeline}.py`, `firmware/build/node/boot.py`,",
            "railbird/v1/<venue>/<table>/shot, /dev/ttyUSB0, `hardware/wiring-<id>.svg`,",
            "host/installer -> node, `docs/…`, `tests/rules/test_rule_9_7_...`.",
            "The design was in " + "DESIGN" + ".md and the seeds in ../" + "shared/seeds.",
            "`railbird.core.shots.assemble()`, `railbird.core`, `railbird.toml`, `rbnode.x`,",
            "`railbird.core.shots.Shot`, `railbird.core.pipeline.Pipeline`.",
            "railbird/core/shots.py, `railbird/daemon.py`, rbnode/x.mpy, railbird/v1/t1/shot.",
            'Sections: docs/b.md, "Present", `b.md` §"bold lead", docs/b.md §3a, b.md §Gone,',
            "b.md §2,",
            'docs/b.md "Missing" and docs/b.md §4.',
        ]
    )
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(sample if rel == "docs/a.md" else "")
    (tmp_path / "host/railbird/core/shots.py").write_text("def assemble():\n    pass\n")
    (tmp_path / "docs/b.md").write_text(
        "# B\n\n## 3a. Present here\n\n**Bold lead.** Text.\n\n1. first\n2. second\n"
    )
    mentions, refs = scan(files, tmp_path)
    assert mentions == [
        "docs/a.md:7: " + "DESIGN" + ".md",
        "docs/a.md:7: ../" + "shared",
    ]
    assert refs == [
        "docs/a.md:8: rbnode.x",
        "docs/a.md:9: railbird.core.shots.Shot",
        "docs/a.md:9: railbird.core.pipeline.Pipeline",
        "docs/a.md:11: docs/b.md section 'Gone'",
        "docs/a.md:13: docs/b.md section 'Missing'",
        "docs/a.md:13: docs/b.md section '4'",
        "docs/a.md:1: ../README.md",
        "docs/a.md:2: lost.md",
        "docs/a.md:2: host/railbird/host/pipeline.py",
        "docs/a.md:2: docs/gone.md",
        "docs/a.md:4: host/railbird/core/{shots,timeline}.py",
        "docs/a.md:10: railbird/daemon.py",
    ]


def test_licence_is_the_one_pyproject_declares():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(r'^license = "MIT"$', pyproject, re.M)
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 The Railbird developers" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def artefacts(files: list[str]) -> list[str]:
    return [f for f in files if any(fnmatch.fnmatch(f.lower(), p) for p in ARTEFACTS)]


def test_no_build_artefact_is_committed():
    found = artefacts(git_files())
    assert not found, "built files are made by make/pip, not committed: " + ", ".join(found)


def test_artefact_check_can_fail():
    files = [
        "dist/railbird-0.1.0-py3-none-any.whl",
        "firmware/rbnode/node.mpy",
        "host/railbird/__pycache__/cli.cpython-311.pyc",
        "build/firmware.bin",
        "docs/images/demo-web.png",
        "host/railbird/outputs/web/static/app.js",
    ]
    assert artefacts(files) == files[:4]
