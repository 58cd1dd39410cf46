"""How many examples each fuzz target runs: its default for `make test` times
RAILBIRD_FUZZ_SCALE (`make fuzz` sets it), recorded so the run can print what it ran."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("RAILBIRD_FUZZ_SCALE", "1") or "1")
RAN: dict[str, int] = {}  # target -> max_examples, printed by conftest.py


def examples(target: str, default: int) -> int:
    n = max(1, round(default * SCALE))
    RAN[target] = n
    return n
