"""Every suppression in the repository's Python says why, on its own line (issue 11).

A suppression silences a checker for one line, so the reader of that line is owed the
reason. The accepted forms:

- `# noqa: BLE001 - <reason>`: ruff codes, then " - " and the reason (a bare `# noqa`
  silences every rule, so it is refused even with a reason);
- `# type: ignore[<code>]  # <reason>`: mypy codes, then the reason as a comment of its own
  (mypy does not read a `type: ignore` followed by other text, so `- reason` would turn the
  ignore off);
- `# pragma: no cover` is refused outright: no coverage tool runs here, so nothing reads it.

Only comments count (found with `tokenize`), so the examples in strings, like those below,
do not.
"""

from __future__ import annotations

import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_CODES = r"[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*"
NOQA_OK = re.compile(rf"noqa:\s*{_CODES}\s+-\s+\S.*", re.IGNORECASE)
TYPE_IGNORE_OK = re.compile(r"type:\s*ignore\[[a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*\]\s*")


def comment_problem(comment: str) -> str | None:
    """Why a comment's suppression is not acceptable, or None (also for no suppression).
    A comment may hold several parts (`# noqa: E402 - why  # more`); each is checked."""
    parts = [p.strip() for p in comment.split("#")[1:]]
    for i, part in enumerate(parts):
        low = part.lower()
        if re.match(r"noqa\b", low):
            if not NOQA_OK.fullmatch(part):
                return "noqa must name its codes and give a reason: `# noqa: CODE - <reason>`"
        elif re.match(r"type:\s*ignore\b", low):
            if not TYPE_IGNORE_OK.fullmatch(part):
                return (
                    "type: ignore must name its codes and stop there: "
                    "`# type: ignore[code]  # <reason>`"
                )
            if i + 1 >= len(parts) or not parts[i + 1]:
                return "type: ignore without a reason: add `  # <reason>` after it"
        elif re.match(r"pragma:\s*no\s*cover\b", low):
            return "pragma: no cover has no reader (no coverage tool runs here): remove it"
    return None


def source_problems(text: str) -> list[tuple[int, str, str]]:
    """[(line, comment, why)] for each unacceptable suppression comment in `text`."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            why = comment_problem(tok.string)
            if why:
                out.append((tok.start[0], tok.string, why))
    return out


def tracked_python() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    return [REPO / n for n in names if n and (REPO / n).exists()]


def test_every_suppression_in_the_repository_has_a_reason():
    files = tracked_python()
    assert len(files) > 100  # git answered: this is the checkout, not an empty listing
    bad = []
    for path in files:
        rel = path.relative_to(REPO)
        for line, comment, why in source_problems(path.read_text(encoding="utf-8")):
            bad.append(f"{rel}:{line}: {comment.strip()}  <- {why}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "line",
    [
        "import x  # noqa: F401 - re-exported for railbird.outputs",
        "from a import b  # noqa: E402, F401 - needs the path set above",
        "y = f(x)  # type: ignore[arg-type]  # the stub says int, the port takes str",
        "z = 1  # a plain comment about why noqa is used elsewhere",
        's = "# noqa"  # the directive in a string is not a comment',
        "w = 2  # keep this  # noqa: BLE001 - a second part of the comment",
    ],
)
def test_suppressions_with_a_reason_pass(line):
    assert source_problems(line + "\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "import x  # noqa: F401",
        "import x  # noqa",
        "import x  # noqa - a reason, but every rule silenced",
        "import x  # NOQA:F401",
        "import x  # noqa: F401 (device only)",
        "y = f(x)  # type: ignore",
        "y = f(x)  # type: ignore[arg-type]",
        "y = f(x)  # type: ignore[arg-type] - mypy would not read this ignore",
        "y = f(x)  # type: ignore  # a reason but no code",
        "else:  # pragma: no cover",
        "else:  # pragma: no cover - a reason does not help: nothing reads it",
    ],
)
def test_suppressions_without_a_reason_fail(line):
    assert len(source_problems(line + "\n")) == 1


def test_the_line_number_and_comment_are_reported():
    src = "import os\n\nimport sys  # noqa: F401\n"
    assert source_problems(src) == [
        (3, "# noqa: F401", "noqa must name its codes and give a reason: `# noqa: CODE - <reason>`")
    ]
