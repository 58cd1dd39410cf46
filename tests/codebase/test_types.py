"""The host's types are checked in `make test` (issue 21): mypy runs once with pyproject.toml's
[tool.mypy] over host/railbird and protocol/, and

- the strict packages, railbird.core, railbird.daemon and railbird.rules
  (tools/mypy_baseline.py, STRICT_DIRS), have no error at all;
- every other error is one tests/codebase/mypy_baseline.txt lists, and the baseline lists
  nothing that no longer occurs, so it only shrinks. Its entries are (file, error code,
  message) with a count, never a line number (tools/mypy_baseline.py says why).

A first run takes about 12 s (mypy's cache, .mypy_cache/ at the root, is then about 3 s).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tools import mypy_baseline as mb  # noqa: E402 - needs the repository root on sys.path


@pytest.fixture(scope="module")
def errors() -> list[mb.MypyError]:
    return mb.run_mypy()


@pytest.mark.slow
def test_the_strict_packages_have_no_type_errors(errors):
    strict = sorted((e for e in errors if mb.in_strict_package(e)), key=lambda e: (e.file, e.line))
    if strict:
        pytest.fail(
            f"{len(strict)} type errors in the strict packages ({', '.join(mb.STRICT_DIRS)}); "
            "these are never baselined, fix them:\n" + "\n".join(str(e) for e in strict)
        )


@pytest.mark.slow
def test_every_other_type_error_is_in_the_baseline_and_no_more(errors):
    others = [e for e in errors if not mb.in_strict_package(e)]
    baseline = mb.read_baseline()
    assert not [k for k in baseline if k[0].startswith(mb.STRICT_DIRS)], (
        "the baseline lists errors of a strict package: those must be fixed, not baselined"
    )
    new, stale = mb.compare(mb.counts(others), baseline)
    problems = []
    if new:
        problems.append("new type errors, not in the baseline (fix them):")
        # every occurrence of a key that occurs too often, with its line, for the reader
        problems += [f"  {e}" for e in others if e.key in new]
    if stale:
        problems.append("fixed — remove it: run tools/mypy_baseline.py")
        problems += [f"  {n}x {f} [{c}] {m}" for (f, c, m), n in sorted(stale.items())]
    if problems:
        pytest.fail("\n".join(problems))


# The comparison itself, on made-up output: it must be able to fail both ways.

OUTPUT = """\
host/railbird/rules/general.py:41: error: Invalid index type "int | None" for "list[int]"; \
expected type "int"  [index]
host/railbird/rules/general.py:41: note: See https://mypy.rtfd.io/en/stable/_refs.html
host/railbird/cli.py:12: error: Name "R" already defined on line 51  [no-redef]
host/railbird/cli.py:80: error: Name "R" already defined on line 63  [no-redef]
host/railbird/cli.py:90: error: invalid syntax
Found 4 errors in 2 files (checked 146 source files)
"""


def test_the_output_is_parsed_without_line_numbers_in_the_keys():
    parsed = mb.parse(OUTPUT)
    assert [(e.file, e.line, e.code) for e in parsed] == [
        ("host/railbird/rules/general.py", 41, "index"),
        ("host/railbird/cli.py", 12, "no-redef"),
        ("host/railbird/cli.py", 80, "no-redef"),
        ("host/railbird/cli.py", 90, "no-code"),
    ]
    assert mb.in_strict_package(parsed[0]) and not mb.in_strict_package(parsed[1])
    # the two no-redef errors differ only by line numbers: one entry, counted twice
    assert (
        mb.counts(parsed)[
            ("host/railbird/cli.py", "no-redef", 'Name "R" already defined on line N')
        ]
        == 2
    )


def test_a_new_error_and_a_fixed_one_are_both_found(tmp_path):
    current = mb.counts(mb.parse(OUTPUT))
    path = tmp_path / "baseline.txt"
    path.write_text(mb.format_baseline(current), encoding="utf-8")
    assert mb.read_baseline(path) == current
    assert mb.compare(current, mb.read_baseline(path)) == (Counter(), Counter())

    one_more = current + Counter({("host/railbird/cli.py", "no-redef", "x"): 1})
    new, stale = mb.compare(one_more, current)
    assert new == Counter({("host/railbird/cli.py", "no-redef", "x"): 1}) and not stale

    key = ("host/railbird/cli.py", "no-redef", 'Name "R" already defined on line N')
    one_fixed = current - Counter({key: 1})
    new, stale = mb.compare(one_fixed, current)
    assert not new and stale == Counter({key: 1})


def test_a_malformed_baseline_line_is_refused(tmp_path):
    path = tmp_path / "baseline.txt"
    path.write_text("# comment\nhost/railbird/cli.py:12: [no-redef] x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"baseline\.txt:2"):
        mb.read_baseline(path)
