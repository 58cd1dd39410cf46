"""`make fuzz` prints what it ran: the examples per target and the seed to repeat the run."""

import os

from .budget import RAN, SCALE


def pytest_terminal_summary(terminalreporter):
    if "RAILBIRD_FUZZ_SCALE" not in os.environ or not RAN:
        return
    terminalreporter.section("fuzz", sep="=")
    seed = os.environ.get("RAILBIRD_FUZZ_SEED", "random")
    terminalreporter.write_line(f"scale {SCALE:g} x make test's examples, seed {seed}")
    for target, n in RAN.items():
        terminalreporter.write_line(f"  {target}: up to {n} examples")
    terminalreporter.write_line(f"repeat: make fuzz FUZZ_SCALE={SCALE:g} FUZZ_SEED={seed}")
