"""A colour-station read is stamped when the ball reaches the station (the gate closes) and
sent when it has rolled past (the gate opens): a slow ball's read leaves the node up to
147 ms after its time (44 mm at the simulator's slowest 300 mm/s, rbnode.hw.simcolour),
and any pass up to 400 ms (rbnode.colour.MAX_PASS_US), then the 20 ms batch linger and the
network. The host's time alone releases a node's events past its watermark a floor after
their time (docs/shots.md "Release"): 150 ms, sized for a drop (its beam clears 30-50 ms
after its time), would release a later rail hit past the read the node said it owed, and
the read came late: its ball presumed. A table whose config says it has a colour station
gets a floor that covers a pass (XWINDOW_COLOUR_FLOOR_US).

Found by tests/host/test_colour_live.py: 3 of 71 live runs with a 100 ms window lost the
scratch's cue-ball read, shown as `late`. In-process, no broker, no wall-clock time."""

from railbird.config import from_dict
from railbird.core.pipeline import XWINDOW_COLOUR_FLOOR_US, XWINDOW_FLOOR_US, Pipeline
from railbird.core.records import EventRecord, LateRecord

from . import scripts as S
from .test_node_wm import OFF, batch, synced


def pipeline(sensors):
    tables = {S.TABLE: {"nodes": [S.NODE], "sensors": list(sensors)}}
    p = Pipeline(from_dict({"venue": S.VENUE, "tables": tables, "shots": {"quiet_ms": 2000}}))
    synced(p)
    return p


def play_on(p):
    """A drop, then a rail hit 10 ms after the ball reached the station at 2000 ms (its
    batch's wm: the read of 2000 ms is still owed), then a tick 175 ms after the hit."""
    rail, drop, rail2 = S.number(
        [
            S.ev(1000, "rail", rail="F", amp=900),
            S.ev(1300, "drop", pocket="SL"),
            S.ev(2010, "rail", rail="H", amp=700),
        ]
    )
    p.on_message(*batch([rail], wm=1_020_000), OFF + 1_030_000)
    p.on_message(*batch([drop], wm=1_340_000), OFF + 1_350_000)
    p.on_message(*batch([rail2], wm=2_000_000), OFF + 2_040_000)
    return [r.event.kind for r in p.tick(OFF + 2_185_000) if isinstance(r, EventRecord)]


def the_read_arrives(p):
    # the gate opened at 2147 ms, the batch lingered 20 ms, the network took 23 ms
    read = dict(S.ev(2000, "ball"), ball=13, conf=90, seq=3)
    return p.on_message(*batch([read], wm=2_167_000), OFF + 2_190_000)[2]


def test_a_slow_balls_read_is_not_late_when_the_table_plays_on():
    p = pipeline(["colour"])
    assert play_on(p) == []  # the rail hit waits for the read its node said it owed
    records = the_read_arrives(p)
    assert not [r for r in records if isinstance(r, LateRecord)]
    assert [r.event.kind for r in records if isinstance(r, EventRecord)] == ["ball", "rail"]


def test_the_table_still_moves_on_by_time_when_the_read_never_comes():
    p = pipeline(["colour"])
    play_on(p)
    # a station that never sends the read (unplugged mid-pass): time releases the hit at
    # the colour floor after the node's watermark, not never
    after = OFF + 2_000_000 + XWINDOW_COLOUR_FLOOR_US + 11_000
    assert [r.event.kind for r in p.tick(after) if isinstance(r, EventRecord)] == ["rail"]


def test_a_table_without_a_station_keeps_the_drop_floor():
    assert XWINDOW_FLOOR_US < 175_000 < XWINDOW_COLOUR_FLOOR_US
    p = pipeline([])
    assert play_on(p) == ["rail"]  # released by time at 150 ms: no pass to wait for
