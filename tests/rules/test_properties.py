"""Hypothesis properties: no input sequence crashes the engine (only RulesError), the
rack-size invariant, the 14.1 score identity, and FEN round-trips."""

from hypothesis import HealthCheck, given, settings, strategies as st

from railbird.rules import Referee, RulesError, from_fen, to_fen
from railbird.rules.engine import GAMES

POCKETS = ["HL", "HR", "SL", "SR", "FL", "FR"]
RACK = {"10-ball": 10, "14.1": 15, "9-ball": 9, "8-ball": 15}

balls = st.integers(0, 15)
pocket = st.sampled_from(POCKETS)
potted = st.fixed_dictionaries(
    {"pocket": pocket},
    optional={
        "ball": balls,
        "rested_us": st.integers(0, 10_000_000),
        "jammed": st.booleans(),
        "source": st.sampled_from(["sensed", "inferred", "referee"]),
    },
)
facts = st.sampled_from(
    [
        "pocketed",
        "first_contact",
        "rail_after_contact",
        "object_balls_to_rail",
        "cue_ball_to_rail",
        "off_table",
    ]
)
shot = st.fixed_dictionaries(
    {"type": st.just("shot")},
    optional={
        "pocketed": st.lists(potted, max_size=4),
        "first_contact": st.one_of(st.none(), st.integers(1, 15)),
        "rail_after_contact": st.booleans(),
        "object_balls_to_rail": st.integers(0, 15),
        "cue_ball_to_rail": st.booleans(),
        "off_table": st.lists(balls, max_size=2),
        "fouls": st.lists(
            st.sampled_from(
                [
                    "6.1",
                    "6.6",
                    "6.16",
                    "general 21",
                    "general 26",
                    "general 28",
                    "9.10.4",
                    "4.9.5",
                    "6.11.2",
                    "2.7.3",
                    "3.9.2",
                    "bogus",
                ]
            ),
            max_size=2,
        ),
        "uncertain": st.lists(facts, max_size=2),
    },
)
# The referee confirms, or corrects some facts of the last shot (issue 5 item 6).
confirm = st.fixed_dictionaries(
    {"type": st.just("confirm")},
    optional={
        "pocketed": st.lists(potted, max_size=2),
        "first_contact": st.one_of(st.none(), st.integers(1, 15)),
        "rail_after_contact": st.booleans(),
        "off_table": st.lists(balls, max_size=1),
        "fouls": st.lists(st.sampled_from(["6.6", "general 28"]), max_size=1),
    },
)
inputs = st.one_of(
    shot,
    shot,
    shot,
    st.fixed_dictionaries({"type": st.just("call"), "ball": st.integers(0, 16), "pocket": pocket}),
    st.just({"type": "call", "safety": True}),
    st.just({"type": "push_out"}),
    st.fixed_dictionaries(
        {
            "type": st.just("option"),
            "choice": st.sampled_from(["shoot", "pass", "accept", "rebreak", "spot", "break", "x"]),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("rerack")},
        optional={
            "cue_ball_in_rack_area": st.booleans(),
            "ball_in_rack_area": st.booleans(),
            "ball_behind_head_string": st.booleans(),
        },
    ),
    st.just({"type": "undo"}),
    confirm,
    st.just({"type": "stalemate"}),
    st.just({"type": "interference"}),
    st.fixed_dictionaries({"type": st.just("lag"), "winner": st.sampled_from(["Ann", "Bob", "X"])}),
    st.dictionaries(
        st.sampled_from(["type", "ball", "pocketed", "choice"]),
        st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers())),
    ),
)
game = st.sampled_from(sorted(GAMES))


def start(g):
    m = {"type": "match", "game": g, "players": ["Ann", "Bob"]}
    m["target" if g == "14.1" else "race_to"] = 20 if g == "14.1" else 2
    r = Referee(m)
    r.feed({"type": "lag", "winner": "Ann"})
    return r


def check_invariants(r):
    s = r.state
    assert len(s.on_table) + len(s.pocketed) + len(s.to_spot) == RACK[s.game]
    assert set(s.on_table).isdisjoint(s.pocketed) and set(s.on_table).isdisjoint(s.to_spot)
    assert list(s.to_spot) == sorted(s.to_spot)  # general 31 order
    if s.game == "14.1":
        assert s.scores == (s.credited[0] - s.penalties[0], s.credited[1] - s.penalties[1])
        assert all(h >= 0 for h in s.high_run)
    else:
        assert s.credited == s.penalties == (0, 0)
    text = to_fen(s)
    assert from_fen(text) == s and to_fen(from_fen(text)) == text
    out = r.state_json()
    assert out["fen"] == text and set(out["balls_on_table"]) == set(s.on_table)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game, st.lists(inputs, max_size=40))
def test_property_no_input_sequence_crashes_and_invariants_hold(g, seq):
    r = start(g)
    for inp in seq:
        before = r.state
        try:
            r.feed(inp)
        except RulesError:
            assert r.state == before  # a refused input changes nothing
        check_invariants(r)


# Mostly-legal play for 14.1: calls of balls on the table, so scoring really happens.
@st.composite
def straight_play(draw):
    return draw(
        st.lists(
            st.tuples(
                st.integers(1, 15),
                pocket,
                st.integers(0, 6),
                st.sampled_from(["", "0", "6.6", "safety", "miss"]),
            ),
            max_size=60,
        )
    )


@settings(max_examples=150, deadline=None)
@given(straight_play())
def test_property_14_1_score_is_points_minus_penalties(plays):
    r = start("14.1")
    credited = [0, 0]
    penalties = [0, 0]
    for ball, pk, extra, kind in plays:
        s = r.state
        if s.over:
            break
        shooter = s.at_table
        table = (
            sorted(set(s.on_table) | set(s.to_spot))
            if s.awaiting != "rerack"
            else list(range(1, 16))
        )
        b = table[ball % len(table)]
        try:
            if kind == "safety":
                r.feed({"type": "call", "safety": True})
            else:
                r.feed({"type": "call", "ball": b, "pocket": pk})
            pots = [] if kind == "miss" else [{"ball": b, "pocket": pk}]
            others = [x for x in table if x != b][: extra % 3]
            pots += [{"ball": x, "pocket": "SL"} for x in others]
            if kind == "0":
                pots.append({"ball": 0, "pocket": "HL"})
            r.feed(
                {"type": "shot", "pocketed": pots, **({"fouls": ["6.6"]} if kind == "6.6" else {})}
            )
        except RulesError:
            continue
        new = r.state
        for p in (0, 1):
            credited[p] += new.credited[p] - s.credited[p]
            penalties[p] += new.penalties[p] - s.penalties[p]
        assert new.credited[1 - shooter] == s.credited[1 - shooter]  # only the shooter scores
        check_invariants(r)
    s = r.state
    assert list(s.scores) == [credited[0] - penalties[0], credited[1] - penalties[1]]
