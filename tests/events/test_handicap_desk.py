"""Issue 25, item 4: the desk of a handicapped event calls each match with the races the
registry's chart gives for the two players' kept ratings (docs/events.md "Handicapped
races"), against a real journal file."""

from __future__ import annotations

import sqlite3

from railbird import rules
from railbird.competition import handicap
from railbird.events.desk import EventDesk
from railbird.registry import ratings

FORM = {"name": "Handicap night", "format": "single_elimination", "game": "9-ball",
        "goal": 4, "players": ["Ann", "Bob"], "seeding": "seeded", "handicap": True}  # fmt: skip


def test_a_called_match_of_a_handicapped_event_carries_the_charts_races(tmp_path):
    path = tmp_path / "journal.sqlite"
    sqlite3.connect(path).close()
    desk = EventDesk(path, "club", lambda: ["t1"])
    try:
        desk.create_event(FORM)
        inp = desk.call_for("t1")["input"]
        assert inp["race_to"] == 4 and "races" not in inp  # no chart, no ratings yet
        db = sqlite3.connect(path, isolation_level=None)
        ratings.set_chart(db, handicap.parse("0:4-4 100:5-3"))
        ann, bob = (desk.registry.named(n)[0].id for n in ("Ann", "Bob"))
        for player, rating in ((ann, 400.0), (bob, 520.0)):  # as a ratings refresh keeps them
            db.execute("INSERT INTO ratings VALUES (?, ?, 500, 40, 20, 1)", (player, rating))
        db.close()
        c = desk.call_for("t1")
        a, b = c["players"]
        assert (a, b) == ("Ann", "Bob") and c["input"]["races"] == [3, 5]
        assert "race_to" not in c["input"]
        assert rules.new_match(c["input"]).races == (3, 5)
    finally:
        desk.close_db()
