"""Export and import (docs/events.md, "Export and import"): players and results out as JSON
and CSV, the CSV safe for spreadsheets (the history's one neutraliser), written whole or not
at all; players in with every row checked, each bad row reported, and nothing imported when
one is bad; an export imported again changes nothing. Property test: any registry's players
go out as CSV or JSON and come back into an empty journal as the same players."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from railbird.cli import main
from railbird.daemon.journal import Journal
from railbird.history import export
from railbird.registry import exchange, ratings
from railbird.registry.players import PlayerRegistry
from tests.fuzz.budget import examples
from tests.history.nights import Night, at, tenball_race


@pytest.fixture
def club(tmp_path):
    """A journal with Ann v Bob twice (Bob wins 2-1) and three registered players, one of
    them named like a formula."""
    path = tmp_path / "journal.sqlite"
    night = Night(path, live=True)
    tenball_race(night, "t1", at("2026-11-27 20:00"))
    tenball_race(night, "t1", at("2026-11-27 21:00"))
    reg = PlayerRegistry(night.journal.db)
    reg.add("Ann", nickname="Annie", rating=480, external=[("fargo", "111"), ("league", "A-7")])
    reg.add("Bob", external=[("fargo", "222")])
    reg.add('=HYPERLINK("http://x")', nickname="+1", rating=300)
    ratings.refresh(night.journal.db)
    night.close()
    return path


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_players_csv_is_safe_for_spreadsheets_and_carries_ratings_and_ids(club, capsys, tmp_path):
    out = tmp_path / "players.csv"
    code, _, err = _run(capsys, "export", "players", "--journal", str(club), "-o", str(out))
    assert code == 0 and "3 players written" in err
    assert (os.stat(out).st_mode & 0o777) == 0o600  # it names people
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert list(rows[0]) == [*exchange.PLAYER_COLUMNS, "id.fargo", "id.league"]
    by = {r["name"]: r for r in rows}
    assert by['\'=HYPERLINK("http://x")']["nickname"] == "'+1"  # the one neutraliser
    ann = by["Ann"]
    assert (ann["starter"], ann["id.fargo"], ann["id.league"], ann["established"]) == (
        "480", "111", "A-7", "no")  # fmt: skip
    assert float(ann["rating"]) < 480 and ann["racks"] == "6"


def test_results_go_out_with_both_players_external_ids(club, capsys):
    code, text, _ = _run(capsys, "export", "results", "--format", "json", "--journal", str(club))
    assert code == 0
    doc = json.loads(text)
    assert doc["format"] == exchange.FORMAT
    r = doc["results"]
    assert [(x["player_a"], x["player_b"], x["racks_a"], x["racks_b"]) for x in r] == [
        ("Ann", "Bob", 1, 2), ("Ann", "Bob", 1, 2)]  # fmt: skip
    assert r[0]["external_a"] == {"fargo": "111", "league": "A-7"}
    assert r[0]["external_b"] == {"fargo": "222"}
    assert r[0]["table"] == "t1" and r[0]["game"] == "10-ball"
    code, text, _ = _run(capsys, "export", "results", "--journal", str(club))
    head = next(csv.reader(io.StringIO(text)))
    assert head[-3:] == ["a.id.league", "b.id.fargo", "b.id.league"]


def test_an_export_imported_again_changes_nothing(club, capsys, tmp_path):
    for fmt in ("csv", "json"):
        f = tmp_path / f"players.{fmt}"
        assert _run(capsys, "export", "players", "--format", fmt, "--journal", str(club),
                    "-o", str(f))[0] == 0  # fmt: skip
        code, out, _ = _run(capsys, "import", "players", str(f), "--journal", str(club))
        assert code == 0 and "0 added, 0 updated, 3 unchanged" in out, out


def test_a_bad_row_is_reported_and_nothing_is_imported(club, capsys, tmp_path):
    f = tmp_path / "league.csv"
    f.write_text(
        "name,nickname,starter,id.fargo\n"
        "Cy,,510,333\n"  # good
        "Dee\x1b[31m,,,\n"  # row 2: a control character
        "Eve,,12345,\n"  # row 3: out of range
        "Flo,,,222\n"  # row 4: Bob's fargo id: the row is Bob, renamed? no: Bob gets nothing
        "Gus,,lots,\n"  # row 5: not a number
        "Ann,Nan,,\n"  # good: Ann's nickname
    )
    code, out, err = _run(capsys, "import", "players", str(f), "--journal", str(club))
    assert code == 2
    lines = err.splitlines()
    assert any(x.startswith(f"{f}: row 2: ") and "control characters" in x for x in lines), err
    assert any(x.startswith(f"{f}: row 3: ") and "0 to 9999" in x for x in lines), err
    assert any(x.startswith(f"{f}: row 5: ") and "'lots'" in x for x in lines), err
    assert "\x1b" not in err  # the bad name is written as an escape
    assert "3 bad row(s) of 6: nothing imported" in err
    j = Journal(club)
    names = [p.name for p in PlayerRegistry(j.db).listed()]
    ann = PlayerRegistry(j.db).named("Ann")[0]
    j.close()
    assert "Cy" not in names and ann.nickname == "Annie"  # nothing, not the good rows either
    # fixed, it goes in whole; a row with Bob's fargo id is Bob (the id says who)
    f.write_text("name,nickname,starter,id.fargo\nCy,,510,333\nRobert,Bobby,,222\nAnn,Nan,,\n")
    code, out, err = _run(capsys, "import", "players", str(f), "--journal", str(club), "--check")
    assert code == 0 and "checked, nothing written: 1 added, 2 updated" in out
    code, out, err = _run(capsys, "import", "players", str(f), "--journal", str(club))
    assert code == 0 and "1 added, 2 updated, 0 unchanged" in out
    j = Journal(club)
    reg = PlayerRegistry(j.db)
    assert reg.named("Cy")[0].rating == 510 and reg.named("Bob")[0].nickname == "Bobby"
    assert reg.named("Ann")[0].nickname == "Nan"
    j.close()


def test_files_that_are_no_players_file_are_refused(club, capsys, tmp_path):
    for name, text, why in (
        ("a.json", "[1, 2]", "not a players file of format 1"),
        ("b.json", "{nope", "not JSON"),
        ("c.json", '{"format": 2, "players": []}', "format 1"),
        ("d.csv", "who,what\nx,y\n", "a `name` column"),
    ):
        f = tmp_path / name
        f.write_text(text)
        code, _, err = _run(capsys, "import", "players", str(f), "--journal", str(club))
        assert code == 2 and why in err, (name, err)
    f = tmp_path / "e.json"
    f.write_text('{"format": 1, "players": [7, {"name": "Hal", "external": ["x"]}]}')
    code, _, err = _run(capsys, "import", "players", str(f), "--journal", str(club))
    assert code == 2 and "row 1: a player is a JSON object" in err
    assert "row 2: external ids are an object" in err
    assert _run(capsys, "import", "players", str(tmp_path / "none.csv"), "--journal",
                str(club))[0] == 2  # fmt: skip


NAMES = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Co", "Cn")), min_size=1,
    max_size=20,
).filter(lambda s: s.strip())  # fmt: skip


@settings(
    max_examples=examples("competition.exchange.roundtrip", 15),
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much],
)
@given(
    people=st.lists(
        st.tuples(
            NAMES,
            st.none() | NAMES,
            st.none() | st.integers(0, 9999),
            st.none() | st.from_regex(r"[=+\-@]?[0-9A-Za-z=+-]{1,8}", fullmatch=True),
        ),
        max_size=6,
    ),
    fmt=st.sampled_from(["csv", "json"]),
)
def test_players_go_out_and_come_back_the_same(people, fmt):
    """Names and ids beginning like formulas included: the CSV's apostrophe comes off.
    (The registry's tables in a database of their own: a journal's migrations per example
    would be most of the test's time.)"""
    src = sqlite3.connect(":memory:", isolation_level=None)
    reg = PlayerRegistry(src)
    for i, (name, nick, rating, fargo) in enumerate(people):
        try:
            reg.add(name, nick, rating, [("fargo", f"{fargo}{i}")] if fargo else [])
        except Exception:  # noqa: BLE001 - a name the rules refuse, or one taken
            continue
    want = sorted((p.name, p.nickname, p.rating, p.external) for p in reg.listed())
    text = exchange.render("players", exchange.players(src), fmt)
    src.close()
    dst = sqlite3.connect(":memory:", isolation_level=None)
    res = exchange.import_players(dst, exchange.read_players(text, fmt))
    assert not res.errors, res.errors
    got = sorted((p.name, p.nickname, p.rating, p.external) for p in PlayerRegistry(dst).listed())
    dst.close()
    assert got == want
    assert export.csv_value(export.csv_cell("=1")) == "=1"
