"""`make bench-scale` offers the traffic of the issue's scale probe (issue 16): about 0.43
events/s per table, a shot every 15-25 s, a break every few minutes, drops in a share of
the shots; and what its nodes send is a valid protocol v1 `events` batch."""

from __future__ import annotations

import json
import random

from railbird.bench.scale import shot_plan, shot_times
from rbproto import codec


def test_an_hour_of_play_per_table_is_the_probes_traffic():
    events = shots = breaks = drops = 0
    elapsed = 0
    for seed in range(20):  # 20 tables, an hour each
        rnd = random.Random(seed)
        t = 0
        for gap, brk in shot_times(rnd):
            if t >= 3600 * 10**6:
                break
            plan = shot_plan(rnd, brk)
            shots += 1
            breaks += brk
            events += len(plan)
            drops += sum(1 for _, _, ev in plan if ev["kind"] == "drop")
            t += gap
        elapsed += t
    rate = events / (elapsed / 1e6)
    assert 0.40 <= rate <= 0.48, rate
    assert 15 <= elapsed / 1e6 / shots <= 25
    minutes_per_break = elapsed / 60e6 / breaks
    assert 2 <= minutes_per_break <= 4, minutes_per_break
    assert 0.5 <= drops / shots <= 1.0, drops / shots


def test_a_shots_events_make_valid_batches():
    rnd = random.Random(3)
    for brk in (False, True) * 20:
        plan = shot_plan(rnd, brk)
        ready = [t + wait for t, wait, _ in plan]
        assert ready == sorted(ready)  # the node sends them in the order they are ready
        evs = [dict(ev, seq=i, t=1_000_000 + t) for i, (t, _, ev) in enumerate(plan)]
        msg = {"v": 1, "node": "n0001", "boot": 1, "events": evs[:32], "wm": 1_000_000}
        topic = codec.topic("scale", "t0001", "events", "n0001")
        kind, *_ = codec.decode_message(topic, json.dumps(msg).encode())
        assert kind == "events"
