#!/usr/bin/env python3
"""Regenerate tests/codebase/mypy_baseline.txt: the type errors the host code still has
outside the strict packages (issue 21). tests/codebase/test_types.py imports this module to
run the same check: zero errors in the strict packages, every other error in the baseline,
and no baseline entry that no longer occurs (the baseline only shrinks).

mypy runs once over what pyproject.toml's [tool.mypy] names (host/railbird and protocol/).
An entry is (file, error code, message) with how many times it occurs in that file, never a
line number: those move with every edit above the error, and the baseline must not churn.
Line numbers inside a message ("already defined on line 51") are written as "line N".

usage: python tools/mypy_baseline.py [--init]
  Removes the entries that no longer occur and prints the errors that are new (fix those:
  the baseline never grows). --init writes every current error outside the strict packages,
  new ones included: for creating the baseline, or a change of mypy or of its configuration.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "tests" / "codebase" / "mypy_baseline.txt"
# The packages held at zero errors under the strict flags of [tool.mypy.overrides]: never in
# the baseline (issue 21, item 3: core/, rules/ and daemon/, the pure core and the daemon
# around it; issue 25: competition/ and registry/, strict from their first line). Every
# other package's errors are in the baseline, which may only shrink.
STRICT_DIRS = (
    "host/railbird/core/",
    "host/railbird/daemon/",
    "host/railbird/rules/",
    "host/railbird/competition/",
    "host/railbird/registry/",
)

_ERROR = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+): error: (?P<message>.*)$")
_CODE = re.compile(r"^(?P<message>.*?)  \[(?P<code>[a-z0-9-]+)\]$")
_LINE_IN_MESSAGE = re.compile(r"\bline \d+\b")


@dataclass(frozen=True)
class MypyError:
    """One error as mypy reported it (`line` is for the reader; `key` leaves it out)."""

    file: str
    line: int
    code: str
    message: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.file, self.code, _LINE_IN_MESSAGE.sub("line N", self.message))

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: [{self.code}] {self.message}"


class MypyFailed(RuntimeError):
    """mypy did not run to its report (a crash, a bad configuration, a missing install)."""


def parse(output: str) -> list[MypyError]:
    """The errors in mypy's default output (notes and the summary line are dropped)."""
    errors = []
    for raw in output.splitlines():
        m = _ERROR.match(raw)
        if not m:
            continue
        text = m["message"]
        c = _CODE.match(text)
        code, message = (c["code"], c["message"]) if c else ("no-code", text)
        errors.append(MypyError(m["file"], int(m["line"]), code, message))
    return errors


def run_mypy() -> list[MypyError]:
    """mypy with the repository's configuration, from its root -> the errors it reports.
    The cache is mypy's default, .mypy_cache/ at the root (a fresh clone creates it): a first
    run takes about 12 s on this machine, a cached one about 3 s."""
    cmd = [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--no-pretty"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    out = r.stdout + r.stderr
    errors = parse(out)
    # 0: clean, 1: errors were found and reported; anything else, or a 1 without a single
    # parsed error, means mypy stopped before checking (its message says why).
    if r.returncode not in (0, 1) or (r.returncode == 1 and not errors):
        raise MypyFailed(f"mypy exited {r.returncode}:\n{out}")
    return errors


def in_strict_package(error: MypyError) -> bool:
    return error.file.startswith(STRICT_DIRS)


def counts(errors: list[MypyError]) -> Counter[tuple[str, str, str]]:
    return Counter(e.key for e in errors)


def format_baseline(entries: Counter[tuple[str, str, str]]) -> str:
    lines = [
        "# The type errors outside the strict packages that the code still has, one",
        "# count<TAB>file<TAB>error code<TAB>message per line (no line numbers: they move).",
        "# It may only shrink: tests/codebase/test_types.py fails on an error not listed here",
        "# and on an entry that no longer occurs. Regenerate: python tools/mypy_baseline.py",
    ]
    for (file, code, message), n in sorted(entries.items()):
        lines.append(f"{n}\t{file}\t{code}\t{message}")
    return "\n".join(lines) + "\n"


def read_baseline(path: Path = BASELINE) -> Counter[tuple[str, str, str]]:
    entries: Counter[tuple[str, str, str]] = Counter()
    if not path.exists():
        return entries
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) != 4 or not parts[0].isdigit():
            raise ValueError(f"{path.name}:{lineno}: not count<TAB>file<TAB>code<TAB>message")
        n, file, code, message = parts
        entries[(file, code, message)] += int(n)
    return entries


def compare(
    current: Counter[tuple[str, str, str]], baseline: Counter[tuple[str, str, str]]
) -> tuple[Counter[tuple[str, str, str]], Counter[tuple[str, str, str]]]:
    """(new: occurring more often than the baseline says, stale: listed more often than
    they occur) — both empty when the baseline is exactly current."""
    return current - baseline, baseline - current


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init", action="store_true", help="write new errors into it too")
    args = ap.parse_args(argv)
    try:
        errors = run_mypy()
    except MypyFailed as e:
        print(e, file=sys.stderr)
        return 2
    strict = [e for e in errors if in_strict_package(e)]
    others = [e for e in errors if not in_strict_package(e)]
    current = counts(others)
    baseline = read_baseline()
    new, stale = compare(current, baseline)
    kept = current if args.init else current & baseline
    BASELINE.write_text(format_baseline(kept), encoding="utf-8")
    print(
        f"{BASELINE.relative_to(REPO)}: {len(kept)} entries, {sum(kept.values())} errors; "
        f"{sum(stale.values())} removed (fixed), {sum(new.values())} new "
        + ("(written)" if args.init else "(not written: fix them)")
    )
    if new and not args.init:
        print("\n".join(f"  {e}" for e in others if e.key in new))
    if strict:
        per_dir = Counter(d for e in strict for d in STRICT_DIRS if e.file.startswith(d))
        print("errors in the strict packages (never in the baseline; the test lists them):")
        print("\n".join(f"  {d} {n}" for d, n in sorted(per_dir.items())))
    return 1 if strict or (new and not args.init) else 0


if __name__ == "__main__":
    sys.exit(main())
