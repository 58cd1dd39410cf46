"""The event service against a real journal file, fed the table states a match produces:
calls to free tables, the start and the end of a match taken from the table's state, the
event rebuilt from the journal alone, the director's refusals, the static export."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from railbird.competition.tournament import MatchState
from railbird.events.desk import EventDesk, EventError
from railbird.events.store import EventStore, StoreError

EIGHT = ["Ann", "Bob", "Cy", "Di", "Eve", "Flo", "Gus", "Hal"]
FORM = {"name": "Thursday", "format": "double_elimination", "game": "9-ball", "goal": 2,
        "players": EIGHT, "seeding": "seeded"}  # fmt: skip


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "journal.sqlite"
    sqlite3.connect(path).close()
    return path


def desk_on(journal, tables=("t1", "t2", "t3"), **kw) -> EventDesk:
    return EventDesk(journal, "club", lambda: list(tables), **kw)


def start(desk: EventDesk, table: str) -> list[str]:
    """The referee app's tap: the called match's first state at the table."""
    c = desk.call_for(table)
    a, b = c["players"]
    desk.on_state("club", table, {"players": [a, b], "scores": {a: 0, b: 0},
                                  "match_winner": None, "awaiting": "lag"})  # fmt: skip
    return [a, b]


def finish(desk, table, players, winner: int, loser_racks=0, goal=2, ended=None):
    a, b = players
    sc = {players[winner]: goal, players[1 - winner]: loser_racks}
    desk.on_state("club", table, {"players": [a, b], "scores": sc,
                                  "match_winner": players[winner], "ended": ended})  # fmt: skip


def test_matches_are_called_to_free_tables_and_results_flow_into_the_bracket(journal, tmp_path):
    desk = desk_on(journal, export_dir=tmp_path / "export")
    v = desk.create_event(FORM)
    assert sorted(v["calls"]) == ["t1", "t2", "t3"]
    assert [u["match"] for u in v["up_next"]] == ["W1-4"]  # no fourth table
    c = desk.call_for("t1")
    assert c["input"] == {"type": "match", "game": "9-ball", "players": ["Ann", "Hal"],
                          "race_to": 2, "break_order": "alternate"}  # fmt: skip
    assert not c["began"] and c["round_name"] == "Winners' round 1"
    # a state of other players at the table is not the called match
    desk.on_state("club", "t1", {"players": ["X", "Y"], "scores": {}, "match_winner": "X"})
    assert not desk.call_for("t1")["began"]
    players = start(desk, "t1")
    assert desk.call_for("t1")["began"]
    finish(desk, "t1", players, 1, loser_racks=1)
    m = desk.t.match("W1-1")
    assert m.state is MatchState.DONE and m.result.winner == 1 and m.result.score == (1, 2)
    assert desk.call_for("t1")["match"] == "W1-4"  # the next match, called to the free table
    out = json.loads((tmp_path / "export" / "event.json").read_text())
    assert next(x for x in out["matches"] if x["id"] == "W1-1")["score"] == [1, 2]
    # the whole event, then the journal alone rebuilds it
    while not desk.public()["complete"]:
        for t in ("t1", "t2", "t3"):
            if desk.call_for(t):
                finish(desk, t, start(desk, t), 0)
    again = desk_on(journal)
    assert again.t == desk.t and again.began == desk.began and again.auto
    champion = again.public()["standings"][0]
    assert champion["place"] == 1 and champion["player"] == again.public()["champion"]
    html = (tmp_path / "export" / "index.html").read_text()
    assert f'id="champion">Champion: <b>{champion["name"]}</b>' in html
    assert not list((tmp_path / "export").glob(".*.tmp"))


def test_a_finished_match_of_the_same_two_players_is_not_taken_for_the_next(journal):
    """One table: the grand final's reset is called where the grand final has just ended,
    between the same two players; the finished state there is not the reset's result."""
    desk = desk_on(journal, tables=("t1",))
    desk.create_event(dict(FORM, players=["Ann", "Bob"], goal=1))
    finish(desk, "t1", start(desk, "t1"), 0, goal=1)  # W1: Ann beats Bob
    gf = start(desk, "t1")
    assert desk.call_for("t1")["match"] == "GF1"
    finish(desk, "t1", gf, gf.index("Bob"), goal=1)  # the losers' winner takes GF1: a reset
    assert desk.call_for("t1")["match"] == "GF2"
    finish(desk, "t1", gf, gf.index("Bob"), goal=1)  # the same state again: GF1's
    assert desk.t.match("GF2").state is MatchState.IN_PLAY
    gf2 = start(desk, "t1")
    finish(desk, "t1", gf2, gf2.index("Ann"), goal=1)
    assert desk.public()["complete"] and desk.public()["champion"] is not None
    assert desk.t.match("GF2").result.winner == gf2.index("Ann")


