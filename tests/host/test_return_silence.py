"""The ball return is not the table (issue 26; docs/shots.md "Strike", "Missed strike").

The cue detector and the colour station sit in the ball return: their `cue` and `ball`
events are balls already pocketed, still rolling to the foot end seconds after they dropped.
They keep a shot open, but the players do not wait for them, so the silence before the next
stroke is the table's, measured without them. On the sensing corpus with the colour station
a read 1.2 s before the next stroke made that stroke's strike a click of the break before
(two strokes ruled as one). Scripted events, in-process.
"""

from hypothesis import example, given, settings, strategies as st

from railbird.core.shots import ShotAssembler
from railbird.core.timeline import Event

MS = 1000


def ev(t_ms: float, kind: str, **kw) -> Event:
    return Event(t=round(t_ms * MS), node="n", boot=1, seq=0, kind=kind, **kw)


def read(t_ms: float, ball: int = 4) -> Event:
    return ev(t_ms, "ball", ball=ball, conf=95)


def shots_of(events: list[Event]) -> list[dict]:
    a = ShotAssembler("t1")
    out = []
    for e in events:
        out += a.feed(e)
    return out + a.flush()


def break_shot() -> list[Event]:
    """A break heard by the strike sensor, its last ball down at 5.8 s into HL (a head
    pocket: on a 9 ft table its read comes about 2.9 s later)."""
    return [
        ev(1000, "strike", amp=2000),
        ev(1350, "rail", rail="F", amp=3000),
        ev(2500, "rail", rail="H", amp=900),
        ev(4700, "rail", rail="RH", amp=400),
        ev(5800, "drop", pocket="HL", dur=40_000),
    ]


def test_a_read_in_the_return_does_not_make_the_next_strike_a_click():
    """The corpus case: the break's last ball read at 8.6 s, the next stroke's strike at
    9.8 s (4 s after the last ball on the table, 1.2 s after the read). Two shots: the read
    stays in the break's (its drop is there), the strike opens the next."""
    nxt = [ev(9800, "strike", amp=1500), ev(10300, "rail", rail="LF", amp=700)]
    one, two = shots_of([*break_shot(), read(8600), *nxt])
    assert one["end"] == 8600 * MS and one["clicks"] == 0
    assert [(p["pocket"], p["ball"]) for p in one["pocketed"]] == [("HL", 4)]
    assert two["start"] == 9800 * MS and two["strike"] is not None
    assert [r["rail"] for r in two["rails"]] == ["LF"]


def test_a_cue_ball_in_the_return_does_not_hide_a_missed_strike():
    """The next stroke's strike missed: its first rails come 3.7 s after the last ball on
    the table but 0.8 s after the cue ball reached the detector. The silence is the
    table's: a new shot, and its warning says how long the table was quiet."""
    first = [
        ev(1000, "strike", amp=900),
        ev(1400, "rail", rail="F", amp=800),
        ev(2500, "drop", pocket="HR", dur=40_000),
    ]
    nxt = [ev(6200, "rail", rail="H", amp=1500), ev(6600, "rail", rail="LF", amp=600)]
    one, two = shots_of([*first, ev(5400, "cue"), *nxt])
    assert one["end"] == 5400 * MS and [p["ball"] for p in one["pocketed"]] == [0]
    assert two["start"] == 6200 * MS and two["rest_before"] == 3700 * MS
    assert any(
        w.startswith("strike: a new stroke seen at a rail after 3.7 s") for w in two["warnings"]
    )


def test_a_click_soon_after_the_last_ball_on_the_table_is_still_a_click():
    """A read does not shorten the table's silence either: a strike 1 s after a rail hit
    (and after a read) is a ball-on-ball click of the same shot."""
    events = [*break_shot(), read(6000), ev(6800, "strike", amp=300)]
    (shot,) = shots_of(events)
    assert shot["clicks"] == 1


TABLE = {"s": "strike", "r": "rail", "d": "drop"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            # table silences around the strike gap (2.5 s) and the stroke silence (3.5 s)
            st.one_of(st.integers(0, 4900), st.sampled_from([600, 2600, 3600, 4000, 4900])),
            st.sampled_from("srd"),
            st.integers(0, 100),
        ),
        min_size=1,
        max_size=20,
    )
)
@example([(0, "s", 0), (4000, "s", 90)])  # the corpus's case: a read just before the strike
def test_reads_in_the_return_never_move_a_table_event_to_another_shot(steps):
    """Any stream of strikes, rails and drops less than `quiet_ms` apart, with colour reads
    added anywhere between its events: every strike, rail and drop lands in the same shot
    as without the reads (the reads only keep a shot open, and here none outlasts it)."""
    table, reads, t = [], [], 0  # t in µs
    for dt_ms, k, frac in steps:
        dt = dt_ms * MS
        if table and dt >= 2:
            reads.append(Event(t=t + 1 + (dt - 2) * frac // 100, node="n", boot=1, seq=0,
                               kind="ball", ball=4, conf=95))  # fmt: skip
        t += dt
        extra = {"rail": "H", "amp": 500} if k == "r" else {}
        if k == "d":
            extra = {"pocket": "FL", "dur": 40_000}
        table.append(Event(t=t, node="n", boot=1, seq=0, kind=TABLE[k], **extra))
    merged = sorted([*table, *reads], key=lambda e: e.t)  # a read strictly between two

    def facts(shots):
        return [
            (
                s["start"],
                s["strike"],
                s["clicks"],
                [r["t"] for r in s["rails"]],
                [p["t"] for p in s["pocketed"]],
            )
            for s in shots
        ]

    assert facts(shots_of(merged)) == facts(shots_of(table))
