"""The sensing benchmark's scorer (tools/sensing_corpus, `make bench-sensing`) on a tiny
hand-written corpus, without pooltool: the figures it prints must count what they claim.

Part one scores hand-made assembled shots against hand-made truth (a merged pair of shots, a
cue ball paired with the wrong drop, a break ruled legal on a range that excludes the truth,
one flagged). Part two streams hand-written physics traces through the sensor model and the
node batching into the pipeline `railbird assemble` runs, with and without the strike
channel.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tools.sensing_corpus import score, stream  # noqa: E402 - needs the repository root

from railbird.config import from_dict  # noqa: E402 - after the repository root is on sys.path
from railbird.daemon.offline import assemble  # noqa: E402 - after sys.path, as above


def truth(i, kind="pot", strike_t=0, pocketed=(), obr=0, cue_rail=True, rail=True):
    return {
        "shot": i,
        "id": i,
        "kind": kind,
        "table": "t9",
        "size": "9ft",
        "strike_t": strike_t,
        "pocketed": [list(p) for p in pocketed],
        "scratch": any(b == 0 for b, _ in pocketed),
        "object_balls_to_rail": obr,
        "object_balls_to_rail_any": obr,
        "cue_ball_to_rail": cue_rail,
        "rail": rail,
    }


def ev(shot, t, kind, **kw):
    return {"shot": shot, "t": t, "kind": kind, **kw}


def shot(start, end, pocketed=(), rails=(), obr=0, span=None, strike=True):
    return {
        "table": "t9",
        "start": start,
        "end": end,
        "pocketed": [
            {"pocket": p, "ball": b, "t": start, "source": "sensed" if b is None else "inferred"}
            for p, b in pocketed
        ],
        "rails": [{"rail": r, "t": start + 1000 * k, "amp": 900} for k, r in enumerate(rails)],
        "warnings": [],
        "cue_unpaired": [],
        "strike": {"t": start, "amp": 2000} if strike else None,
        "clicks": 0,
        "rest_before": None,
        "object_balls_to_rail": obr,
        "object_balls_to_rail_range": span,
    }


S = 1_000_000


def test_scorer_counts_merges_wrong_pairings_and_break_rulings():
    truths = [
        truth(0, strike_t=0, pocketed=[(0, "HL"), (3, "FR")]),
        truth(1, strike_t=20 * S),
        truth(2, strike_t=22 * S),
        truth(3, kind="break10", strike_t=40 * S, obr=3),
        truth(4, kind="break10", strike_t=60 * S, obr=3),
    ]
    events = {
        "t9": [
            ev(0, 0, "strike"),
            ev(0, 1 * S, "drop"),
            ev(0, 2 * S, "drop"),
            ev(0, 3 * S, "cue"),
            ev(1, 20 * S, "strike"),
            ev(1, 21 * S, "rail"),
            ev(2, 22 * S, "strike"),
            ev(2, 23 * S, "rail"),
            ev(3, 40 * S, "strike"),
            ev(3, 41 * S, "rail"),
            ev(4, 60 * S, "strike"),
            ev(4, 61 * S, "rail"),
        ]
    }
    shots = [
        # the cue ball paired with the object ball's drop in FR: the pocketed set is wrong
        shot(0, 3 * S, pocketed=[("HL", None), ("FR", 0)]),
        shot(20 * S, 23 * S, rails=["H", "F"]),  # shots 1 and 2 merged into one
        # a range that excludes the truth (3) decides "legal": wrong and not flagged
        shot(40 * S, 41 * S, rails=["F"] * 6, obr=6, span=[5, 8]),
        # a range that straddles four: provisional, the fair default (legal) is wrong
        shot(60 * S, 61 * S, rails=["F"] * 4, obr=4, span=[2, 6]),
    ]
    res = score.score(truths, events, shots, strike=True)
    assert res["segmentation_n"] == 3  # 0, 3, 4; the merged pair both wrong
    assert (res["segmentation_split"], res["segmentation_merged"]) == (0, 2)
    assert res["pocketed_exact_n"] == 4  # all but shot 0
    assert res["scratch_n"] == 5 and res["scratches_seen"] == 1
    assert res["breaks"] == 2 and res["breaks_illegal"] == 2
    assert res["breaks_wrong_unflagged"] == 1
    assert res["breaks_wrong_flagged"] == 1 and res["breaks_flagged"] == 1

    # without the strike channel the same strikes are not sensed: nothing else changes here
    res = score.score(truths, events, shots, strike=False)
    assert res["segmentation_n"] == 3 and res["invisible"] == 0


def test_missed_strikes_take_the_strokes_own_strike_of_that_share_of_the_shots():
    """10 % of 40 shots lose the strike at their `strike_t`, their clicks stay; the same
    seed draws the same shots; a shot whose only event was its strike is then unseen."""
    truths = [truth(i, strike_t=i * 20 * S) for i in range(40)]
    events = {
        "t9": [
            e
            for i in range(40)
            for e in (ev(i, i * 20 * S, "strike"), ev(i, i * 20 * S + S // 2, "strike"))
        ]
    }
    out = stream.with_missed_strikes(events, truths, 15, 0.10)
    kept = {(e["shot"], e["t"]) for e in out["t9"]}
    missed = [i for i in range(40) if (i, i * 20 * S) not in kept]
    assert len(missed) == 4
    assert all((i, i * 20 * S + S // 2) in kept for i in range(40))  # every click stays
    assert stream.with_missed_strikes(events, truths, 15, 0.10) == out
    assert len(stream.with_missed_strikes(events, truths, 15, 1.0)["t9"]) == 40
    lone = {"t9": [ev(i, i * 20 * S, "strike") for i in range(40)]}
    unseen = stream.with_missed_strikes(lone, truths, 15, 0.10)
    shots = [shot(e["t"], e["t"]) for e in unseen["t9"]]
    res = score.score(truths, unseen, shots, strike=True)
    assert res["invisible"] == 4 and res["segmentation_n"] == 36
    assert res["segmentation_seen"] == 1.0


# The records of a physics trace (tools/sensing_corpus/physics.py, `simulate`): the stroke, a
# ball-ball contact, a cushion impact, a ball pocketed.
def stroke(t, speed):
    return {"t": t, "type": "strike", "speed": speed}


def contact(t, a, b, dv):
    return {"t": t, "type": "ball", "balls": [a, b], "dv": dv}


def cushion(t, ball, rail, dv=2.5):
    # right at the rail's piezo: far above any threshold
    x, y = {"H": (0.635, 0.0), "F": (0.635, 2.54), "LH": (0.0, 0.635), "RF": (1.27, 1.905)}[rail]
    return {"t": t, "type": "cushion", "ball": ball, "rail": rail, "dv": dv, "x": x, "y": y}


def pocket(t, ball, name):
    return {"t": t, "type": "pocket", "ball": ball, "pocket": name}


def trace(i, kind, events, duration):
    spec = {"id": i, "kind": kind, "table": "9ft"}
    return {"spec": spec, "ok": True, "duration": duration, "events": events}


TRACES = [
    # a pot into a foot pocket
    trace(
        0,
        "pot",
        [
            stroke(0.0, 2.0),
            contact(0.4, 0, 1, 1.8),
            cushion(0.9, 0, "LH"),
            pocket(1.2, 1, "FL"),
        ],
        3.0,
    ),
    # the cue ball into a head pocket, an object ball into a foot pocket after it: the cue
    # detector's event is nearer the later drop
    trace(
        1,
        "scratch",
        [
            stroke(0.0, 3.0),
            contact(0.3, 0, 1, 2.0),
            cushion(0.6, 1, "RF"),
            pocket(1.0, 0, "HL"),
            pocket(1.5, 1, "FR"),
        ],
        2.0,
    ),
    # a soft safety: the cue ball rolls up to a ball, too softly for any sensor but the strike
    trace(
        2,
        "safety",
        [
            stroke(0.0, 0.3),
            contact(1.1, 0, 1, 0.2),
        ],
        2.5,
    ),
    # a three-ball ten-ball break (nothing pocketed): illegal
    trace(
        3,
        "break10",
        [
            stroke(0.0, 6.0),
            contact(0.2, 0, 1, 5.0),
            cushion(0.7, 2, "F"),
            cushion(0.9, 3, "RF"),
            cushion(1.1, 4, "LH"),
            cushion(1.6, 0, "H"),
        ],
        6.0,
    ),
]


def run_variant(strike, knock=False):
    events, truths = stream.timelines(TRACES, seed=1)
    if knock:  # a bump of the table a minute after the last stroke: no shot's
        t = truths[-1]["strike_t"] + 60 * S
        events["t9"].append({"t": t, "kind": "strike", "amp": 300, "ready": t + 1000, "shot": -1})
    lines = stream.assemble_input(events, seed=1, strike=strike)
    # as `railbird assemble --config` reads it
    cfg = from_dict(tomllib.loads(stream.config_toml()))
    cfg.accept_unknown_tables = True
    cfg.venue = "*"
    shots = [json.loads(x) for x in assemble(lines, cfg)]
    return truths, score.score(truths, events, shots, strike=strike)


def test_hand_written_traces_through_the_assembler_with_and_without_the_strike():
    truths, res = run_variant(strike=True)
    assert [t["scratch"] for t in truths] == [False, True, False, False]
    assert truths[3]["object_balls_to_rail"] == 3 and truths[3]["cue_ball_to_rail"]
    assert res["shots"] == 4 and res["assembled"] == 4
    assert res["segmentation_n"] == 4 and res["start_at_strike"] == 1.0
    assert res["pocketed_exact_n"] == 4 and res["scratch_n"] == 4
    (brk,) = res["break_rows"]
    assert brk["truth_legal"] is False and brk["true_object_balls_to_rail"] == 3
    assert brk["rails_hit"] == ["F", "H", "LH", "RF"]

    assert res["phantom_shots"] == 0

    # the knock is assembled as a shot of its own that holds no shot's event
    truths, res = run_variant(strike=True, knock=True)
    assert res["assembled"] == 5 and res["phantom_shots"] == 1 and res["segmentation_n"] == 4

    truths, res = run_variant(strike=False)
    # the soft safety sends nothing: no shot, so it is segmented wrong
    assert res["invisible"] == 1 and res["assembled"] == 3
    assert res["segmentation_n"] == 3 and res["start_at_strike"] == 0.0
    assert res["pocketed_exact_n"] == 4
