"""The ratings the host keeps (railbird.registry.ratings) with a real daemon and journal:
issue 25's "Ratings recomputed from history equal the ratings kept as matches ended",
through wins, a concession, an undone win, a 14.1 match (not rated), an unregistered
name (not rated), a merged duplicate's name, and `railbird ratings`."""

from __future__ import annotations

import json
import time

import pytest

from railbird.cli import main
from railbird.config import from_dict
from railbird.daemon.worker import Daemon
from railbird.registry import ratings
from railbird.registry.players import PlayerRegistry

DEADLINE_S = 30.0


def _until(cond, what: str):
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"not within {DEADLINE_S} s: {what}")


def _race_to_1(d: Daemon, table: str, a: str, b: str, winner: str) -> None:
    """A race to 1 of 10-ball: the loser wins the lag and breaks dry, the winner pockets the
    called 10."""
    loser = b if winner == a else a
    for inp in (
        {"type": "match", "game": "10-ball", "players": [a, b], "race_to": 1},
        {"type": "lag", "winner": loser},
        {"type": "shot", "pocketed": []},
        {"type": "call", "ball": 10, "pocket": "FL"},
        {"type": "shot", "pocketed": [{"ball": 10, "pocket": "FL"}]},
    ):
        res = d.referee_input("club", table, inp)
        assert res["ok"], (inp, res)
    assert res["state"]["match_winner"] == winner


def _seen(d: Daemon, n: int):
    """The kept ratings once `n` matches are rated (the daemon refits when next idle)."""
    db = d.journal.db
    return _until(lambda: (k := ratings.kept(db)) and len(k.matches) == n and k, f"{n} rated")


@pytest.fixture
def daemon(tmp_path):
    cfg = from_dict({"venue": "club", "tables": {"t1": {"nodes": ["t1-node"]},
                                                 "t2": {"nodes": ["t2-node"]}}})  # fmt: skip
    d = Daemon(cfg, journal_path=str(tmp_path / "journal.sqlite"), connect=False).start()
    yield d
    d.stop()


def test_ratings_recomputed_from_history_equal_those_kept_as_matches_ended(daemon, tmp_path):
    d = daemon
    reg = PlayerRegistry(d.journal.db)
    # the registry is written by another connection, as `railbird players` does
    ids = {}
    for name, rating in (("Ann", 600), ("Bob", None), ("Cy", 450), ("Dee", None)):
        assert main(["players", "add", name, *(["--rating", str(rating)] if rating else []),
                     "--journal", str(tmp_path / "journal.sqlite")]) == 0  # fmt: skip
    ids = {p.name: p.id for p in reg.listed()}
    _race_to_1(d, "t1", "Ann", "Bob", "Ann")
    first = _seen(d, 1)
    assert first.ratings[ids["Ann"]].rating > 600 and first.ratings[ids["Bob"]].rating < 500
    assert first.ratings[ids["Cy"]].rating == 450  # no racks: the starter
    _race_to_1(d, "t2", "Cy", "Dee", "Dee")
    _race_to_1(d, "t1", "Bob", "Cy", "Bob")
    _race_to_1(d, "t2", "Dee", "Zed", "Zed")  # Zed is not registered: not rated
    kept = _seen(d, 3)
    assert ratings.compute(d.journal.db) == kept

    # an undone win: the match is in play again and no longer rated
    assert d.referee_input("club", "t1", {"type": "undo"})["ok"]
    kept = _seen(d, 2)
    assert [m.a for m in kept.matches] == [ids["Ann"], ids["Cy"]]
    # ... and conceded instead: rated again, the racks as they stand (none: not counted)
    assert d.referee_input("club", "t1", {"type": "concede", "player": "Cy"})["ok"]
    # 14.1: points, not racks
    straight = {"type": "match", "game": "14.1", "players": ["Ann", "Dee"], "target": 1}
    for inp in (straight, {"type": "lag", "winner": "Ann"}, {"type": "concede", "player": "Dee"}):
        assert d.referee_input("club", "t2", inp)["ok"], inp
    _race_to_1(d, "t1", "Annie", "Dee", "Annie")  # not registered yet: not rated
    kept = _seen(d, 2)
    assert ratings.compute(d.journal.db) == kept
    annie = PlayerRegistry(d.journal.db).add("Annie").id
    PlayerRegistry(d.journal.db).merge(ids["Ann"], annie)
    _race_to_1(d, "t2", "Bob", "Dee", "Dee")
    kept = _seen(d, 4)  # the merge counts Annie's match as Ann's, from where it was played
    assert [(m.a, m.b) for m in kept.matches][-2:] == [
        (ids["Ann"], ids["Dee"]),
        (ids["Bob"], ids["Dee"]),
    ]
    assert ratings.compute(d.journal.db) == kept  # the "Done when"
    journal = str(tmp_path / "journal.sqlite")
    assert main(["ratings", "check", "--journal", journal]) == 0
    assert main(["ratings", "recompute", "--journal", journal]) == 0
    assert ratings.kept(d.journal.db) == kept
    assert d.stats()["history_errors"] == 0


def test_a_changed_starter_is_refitted_and_check_says_so(daemon, tmp_path, capsys):
    d = daemon
    journal = str(tmp_path / "journal.sqlite")
    reg = PlayerRegistry(d.journal.db)
    ann, bob = reg.add("Ann", rating=500).id, reg.add("Bob", rating=500).id
    _race_to_1(d, "t1", "Ann", "Bob", "Ann")
    kept = _seen(d, 1)
    reg.edit(bob, rating=700)
    assert main(["ratings", "check", "--journal", journal]) == 1
    assert "differ" in capsys.readouterr().out
    assert main(["ratings", "recompute", "--journal", journal]) == 0
    now = ratings.kept(d.journal.db)
    assert now.ratings[bob].rating > kept.ratings[bob].rating
    assert now.ratings[ann].rating > kept.ratings[ann].rating  # beat a stronger player
    capsys.readouterr()
    assert main(["ratings", "list", "--format", "json", "--journal", journal]) == 0
    listed = json.loads(capsys.readouterr().out)["ratings"]
    assert [r["name"] for r in listed] == ["Bob", "Ann"]
    assert ratings.over_time(d.journal.db, ann) == [(now.matches[0].end, now.ratings[ann].rating)]


def test_the_handicap_chart_gives_two_rated_players_their_races(daemon, tmp_path, capsys):
    d = daemon
    journal = str(tmp_path / "journal.sqlite")
    reg = PlayerRegistry(d.journal.db)
    ann, bob, cy = (reg.add(n, rating=r).id for n, r in (("Ann", 620), ("Bob", 500), ("Cy", None)))
    assert main(["ratings", "recompute", "--journal", journal]) == 0
    assert main(["ratings", "race", str(ann), str(bob), "--journal", journal]) == 2
    assert "no handicap chart" in capsys.readouterr().err
    assert main(["ratings", "chart", "0:5-5 50:5-4 100:5-3", "--journal", journal]) == 0
    assert main(["ratings", "chart", "0:5-5 50:4-5", "--journal", journal]) == 2
    assert "the stronger's no shorter" in capsys.readouterr().err
    assert main(["ratings", "race", str(bob), str(ann), "--journal", journal]) == 0
    assert capsys.readouterr().out.strip() == "Bob races to 3, Ann to 5"  # a gap of 120
    assert ratings.races(d.journal.db, ann, cy) == (5, 3)  # Cy: 500, the default starter
    assert main(["ratings", "chart", "--clear", "--journal", journal]) == 0
    assert ratings.races(d.journal.db, ann, bob) is None
