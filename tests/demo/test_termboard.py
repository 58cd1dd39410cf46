"""The live terminal scoreboard: rendering and following a journal."""

from __future__ import annotations

from railbird.core.records import Origin, ShotRecord, StateRecord
from railbird.daemon.journal import Journal
from railbird.rules import Referee, to_fen
from railbird.termboard import ANSI_RE, JournalFeed, TermBoard


def _ten():
    ref = Referee({"type": "match", "game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3})
    ref.feed({"type": "lag", "winner": "Ann"})
    ref.feed({"type": "shot", "pocketed": [{"ball": 1, "pocket": "FR"}], "object_balls_to_rail": 5})
    ref.feed({"type": "call", "ball": 2, "pocket": "HL"})
    ref.feed({"type": "shot", "pocketed": [{"ball": 0, "pocket": "SR"}]})
    return ref


def _straight():
    ref = Referee({"type": "match", "game": "14.1", "players": ["Cy", "Di"], "target": 50})
    ref.feed({"type": "lag", "winner": "Cy"})
    ref.feed({"type": "call", "ball": 3, "pocket": "FL"})
    ref.feed({"type": "shot", "pocketed": [{"ball": 3, "pocket": "FL"}]})
    return ref


SHOT = {
    "table": "t1",
    "n": 2,
    "start": 1_000_000,
    "end": 2_500_000,
    "pocketed": [{"ball": 0, "pocket": "SR", "t": 2_000_000, "source": "inferred"}],
    "rails": [{"rail": "H", "t": 1_100_000, "amp": 900}],
    "distinct_rails": 1,
    "object_balls_to_rail": 1,
    "warnings": [],
}


def test_render_both_games():
    b = TermBoard({"t1": "10-ball", "t2": "14.1"})
    ten, st = _ten(), _straight()
    b.on_state("t1", ten.state_json(), to_fen(ten.state), ten.announcements)
    b.on_shot("t1", SHOT)
    b.on_state("t2", st.state_json(), to_fen(st.state), st.announcements)
    text = b.render(100, color=False)
    assert "t1 · 10-ball · race to 3" in text
    assert "t2 · 14.1 continuous · to 50" in text
    assert "▶ Bob" in text  # ball in hand after Ann's scratch
    assert "ball in hand: anywhere" in text
    assert "shot 2: cue→SR" in text
    assert "Foul" in text
    assert "run 1 high 1" in text  # 14.1 run
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= 100  # two panels side by side fit 100 columns
    colored = b.render(100, color=True)
    assert ANSI_RE.sub("", colored) == text
    assert b.frame(100).startswith("\x1b[H\x1b[2J")
    narrow = b.render(60, color=False)  # one panel per row
    assert narrow.index("t2 ·") > narrow.index("t1 ·") + 300


def test_render_html_is_escaped_and_colored():
    b = TermBoard({"t1": "10-ball"})
    ten = _ten()
    b.on_state(
        "t1", ten.state_json(), to_fen(ten.state), [{"text": "<b>x</b> Foul", "rule": "6.1"}]
    )
    page = b.render_html()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<span style" in page
    assert "\x1b" not in page


def test_waiting_panel():
    text = TermBoard({"t9": "14.1"}).render(100, color=False)
    assert "waiting for the first state" in text


def test_journal_feed_follows_in_order(tmp_path):
    path = tmp_path / "j.sqlite"
    j = Journal(path)
    ten = _ten()
    iid = j.add_input("mqtt", 1, "railbird/v1/club/t1/node/n/events", b"{}", "club", "t1", "ok")
    j.add_records(
        iid,
        [
            ShotRecord(venue="club", table="t1", shot=SHOT),
            StateRecord(
                venue="club",
                table="t1",
                game="10-ball",
                state=ten.state_json(),
                fen=to_fen(ten.state),
                announcements=ten.announcements,
                cause="shot",
                source=Origin.SENSED,
            ),
        ],
    )
    iid = j.add_input("mqtt", 2, "x", b"{}", "other", "t1", "ok")
    j.add_records(
        iid,
        [
            StateRecord(
                venue="other",
                table="t1",
                game="10-ball",
                state=ten.state_json(),
                fen="x",
                announcements=[],
                cause="shot",
                source=Origin.SENSED,
            )
        ],
    )
    j.commit()
    seen = []
    f = JournalFeed(path, venue="club")
    n = f.poll(
        lambda t, s, fen, a: seen.append(("state", t)), lambda t, s: seen.append(("shot", t))
    )
    assert n == 2
    assert seen == [("shot", "t1"), ("state", "t1")]
    assert f.poll(lambda *a: seen.append(a), lambda *a: seen.append(a)) == 0
    f.close()
    j.close()
    assert JournalFeed(tmp_path / "missing.sqlite").poll(print, print) == 0
