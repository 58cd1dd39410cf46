"""Tournaments out and in (docs/events.md, "Export and import"): an event played partly at
the venue goes out as JSON and into another journal as the same event (its matches, its
standings, what the desk holds), its players found or added in that registry; a second
import changes nothing, a different event of the same id is refused; the CSV is one row
per match, safe for spreadsheets, and refused as an import with the reason; a damaged
file is refused with the reason and nothing of it is imported."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest

from railbird.cli import main
from railbird.competition import jsonform
from railbird.daemon.journal import Journal
from railbird.events import exchange
from railbird.events.desk import EventDesk
from railbird.events.store import EventStore
from railbird.registry.players import PlayerRegistry

FORMULA = '=HYPERLINK("http://x")'
FORM = {"name": "Thursday", "format": "double_elimination", "game": "9-ball", "goal": 2,
        "players": ["Ann", "Bob", "Cy", FORMULA], "seeding": "seeded"}  # fmt: skip


def _journal(path) -> str:
    Journal(path).close()  # a real journal file, as the host makes it
    return str(path)


def _desk(path, tables=("t1", "t2")) -> EventDesk:
    return EventDesk(path, "club", lambda: list(tables))


def _play(desk: EventDesk, table: str, winner: int, loser_racks: int = 0) -> None:
    """The called match at `table` started and won there, as the table's states say."""
    a, b = desk.call_for(table)["players"]
    desk.on_state("club", table, {"players": [a, b], "scores": {a: 0, b: 0},
                                  "match_winner": None})  # fmt: skip
    sc = {(a, b)[winner]: 2, (a, b)[1 - winner]: loser_racks}
    desk.on_state("club", table, {"players": [a, b], "scores": sc, "match_winner": (a, b)[winner]})


@pytest.fixture
def played(tmp_path) -> str:
    """An event half played: a match won 2-1, a no-show, a match called and begun at t1,
    the automatic calling off."""
    path = _journal(tmp_path / "a.sqlite")
    desk = _desk(path)
    desk.create_event(FORM)
    _play(desk, "t1", 1, loser_racks=1)
    desk.set_auto(False)
    desk.forfeit(desk.call_for("t2")["match"], 0)
    nxt = desk.public()["up_next"][0]["match"]
    desk.assign(nxt, "t1")
    a, b = desk.call_for("t1")["players"]
    desk.on_state("club", "t1", {"players": [a, b], "scores": {a: 0, b: 0}, "match_winner": None})
    assert desk.call_for("t1")["began"]
    desk.close_db()
    return path


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _by_name(view: dict) -> tuple[list, list]:
    """An event's matches and standings with players by name (ids differ between journals)."""
    matches = [
        (m["id"], m["state"], m["table"], m["winner"], m["score"],
         [s["name"] for s in m["seats"]])
        for m in view["matches"]
    ]  # fmt: skip
    standings = [(s["name"], s["place"], s["won"], s["lost"], s["for"]) for s in view["standings"]]
    return matches, standings


def test_an_event_goes_out_as_json_and_into_another_journal_as_the_same_event(
    played, tmp_path, capsys
):
    out = tmp_path / "events.json"
    code, _, err = _run(capsys, "export", "tournaments", "--format", "json", "--journal", played,
                        "-o", str(out))  # fmt: skip
    assert code == 0 and "1 tournaments written" in err
    doc = json.loads(out.read_text())
    (ev,) = doc["tournaments"]
    assert (ev["id"], ev["venue"], ev["name"], ev["closed"], ev["auto"]) == (
        1, "club", "Thursday", False, False)  # fmt: skip
    assert jsonform.load(ev["tournament"]) == _desk(played).t  # loadable, the whole event

    target = _journal(tmp_path / "b.sqlite")
    db = sqlite3.connect(target, isolation_level=None)
    reg = PlayerRegistry(db)
    reg.add("Zed")  # ids differ from the source's
    bob = reg.add("bob").id  # the same player by name (case ignored)
    db.close()
    code, text, _ = _run(capsys, "import", "tournaments", str(out), "--check", "--journal", target)
    assert code == 0 and "checked, nothing written: 1 added" in text
    empty = _desk(target)
    assert empty.t is None  # a check writes nothing
    empty.close_db()
    code, text, _ = _run(capsys, "import", "tournaments", str(out), "--journal", target)
    assert code == 0, text
    assert "1 event(s) imported: 1 added, 0 already here; 3 player(s) added" in text

    src, dst = _desk(played), _desk(target)
    assert dst.event_id == 1 and dst.began == src.began and not dst.auto and not dst.closed
    assert _by_name(jsonform.view(dst.t)) == _by_name(jsonform.view(src.t))
    assert bob in {e.player for e in dst.t.entrants}
    names = {p.name for p in PlayerRegistry(dst._db).listed()}
    assert names == {"Zed", "bob", "Ann", "Cy", FORMULA}
    # the imported event plays on at the target venue like one made there
    at_t1 = dst.call_for("t1")["match"]
    assert at_t1 == src.call_for("t1")["match"] and dst.call_for("t1")["began"]
    _play(dst, "t1", 0)
    assert dst.t.match(at_t1).result.score == (2, 0)
    src.close_db()
    dst.close_db()


