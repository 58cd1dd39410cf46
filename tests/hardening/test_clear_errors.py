"""Issue 13, item 12: one clear line instead of a traceback, with a non-zero exit status
where the command failed: `railbird referee` on a line that is not UTF-8 (and the lines
around it still answered), `/static/x%00` on the web server, a journal that is empty,
not SQLite, another SQLite database or damaged (`railbird run` and `railbird replay`; an
empty journal is not silently started afresh), `railbird assemble` on a missing file."""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from railbird.config import from_dict
from railbird.daemon.journal import Journal
from railbird.daemon.worker import Daemon
from railbird.outputs.web.server import WebOutput

MATCH = b'{"type":"match","game":"10-ball","players":["Ann","Bob"],"race_to":5}\n'
LAG = b'{"type":"lag","winner":"Ann","breaker":"Bob"}\n'

CONFIG = """
venue = "club"
[broker]
port = 1
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["t1-node"]
"""


def railbird(*args, stdin=b"", env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "railbird", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=None if env is None else {**os.environ, **env},
    )


def one_line(stderr: bytes, start: str) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), text
    return lines[0]


@pytest.mark.parametrize("encoding", ["utf-8", None], ids=["strict-utf8-locale", "default"])
def test_referee_answers_a_line_that_is_not_utf8_and_the_lines_around_it(encoding):
    env = {"PYTHONIOENCODING": encoding} if encoding else None
    undo = b'{"type":"undo"}\n'
    r = railbird("referee", stdin=MATCH + LAG + b'\xff{"type":"undo"}\n' + undo, env=env)
    assert r.returncode == 0 and not r.stderr, r.stderr.decode()
    out = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert len(out) == 4, out
    assert out[0]["awaiting"] == "lag" and out[1]["breaker"] == "Bob"
    assert out[2] == {"error": "not UTF-8: byte 0xff at 0"}
    assert out[3]["awaiting"] == "lag"  # the undo after it was applied


def test_static_path_with_a_nul_is_not_found(tmp_path):
    table = {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 2, "nodes": ["n1"]}
    cfg = from_dict({"venue": "club", "tables": {"t1": table}})
    web = WebOutput(host="127.0.0.1", port=0)
    d = Daemon(cfg, outputs=[web], journal_path=str(tmp_path / "j.sqlite"), connect=False)
    web.referee, web.health = d.referee_input, d.health
    d.start()
    try:
        host, port = web.url.split("//")[1].split(":")
        for path, status in (("/static/x%00", 404), ("/static/style.css", 200)):
            c = http.client.HTTPConnection(host, int(port), timeout=5)
            c.request("GET", path)
            resp = c.getresponse()
            resp.read()
            c.close()
            assert resp.status == status, path
    finally:
        d.stop()


def damaged_journal(path) -> None:
    """A real journal with pages in its middle overwritten."""
    j = Journal(path)
    for i in range(2000):
        j.add_input("mqtt", i, "railbird/v1/club/t1/node/t1-node/events", b"x" * 100, "club", "t1")
    j.commit()
    j.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    j.close()
    with open(path, "r+b") as f:
        f.seek(4096 * 3)
        f.write(b"\x5a" * 4096 * 8)


def other_database(path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE recipes (name TEXT)")
    db.commit()
    db.close()


JOURNALS = {
    "empty": (lambda p: p.write_bytes(b""), "the file is empty"),
    "not-sqlite": (lambda p: p.write_bytes(b"hello, not a database\n" * 100), "not a journal"),
    "other-database": (other_database, "not a railbird journal"),
    "damaged": (damaged_journal, "malformed"),
}


@pytest.mark.parametrize("kind", list(JOURNALS))
def test_run_and_replay_refuse_a_bad_journal_in_one_line(tmp_path, kind):
    make, why = JOURNALS[kind]
    journal = tmp_path / "journal.sqlite"
    make(journal)
    before = journal.read_bytes()
    conf = tmp_path / "railbird.toml"
    conf.write_text(CONFIG)
    r = railbird("run", "--config", str(conf), "--journal", str(journal), "--seconds", "1")
    assert r.returncode == 2
    assert why in one_line(r.stderr, "railbird run: journal ")
    assert journal.read_bytes() == before  # not started afresh, not touched
    r = railbird("replay", str(journal))
    assert r.returncode == 2
    assert why in one_line(r.stderr, "railbird replay: journal ")


def test_assemble_on_a_missing_file(tmp_path):
    r = railbird("assemble", str(tmp_path / "nope.jsonl"))
    assert r.returncode == 2
    assert "No such file" in one_line(r.stderr, "railbird assemble: ")
