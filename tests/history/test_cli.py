"""`railbird history`: the matches and pocket counts of a journal printed and exported (CSV,
JSON, a table) for a period, a table or a player, per business day, hour or pocket, exactly
as computed by hand; its errors are one line and exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.history.conftest import TZ

MATCH_CSV = (
    "venue,table,game,goal,player_a,player_b,start,end,result,winner,score_a,score_b,racks,"
    "innings,high_run_a,high_run_b,fouls_a,fouls_b,balls_a,balls_b\n"
    "club,t1,10-ball,2,Ann,Bob,2026-11-27T20:00:00+01:00,2026-11-27T20:06:00+01:00,won,Bob,"
    "1,2,3,6,1,1,0,1,2,2\n"
)


def history(journal, *args, code=0) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "history", "--journal", str(journal), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, TZ=TZ),
        timeout=60,
    )
    assert r.returncode == code, r.stderr
    return r.stdout if code == 0 else r.stderr


def test_matches_as_csv(journal):
    assert history(journal, "--format", "csv") == MATCH_CSV


def test_matches_as_json_and_as_a_table(journal):
    doc = json.loads(history(journal, "--format", "json"))
    assert doc["matches"] == [
        {
            "venue": "club",
            "table": "t1",
            "game": "10-ball",
            "goal": 2,
            "players": ["Ann", "Bob"],
            "start": "2026-11-27T20:00:00+01:00",
            "end": "2026-11-27T20:06:00+01:00",
            "result": "won",
            "winner": "Bob",
            "racks": 3,
            "innings": 6,
            "scores": {"Ann": 1, "Bob": 2},
            "high_runs": {"Ann": 1, "Bob": 1},
            "fouls": {"Ann": 0, "Bob": 1},
            "balls": {"Ann": 2, "Bob": 2},
            "cue": {"Ann": 0, "Bob": 1},
        }
    ]
    assert (doc["from"], doc["to"], doc["day_start_hour"]) == (None, None, 6)
    lines = history(journal).splitlines()
    assert lines[0].split() == ["start", "table", "game", "players", "result", "score",
                                "racks", "innings", "high", "runs", "fouls", "balls"]  # fmt: skip
    assert lines[1].split() == ["2026-11-27", "20:00", "t1", "10-ball", "Ann", "v", "Bob",
                                "won", "(Bob)", "1-2", "3", "6", "1-1", "0-1", "2-2"]  # fmt: skip


def test_pocket_counts_per_day_hour_and_pocket(journal):
    head = "table,{},HL,HR,SL,SR,FL,FR,cue,total\n"
    assert (
        history(journal, "--counts", "day", "--format", "csv")
        == (
            head.format("day") + "t1,2026-11-27,1,1,1,0,1,1,1,5\n"
            "t2,2026-11-27,2,0,0,1,0,0,0,3\n"  # 01:15 is still the night of the 27th
            "t2,2026-11-28,0,0,0,0,1,1,0,2\n"
        )
    )
    assert history(journal, "--counts", "hour", "--format", "csv") == (
        head.format("hour") + "t1,20,1,1,1,0,1,1,1,5\n"
        "t2,01,0,0,0,1,0,0,0,1\n"
        "t2,07,0,0,0,0,1,1,0,2\n"
        "t2,23,2,0,0,0,0,0,0,2\n"
    )
    assert history(journal, "--counts", "pocket", "--format", "csv") == (
        "table,HL,HR,SL,SR,FL,FR,cue,total\nt1,1,1,1,0,1,1,1,5\nt2,2,0,0,1,1,1,0,5\n"
    )
    doc = json.loads(history(journal, "--counts", "day", "--table", "t2", "--format", "json"))
    assert doc["counts"] == "day" and doc["table"] == "t2"
    assert doc["rows"] == [
        {"table": "t2", "day": "2026-11-27", "total": 3, "cue": 0,
         "pockets": {"HL": 2, "HR": 0, "SL": 0, "SR": 1, "FL": 0, "FR": 0}},
        {"table": "t2", "day": "2026-11-28", "total": 2, "cue": 0,
         "pockets": {"HL": 0, "HR": 0, "SL": 0, "SR": 0, "FL": 1, "FR": 1}},
    ]  # fmt: skip


def test_a_period_a_table_and_a_player(journal):
    day28 = ["--from", "2026-11-28", "--to", "2026-11-28"]
    assert history(journal, *day28, "--format", "csv") == MATCH_CSV.splitlines(True)[0]
    assert history(journal, *day28, "--counts", "day", "--format", "csv").splitlines()[1:] == [
        "t2,2026-11-28,0,0,0,0,1,1,0,2"
    ]
    day27 = ["--from", "2026-11-27", "--to", "2026-11-27"]
    assert history(journal, *day27, "--format", "csv") == MATCH_CSV
    assert history(journal, "--table", "t2", "--format", "csv") == MATCH_CSV.splitlines(True)[0]
    assert history(journal, "--player", "Ann", "--format", "csv") == MATCH_CSV
    assert history(journal, "--player", "Cy") == "no matches\n"
    # the balls that dropped while Ann was at the table: FR on her break, her 10 in HL
    assert history(journal, "--player", "Ann", "--counts", "pocket", "--format", "csv") == (
        "table,HL,HR,SL,SR,FL,FR,cue,total\nt1,1,0,0,0,0,1,0,2\n"
    )


def test_the_day_starts_at_the_configured_hour(journal, tmp_path):
    conf = tmp_path / "host.toml"
    conf.write_text(
        f'venue = "club"\njournal = "{journal}"\n[tables.t1]\nnodes = ["t1-node"]\n'
        "[outputs]\nday_start_hour = 0\n"
    )
    out = history(journal, "--config", str(conf), "--counts", "day", "--format", "csv")
    assert out.splitlines()[2:] == [
        "t2,2026-11-27,2,0,0,0,0,0,0,2",  # midnight ends the day now
        "t2,2026-11-28,0,0,0,1,1,1,0,3",
    ]
    # without --config: the config the daemon journalled
    from railbird.daemon.journal import Journal

    j = Journal(journal)
    j.db.execute(
        "INSERT OR REPLACE INTO meta VALUES ('config', ?)",
        (json.dumps({"venue": "club", "outputs": {"day_start_hour": 0}}),),
    )
    j.close()
    assert history(journal, "--counts", "day", "--format", "csv") == out


def test_export_to_a_file(journal, tmp_path):
    out = tmp_path / "night.csv"
    assert history(journal, "--format", "csv", "--output", str(out)) == ""
    assert out.read_bytes() == MATCH_CSV.encode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "27.11.2026"], "--from '27.11.2026': not a date (YYYY-MM-DD)"),
        (["--from", "2026-11-28", "--to", "2026-11-27"], "--to 2026-11-27 is before --from"),
    ],
)
def test_bad_periods_are_refused(journal, args, message):
    err = history(journal, *args, code=2)
    assert err.startswith("railbird history: ") and message in err and err.count("\n") == 1


def test_a_missing_journal_is_refused(tmp_path):
    err = history(tmp_path / "nope.sqlite", code=2)
    assert "no such journal file" in err
    assert not (tmp_path / "nope.sqlite").exists()
