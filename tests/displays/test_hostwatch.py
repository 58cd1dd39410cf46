"""How a display fed over MQTT judges the host (protocol/SPEC.md `host`) and shows it: the
judgement on a clock the test turns, and the terminal board's rendering of it."""

from __future__ import annotations

from railbird.hostwatch import NEVER_HEARD_S, Liveness
from railbird.rules import Referee
from railbird.termboard import TermBoard

ONLINE = {"v": 1, "venue": "club", "state": "online", "period_s": 1, "seq": 0}


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_heartbeat_keeps_the_host_live_and_silence_makes_it_stale():
    clock = Clock()
    lv = Liveness(clock)
    lv.on_host(ONLINE)
    clock.t += 2.9  # 2 periods + 1 s is the limit
    assert lv.stale() is None
    lv.on_host(dict(ONLINE, seq=1))
    clock.t += 3.1
    assert lv.stale() == "no heartbeat from the host for 3 s"
    lv.on_host(dict(ONLINE, seq=2))  # it came back
    assert lv.stale() is None


def test_last_will_is_stale_at_once():
    clock = Clock()
    lv = Liveness(clock)
    lv.on_host(ONLINE)
    lv.on_host({"v": 1, "venue": "club", "state": "offline"})
    assert lv.stale() == "the host is offline"


def test_never_heard_and_lost_broker_are_not_live():
    clock = Clock()
    lv = Liveness(clock)
    assert lv.stale() is None  # just subscribed: the retained message is on its way
    clock.t += NEVER_HEARD_S + 0.1
    assert lv.stale() == "no word from the host"  # an old host, or none: never "online"
    lv.on_host(ONLINE)
    lv.on_connection(False)
    assert lv.stale() == "this display has lost the broker"


def test_nodes_by_table_from_status_and_birth():
    lv = Liveness(Clock())
    lv.on_node("t1", "n1", {"v": 1, "node": "n1", "boot": 3, "fw": "1.0"})  # a birth
    lv.on_node("t1", "n2", {"v": 1, "node": "n2", "boot": 1, "state": "offline"})  # a will
    assert lv.nodes() == {("t1", "n1"): True, ("t1", "n2"): False}


def _board(lv):
    ref = Referee({"type": "match", "game": "14.1", "players": ["Cy", "Di"], "target": 50})
    ref.feed({"type": "lag", "winner": "Cy"})
    for _ in range(2):  # Cy and Di foul in turn, then Cy again: Cy is on two fouls
        ref.feed({"type": "shot", "pocketed": [], "fouls": ["6.5"]})
    out = ref.feed({"type": "shot", "pocketed": [], "fouls": ["6.5"]})
    assert out["consecutive_fouls"]["Cy"] == 2, out
    board = TermBoard({"t1": "14.1", "t2": "10-ball"})
    board.on_state("t1", out, None, [])
    board.sync(lv)
    return board.render(100, color=False)


def test_terminal_board_says_stale_and_names_the_offline_node():
    clock = Clock()
    lv = Liveness(clock)
    lv.on_host(ONLINE)
    lv.on_node("t1", "n1", {"v": 1, "node": "n1", "boot": 1, "state": "offline"})
    text = _board(lv)
    assert "SCORES MAY BE STALE" not in text
    assert "SENSORS OFFLINE: n1" in text
    assert "2 fouls WARNING" in text  # 14.1: the third costs 15 points
    lv.on_host({"v": 1, "venue": "club", "state": "offline"})
    text = _board(lv)
    assert text.splitlines()[1] == "!! SCORES MAY BE STALE: the host is offline"
