"""Every commit since the habit was written down (7645548) keeps it (docs/architecture.md,
"Conventions"): the subject is `area: summary` (an area word or path such as `core`,
`daemon/journal` or `docs`, then `: `, then the summary), at most 72 characters, and a
commit that changes more than a few lines explains itself in a body after a blank line.
Merges are included: a merge subject names its area too (`merge: layout`, say); a merge
needs no body of its own, since the commits it brings in are checked one by one and carry
the reasons and figures.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SINCE = "7645548"  # the last commit before the habit was checked
SUBJECT_MAX = 72
FEW_LINES = 5  # a change of more lines (added + deleted) needs a body
# one or more areas, `: `, then a summary that starts with something other than a space. An
# area is a lowercase word or path (`core`, `daemon/journal`, `tests, docs`) or a file's path
# (`README.md`); a capitalised word (`Review:`, `Restart:`) is a summary, not an area.
AREA = r"(?:[a-z][\w./-]*|[\w-]*[./][\w./-]+)"
SUBJECT = re.compile(rf"{AREA}(?:, {AREA})*: \S.*")


def problems(subject: str, rest: str, changed_lines: int) -> list[str]:
    """What is wrong with one commit message: its subject, what follows it, the lines the
    commit changes."""
    out = []
    if not SUBJECT.fullmatch(subject):
        out.append("subject is not `area: summary`")
    if len(subject) > SUBJECT_MAX:
        out.append(f"subject is {len(subject)} characters (at most {SUBJECT_MAX})")
    if rest and not rest.startswith("\n"):
        out.append("no blank line between the subject and the body")
    if changed_lines > FEW_LINES and not rest.strip():
        out.append(f"no body for a change of {changed_lines} lines")
    return out


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout


def commits() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: there are no commits to check")
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip(f"a shallow clone: the history since {SINCE} may be cut off")
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{SINCE}^{{commit}}"], cwd=REPO, capture_output=True
    )
    if found.returncode != 0:
        pytest.skip(f"commit {SINCE} is not in this clone: no base to check from")
    return _git("rev-list", f"{SINCE}..HEAD").split()


def changed_lines(commit: str) -> int:
    """Lines added and deleted against the parent; 0 for a merge (its commits explain it)."""
    if len(_git("rev-list", "--parents", "-n", "1", commit).split()) > 2:
        return 0
    total = 0
    for row in _git("diff", "--numstat", f"{commit}^1", commit).splitlines():
        added, deleted, _ = row.split("\t", 2)
        if added != "-":  # "-": a binary file
            total += int(added) + int(deleted)
    return total


def test_every_commit_since_the_habit_keeps_it():
    bad = []
    for c in commits():
        message = _git("log", "-1", "--format=%B", c).rstrip("\n")
        subject, _, rest = message.partition("\n")
        bad.extend(f"{c[:9]} {subject!r}: {p}" for p in problems(subject, rest, changed_lines(c)))
    assert not bad, "commits that break the habit (docs/architecture.md, Conventions):\n" + (
        "\n".join(bad)
    )


def test_the_check_can_fail():
    assert problems("core: typed records for the pipeline's output", "", 3) == []
    assert problems("daemon/journal: JournalError in a module", "\nBecause.", 40) == []
    assert problems("tests, docs: the layout", "\nWhy.", 40) == []
    assert problems("Review: the clock model's bound", "", 1) == ["subject is not `area: summary`"]
    assert problems("README.md: the front page", "", 1) == []
    assert problems("fixed stuff", "", 1) == ["subject is not `area: summary`"]
    assert problems("core:no space", "", 1) == ["subject is not `area: summary`"]
    assert problems("docs: " + "x" * 70, "", 1) == ["subject is 76 characters (at most 72)"]
    assert problems("core: a change", "", 40) == ["no body for a change of 40 lines"]
    assert problems("core: a change", "body right under it", 40) == [
        "no blank line between the subject and the body"
    ]
