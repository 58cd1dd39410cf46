"""Every folder of the repository opens with one paragraph saying what lives there and what
it may import: the docstring of its `__init__.py` for a Python package, else the first
paragraph of its README.md (docs/architecture.md, "Layout").
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Folders that hold only data or a single self-describing file, with the reason.
EXEMPT = {
    ".": "the root README.md is the product's front page; the layout is docs/architecture.md",
    ".ci": "one script, the CI entry point, whose header says what it runs",
    "docs/images": "screenshots only (docs/README.md says where they come from)",
    "tests/demo/scenarios": "scenario data files; tests/demo/__init__.py and docs/demo.md",
    "host/railbird/outputs/web/static": "web assets; railbird/outputs/web/__init__.py",
}
MIN_WORDS = 20  # enough for "what lives here" and "what it may import"


def tracked_folders() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    files = [f for f in out.decode().split("\0") if f]
    return sorted({str(Path(f).parent) for f in files if (REPO / f).exists()})


def opening(folder: Path) -> tuple[str, str]:
    """(where it comes from, its first paragraph) or ("", "") when there is none."""
    init, readme = folder / "__init__.py", folder / "README.md"
    if init.exists():
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        return "__init__.py", doc.strip().split("\n\n")[0]
    if readme.exists():
        paragraphs = [p.strip() for p in readme.read_text().split("\n\n")]
        body = [p for p in paragraphs if p and not p.startswith("#")]
        return "README.md", body[0] if body else ""
    return "", ""


def problem(folder: Path) -> str | None:
    where, text = opening(folder)
    if not where:
        return "no __init__.py docstring or README.md"
    if len(text.split()) < MIN_WORDS:
        return f"{where}: the opening paragraph is too short to say what lives here"
    if "import" not in text.lower():
        return f"{where}: the opening paragraph does not say what may be imported"
    return None


def test_every_folder_opens_with_what_lives_there_and_what_it_may_import():
    bad = [
        f"{d}: {why}" for d in tracked_folders() if d not in EXEMPT and (why := problem(REPO / d))
    ]
    assert not bad, "\n".join(bad)


def test_exemptions_are_real_folders():
    # A stale exemption would hide a folder that later gains code.
    missing = [d for d in EXEMPT if d not in tracked_folders()]
    assert not missing, missing


def test_the_check_can_fail(tmp_path):
    cases = {
        "empty_init/__init__.py": "",
        "short/README.md": "# Short\n\nJust some files.\n",
        "no_rule/__init__.py": '"""' + "Lives here: the parts of the thing. " * 5 + '"""\n',
        "rule_later/README.md": "# X\n\n" + "Data files. " * 12 + "\n\nMay import nothing.\n",
        "good/__init__.py": '"""' + "The parts of the thing. " * 5 + 'May import `x`."""\n',
        "good_readme/README.md": "# Y\n\n" + "Data that code reads. " * 5 + "Nothing imports it.\n",
    }
    for rel, text in cases.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "nothing").mkdir()
    got = {d.name: problem(d) for d in sorted(tmp_path.iterdir())}
    assert got == {
        "empty_init": "__init__.py: the opening paragraph is too short to say what lives here",
        "good": None,
        "good_readme": None,
        "no_rule": "__init__.py: the opening paragraph does not say what may be imported",
        "nothing": "no __init__.py docstring or README.md",
        "rule_later": "README.md: the opening paragraph does not say what may be imported",
        "short": "README.md: the opening paragraph is too short to say what lives here",
    }


def unnamed_modules(package: Path) -> list[str]:
    """The modules and subpackages of `package` its `__init__.py` docstring does not name
    (as a whole word: `journal`, not `journalerror`)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    names = sorted(
        [p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
        + [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    )
    return [n for n in names if not re.search(rf"(?<![\w/.]){re.escape(n)}(?!\w)", doc)]


def test_every_package_names_each_of_its_modules():
    # "Lives here" is a list a reader trusts: a module left out of it is one nobody finds
    # (daemon/__init__ once named 8 of its 14).
    bad = [
        f"{init.parent.relative_to(REPO)}: {', '.join(missing)}"
        for init in sorted((REPO / "host" / "railbird").rglob("__init__.py"))
        if (missing := unnamed_modules(init.parent))
    ]
    assert not bad, "a package's docstring does not name these modules:\n" + "\n".join(bad)


def test_the_module_list_check_can_fail(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    for name in ("journal", "journalerror", "worker", "__main__"):
        (tmp_path / f"{name}.py").write_text("")
    (tmp_path / "__init__.py").write_text('"""Lives here: `journal` and the `worker`."""')
    assert unnamed_modules(tmp_path) == ["journalerror", "sub"]
