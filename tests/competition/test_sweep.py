"""`make sweep-brackets`: every event size from 2 to 64 in every format, drawn and seeded,
with RAILBIRD_BRACKET_SWEEP seeds of random results each (default 3), through the same
checks as the property tests (tests/competition/play.py), and the figures printed: events
played, matches, byes in the losers' bracket, resets, CPU seconds. Skipped in `make test`,
whose property tests draw a bounded sample of the same space."""

from __future__ import annotations

import os
import random
import time

import pytest

from railbird.competition import tournament as T
from railbird.competition.spec import Format, Seeding, Stage, make_spec
from railbird.competition.tournament import MatchState
from tests.competition.play import check_complete, entrants, play

SEEDS = int(os.environ.get("RAILBIRD_BRACKET_SWEEP", "0") or "0")


@pytest.mark.slow
@pytest.mark.skipif(not SEEDS, reason="make sweep-brackets (RAILBIRD_BRACKET_SWEEP=N seeds)")
@pytest.mark.parametrize("fmt", list(Format))
def test_every_size_from_2_to_64(fmt, capsys):
    t0 = time.process_time()
    events = matches = lb_byes = resets = 0
    top = 24 if fmt is Format.ROUND_ROBIN else 64
    for n in range(2, top + 1):
        for seed in range(SEEDS):
            for seeding in Seeding:
                spec = make_spec(fmt, "9-ball", 3, seeding=seeding, seed=seed)
                t = T.draw(T.create(spec, entrants(n)))
                t = play(t, random.Random(seed * 1000 + n), tables=None if seed % 2 else 4)
                check_complete(t)
                events += 1
                matches += sum(1 for m in t.matches if m.state is MatchState.DONE)
                lb_byes += sum(
                    1
                    for m in t.matches
                    if m.state is MatchState.BYE and m.round.stage is Stage.LOSERS
                )
                resets += t.matches[-1].state is MatchState.DONE and fmt is Format.DOUBLE
    with capsys.disabled():
        print(
            f"\n{fmt.value}: {events} events of 2 to {top} entrants, {matches} matches played, "
            f"{lb_byes} byes in the losers' bracket, {resets} resets, "
            f"{time.process_time() - t0:.1f} s CPU"
        )