def test_an_import_again_changes_nothing_and_another_event_of_that_id_is_refused(
    played, tmp_path, capsys
):
    code, text, _ = _run(capsys, "export", "tournaments", "--format", "json", "--journal", played)
    out = tmp_path / "events.json"
    out.write_text(text)
    code, text, _ = _run(capsys, "import", "tournaments", str(out), "--journal", played)
    assert code == 0 and "0 added, 1 already here; 0 player(s) added" in text
    doc = json.loads(out.read_text())
    doc["tournaments"][0]["tournament"]["spec"]["name"] = "Friday"
    out.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "import", "tournaments", str(out), "--journal", played)
    assert code == 2
    assert "event #1: event 1: this journal has another event 1 ('Thursday'" in err


def test_the_csv_is_one_row_per_match_safe_for_spreadsheets_and_not_importable(
    played, tmp_path, capsys
):
    out = tmp_path / "matches.csv"
    code, _, _ = _run(capsys, "export", "tournaments", "--journal", played, "-o", str(out))
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert list(rows[0]) == list(exchange.MATCH_COLUMNS)
    t = _desk(played).t
    assert [r["match"] for r in rows] == [m.id for m in t.matches]
    seated = [r[k] for r in rows for k in ("player_a", "player_b", "winner") if r[k]]
    assert FORMULA not in seated and "'" + FORMULA in seated  # the history's one neutraliser
    done = [r for r in rows if r["state"] == "done"]
    assert sorted((r["score_a"], r["score_b"]) for r in done) == [("", ""), ("1", "2")]
    code, _, err = _run(capsys, "import", "tournaments", str(out), "--journal", played)
    assert code == 2 and "a tournaments CSV is a report of the matches, not the event" in err


def _result_of_a_match_not_ready(ev: dict) -> None:
    ev["tournament"]["log"].append({"result": "GF1", "winner": 0, "score": [2, 0]})


def _score_outside_its_race(ev: dict) -> None:
    ev["tournament"]["log"][-2]["score"] = [5, 1]


def _closed_not_a_boolean(ev: dict) -> None:
    ev["closed"] = "yes"


def _one_player_twice(ev: dict) -> None:
    entrants = ev["tournament"]["entrants"]
    entrants[1]["name"] = entrants[0]["name"]  # both are that registered player


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_result_of_a_match_not_ready, "match GF1 cannot take a result: it is waiting"),
        (_score_outside_its_race, "is a race to 2"),
        (_closed_not_a_boolean, "closed is true or false"),
        (_one_player_twice, "a player is entered twice"),
    ],
    ids=lambda d: getattr(d, "__name__", "")[1:],
)
def test_a_damaged_file_is_refused_with_the_reason_and_nothing_is_imported(
    played, tmp_path, capsys, damage, reason
):
    code, text, _ = _run(capsys, "export", "tournaments", "--format", "json", "--journal", played)
    doc = json.loads(text)
    good = json.loads(json.dumps(doc["tournaments"][0]))
    bad = doc["tournaments"][0] | {"id": 7}
    damage(bad)
    doc["tournaments"] = [good, bad]  # the good one first: it is not imported either
    out = tmp_path / "events.json"
    out.write_text(json.dumps(doc))
    target = _journal(tmp_path / "b.sqlite")
    code, _, err = _run(capsys, "import", "tournaments", str(out), "--journal", target)
    assert code == 2 and "event #2: event 7:" in err and reason in err, err
    assert "nothing imported" in err
    db = sqlite3.connect(target)
    assert EventStore(db).venues() == []
    assert PlayerRegistry(db).listed() == []
    db.close()


def test_a_file_that_is_not_a_tournaments_file_is_refused(tmp_path, capsys):
    target = _journal(tmp_path / "b.sqlite")
    f = tmp_path / "x.json"
    for text, reason in (("{", "not JSON"), ('{"format": 2}', "format 1"),
                         ('{"format": 1}', 'no "tournaments" list')):  # fmt: skip
        f.write_text(text)
        code, _, err = _run(capsys, "import", "tournaments", str(f), "--journal", target)
        assert code == 2 and reason in err