def test_a_concession_is_a_forfeit_and_an_abandoned_match_takes_no_result(journal):
    desk = desk_on(journal, tables=("t1",))
    desk.create_event(dict(FORM, players=["Ann", "Bob", "Cy"], goal=3))
    players = start(desk, "t1")
    a, b = players
    desk.on_state("club", "t1", {"players": players, "scores": {a: 1, b: 0},
                                 "match_winner": None, "ended": "abandoned"})  # fmt: skip
    assert desk.t.match(desk.call_for("t1")["match"]).state is MatchState.IN_PLAY
    finish(desk, "t1", players, 1, loser_racks=1, goal=1, ended="conceded")  # 1-1: no race
    done = [m for m in desk.t.matches if m.state is MatchState.DONE]
    assert len(done) == 1 and done[0].result.score is None and done[0].result.winner == 1


def test_a_match_that_ended_while_the_host_was_down_is_taken_on_restart(journal):
    desk = desk_on(journal, tables=("t1",))
    desk.create_event(dict(FORM, players=["Ann", "Bob"], goal=1))
    players = start(desk, "t1")
    desk.close_db()
    again = desk_on(journal, tables=("t1",))  # the web output's restore hands over the state
    finish(again, "t1", players, 0, goal=1)
    assert again.t.match("W1-1").state is MatchState.DONE


def test_the_director_calls_by_hand_records_no_shows_and_closes(journal):
    desk = desk_on(journal, tables=("t1", "t2"))
    desk.create_event(dict(FORM, players=EIGHT[:4]))
    with pytest.raises(EventError, match="has a match called already"):
        desk.assign("W1-2", "t1")
    with pytest.raises(EventError, match="no table 't9'"):
        desk.assign("W1-2", "t9")
    desk.set_auto(False)
    finish(desk, "t1", start(desk, "t1"), 0)
    assert desk.call_for("t1") is None  # not called by itself any more
    desk.forfeit(desk.call_for("t2")["match"], 1)  # a no-show at t2
    w12 = desk.t.match("W1-2")
    assert w12.state is MatchState.DONE and w12.result.score is None
    assert desk.call_for("t2") is None
    ready = desk.public()["up_next"]
    assert [u["match"] for u in ready] == ["W2-1", "L1-1"]
    desk.assign("L1-1", "t2")
    assert desk.call_for("t2")["match"] == "L1-1"
    with pytest.raises(EventError, match="seat 0 or seat 1"):
        desk.forfeit("W2-1", 2)
    with pytest.raises(EventError, match="takes no result"):
        desk.forfeit("W1-1", 0)
    with pytest.raises(EventError, match="an event is open"):
        desk.create_event(FORM)
    desk.close()
    assert desk.call_for("t1") is None
    with pytest.raises(EventError, match="no event is open"):
        desk.assign("W2-1", "t2")
    assert desk_on(journal).closed


def test_the_form_is_checked(journal):
    desk = desk_on(journal)
    with pytest.raises(EventError, match="2 to 128"):
        desk.create_event(dict(FORM, players=["Ann"]))
    with pytest.raises(Exception, match="game must be one of"):
        desk.create_event(dict(FORM, game="snooker"))
    with pytest.raises(EventError, match="a list of names"):
        desk.create_event(dict(FORM, players="Ann, Bob"))
    assert desk.public() is None


def test_a_damaged_log_is_refused_with_the_reason(journal):
    desk = desk_on(journal)
    desk.create_event(FORM)
    desk._db.execute('INSERT INTO tournament_log VALUES (1, 99, \'{"op": "nonsense"}\', 0)')
    with pytest.raises(StoreError, match="unknown change 'nonsense'"):
        EventStore(desk._db).load(1)


def test_railbird_event_export_writes_the_export_from_the_journal(journal, tmp_path):
    desk = desk_on(journal)
    desk.create_event(FORM)
    desk.close_db()
    out = tmp_path / "published"
    cmd = [sys.executable, "-m", "railbird", "event", "export", "--out", str(out),
           "--journal", str(journal)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    data = json.loads((out / "event.json").read_text())
    assert data["name"] == "Thursday" and sorted(data["calls"]) == ["t1", "t2", "t3"]
    assert "Winners&#x27; round 1" in (out / "index.html").read_text()
    bad = subprocess.run([*cmd[:-1], str(tmp_path / "none.sqlite")], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert bad.returncode == 2 and "no such journal file" in bad.stderr
