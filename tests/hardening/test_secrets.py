"""Issue 13, item 6: the referee PIN and the other secrets are never exposed. The probe found
the display login reading every referee message (token included), the journal (mode 0644)
keeping the token in its config and in raw referee payloads, `--check-config` printing it,
and the demo's `host.toml` (0644) holding the host password and the PIN.

Required: secrets never travel where a display can read them (the broker ACL), are never
journalled (the host checks the token once and journals the sealed message,
railbird.core.refauth; the config is journalled masked) nor printed, and files holding
them, or the journal, are 0600. Replay still reaches the same results without the token.

Real parts: a private mosquitto with the project ACL, `railbird run` as a subprocess, a
referee console and a display as paho clients with their own logins."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as paho
import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import subscriber
from railbird import broker as broker_mod
from railbird.broker import PrivateBroker, confined_acl
from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import StateRecord
from railbird.daemon.journal import Journal
from railbird.daemon.offline import journal_config, replay
from rbproto import codec

# 12 digits, the longest PIN the config check accepts: no time stamp or counter of a test
# run has those 12 digits in a row by chance.
PIN = "739164285017"
WRONG = "739164285018"
HOST_PW = "host-Pw-Zebra-417"
CLIENT_ID = "railbird-host-Client-Id-Walrus-8"
SECRETS = (PIN, WRONG, HOST_PW, CLIENT_ID)

CONFIG = """
venue = "club"
stats_period_s = 0
referee_token = "{pin}"
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "{host_pw}"
client_id = "{client_id}"
[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 3
nodes = ["t1-node"]
"""


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def referee_msg(input_, rid, **extra) -> bytes:
    return json.dumps({"v": 1, "input": input_, "id": rid, "by": "desk", **extra}).encode()


# -- the broker: displays never read referee input ------------------------------------------
@pytest.mark.broker
@pytest.mark.parametrize("acl", ["project", "confined"])
def test_display_and_referee_logins_never_read_referee_input(tmp_path, acl):
    text = None if acl == "project" else confined_acl("club", {"t1": ["t1-node"]})
    got: dict = {"host": [], "display": [], "referee": []}
    lock = threading.Lock()

    def collect(who):
        def on_message(client, userdata, msg):
            with lock:
                got[who].append((msg.topic, bytes(msg.payload)))

        return on_message

    with PrivateBroker(tmp_path / "broker", acl=text) as b:
        clients = [
            subscriber(b.port, collect("host"), "t-host"),
            subscriber(
                b.port,
                collect("display"),
                "t-display",
                "railbird/#",
                "railbird-display",
                "display-secret",
            ),
            # another console: the token is the venue's, not every console login's
            subscriber(
                b.port,
                collect("referee"),
                "t-referee",
                "railbird/#",
                "railbird-referee",
                "referee-secret",
            ),
        ]
        console = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="t-console")
        console.username_pw_set("railbird-referee", "referee-secret")
        console.connect("127.0.0.1", b.port)
        console.loop_start()
        try:
            ref_topic = codec.topic("club", "t1", "referee")
            payload = referee_msg({"type": "lag", "winner": "Ann"}, "r1", token=PIN)
            console.publish(ref_topic, payload, qos=1).wait_for_publish(5)
            # what displays and consoles must still read: the host's answer and the state
            host = clients[0]
            for kind in ("referee_result", "state"):
                host.publish(codec.topic("club", "t1", kind), b'{"v":1}', qos=1).wait_for_publish(5)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                with lock:
                    if all(len(v) >= (3 if k == "host" else 2) for k, v in got.items()):
                        break
                time.sleep(0.02)
            # the referee input was acknowledged before those two were published, so had
            # the broker passed it on it would be here already: this pause can only make a
            # slow machine pass falsely, never fail falsely
            time.sleep(0.3)
        finally:
            for c in [*clients, console]:
                c.disconnect()
                c.loop_stop()
    assert (ref_topic, payload) in got["host"]
    for who in ("display", "referee"):
        topics = [t for t, _ in got[who]]
        assert sorted(topics) == sorted(
            [codec.topic("club", "t1", "referee_result"), codec.topic("club", "t1", "state")]
        ), (who, topics)
        assert not any(PIN.encode() in p for _, p in got[who]), who


# -- the daemon: no secret in the journal, its files or the log --------------------------------
def scan_db(path) -> list:
    """Every value of every row of every table of the SQLite file that holds a secret."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    hits = []
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert "inputs" in tables and "meta" in tables
        for t in tables:
            for row in db.execute(f'SELECT * FROM "{t}"'):
                for v in row:
                    blob = v if isinstance(v, bytes) else str(v).encode()
                    hits += [(t, s) for s in SECRETS if s.encode() in blob]
    finally:
        db.close()
    return hits


def scan_files(journal) -> list:
    hits = []
    for side in ("", "-wal", "-shm"):
        p = f"{journal}{side}"
        if os.path.exists(p):
            data = Path(p).read_bytes()
            hits += [(side or "db", s) for s in SECRETS if s.encode() in data]
    return hits


@pytest.mark.broker
@pytest.mark.slow
def test_the_journal_keeps_no_token_is_0600_and_replays(broker, tmp_path):
    broker.add_user("railbird-host", HOST_PW)
    host = RailbirdRun(
        tmp_path / "host",
        CONFIG.format(port=broker.port, pin=PIN, host_pw=HOST_PW, client_id=CLIENT_ID),
        extra_args=["--log-level", "DEBUG"],
    )
    answers, lock = [], threading.Lock()

    def on_answer(client, userdata, msg):
        with lock:
            answers.append(json.loads(msg.payload))

    t = codec.topic("club", "t1", "referee")
    lag = {"type": "lag", "winner": "Bob"}
    sent = [
        referee_msg(lag, "r1", token=WRONG),  # rejected: the wrong token
        referee_msg(lag, "r2", token_ok=True),  # rejected: a forged seal is no token
        referee_msg(lag, "r3", token=PIN * 11),  # rejected: over 128 characters (the PIN inside)
        referee_msg(lag, "r4", token=PIN)[:-1],  # rejected: not JSON (the PIN inside)
        referee_msg({"type": "lag", "winner": "Ann"}, "r5", token=PIN),  # applied
    ]
    host.start()
    results = subscriber(
        broker.port,
        on_answer,
        "t-results",
        codec.topic("club", "t1", "referee_result"),
        "railbird-referee",
        "referee-secret",
    )
    console = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="t-console")
    console.username_pw_set("railbird-referee", "referee-secret")
    console.connect("127.0.0.1", broker.port)
    console.loop_start()
    try:
        for payload in sent:
            console.publish(t, payload, qos=1).wait_for_publish(5)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(answers) < len(sent):
            time.sleep(0.05)
        assert [(a["id"], a["status"]) for a in answers] == [
            ("r1", "rejected"),
            ("r2", "rejected"),
            ("r3", "rejected"),
            (None, "rejected"),
            ("r5", "ok"),
        ], answers
        assert not any(s in json.dumps(a) for a in answers for s in SECRETS), answers
        host.wait(lambda s: s["referee"] == 1, "the lag applied")
        # while it runs: the files as they are, WAL included
        assert scan_files(host.journal) == []
        for side in ("", "-wal", "-shm"):
            assert mode(f"{host.journal}{side}") == 0o600, side
        assert mode(host.stats_file) == 0o600
    finally:
        for c in (results, console):
            c.disconnect()
            c.loop_stop()
        host.stop()
    assert scan_db(host.journal) == []
    assert scan_files(host.journal) == []
    assert mode(host.journal) == 0o600
    log = (host.dir / "host.log").read_text(errors="replace")
    assert "rejected" in log  # the log speaks of the refusals, without any secret
    assert [s for s in SECRETS if s in log] == []
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(host.journal), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "OK" in r.stderr, r.stderr
    counters = json.loads(r.stdout)["counters"]
    assert counters["referee"] == 1
    assert counters["rejected_by_reason"].get("unauthorized") == 2, counters


# -- a journal written before the seal --------------------------------------------------------
def old_journal(path) -> tuple[str, dict]:
    """A journal as railbird wrote it before referee input was sealed: raw payloads with the
    token, the config with the token and no seal mark. -> (the last FEN, the stats)."""
    cfg = from_dict(
        {
            "venue": "club",
            "referee_token": PIN,
            "broker": {"client_id": CLIENT_ID},
            "tables": {
                "t1": {
                    "game": "10-ball",
                    "players": ["Ann", "Bob"],
                    "race_to": 3,
                    "nodes": ["t1-node"],
                }
            },
        }
    )
    pipe = Pipeline(cfg)
    j = Journal(path)
    j.db.execute("DELETE FROM meta WHERE key = 'sealed'")
    j.db.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(cfg.raw),))
    t = codec.topic("club", "t1", "referee")
    lag = {"type": "lag", "winner": "Bob"}
    fen = None
    for i, payload in enumerate(
        [
            referee_msg(lag, "r1", token=WRONG),
            referee_msg(lag, "r2"),
            referee_msg({"type": "lag", "winner": "Ann"}, "r3", token=PIN),
            referee_msg({"type": "undo"}, "r4", token=PIN),
            referee_msg(lag, "r5", token=PIN)[:-1],
            referee_msg(lag, "r6", token=PIN),
        ]
    ):
        status, reason, records = pipe.on_message(t, payload, 1_000_000 * (i + 1))
        iid = j.add_input("mqtt", 1_000_000 * (i + 1), t, payload, "club", "t1", status, reason)
        j.add_records(iid, records)
        j.commit()
        fen = next((r.fen for r in records if isinstance(r, StateRecord)), fen)
    j.close()
    return fen, pipe.stats()


def test_an_old_journal_loses_its_token_and_replays_the_same(tmp_path):
    path = tmp_path / "old.sqlite"
    fen, stats = old_journal(path)
    assert scan_files(path) != []  # the old layout did keep it
    os.chmod(path, 0o644)
    j = Journal(path)  # what the daemon, `railbird replay` and the tools all open with
    try:
        pipe, shots = replay(j, journal_config(j))
        assert shots == j.shots()
        assert pipe.tables["club", "t1"].game.snapshot()["fen"] == fen
        assert pipe.stats()["rejected_by_reason"] == stats["rejected_by_reason"]
        assert pipe.stats()["referee"] == stats["referee"] == 3
    finally:
        j.close()
    assert mode(path) == 0o600
    assert scan_db(path) == []
    assert scan_files(path) == []


# -- printed and written files -----------------------------------------------------------------
def test_check_config_prints_no_secret(tmp_path, capsys):
    from railbird import cli

    conf = tmp_path / "host.toml"
    conf.write_text(CONFIG.format(port=1883, pin=PIN, host_pw=HOST_PW, client_id=CLIENT_ID))
    assert cli.main(["run", "--config", str(conf), "--check-config"]) == 0
    out = capsys.readouterr()
    assert '"venue": "club"' in out.out  # it did print the config
    assert [s for s in SECRETS if s in out.out + out.err] == []


def test_tail_prints_referee_input_without_its_token():
    from railbird.commands.tail import format_line

    t = codec.topic("club", "t1", "referee")
    for as_json in (False, True):
        line = format_line(t, referee_msg({"type": "undo"}, "r1", token=PIN), as_json)
        assert "referee" in line and "undo" in line
        assert PIN not in line, line


@pytest.fixture
def open_umask():
    old = os.umask(0o022)  # what most shells have: new files readable by everyone
    try:
        yield
    finally:
        os.umask(old)


def test_the_demo_host_config_is_0600(tmp_path, open_umask):
    from railbird.commands.demo import _host_config

    path = tmp_path / "host.toml"
    _host_config(path, 1883, tmp_path / "journal.sqlite", 0, PIN)
    text = path.read_text()
    assert PIN in text and "password" in text  # the secrets are in it, hence the mode
    assert mode(path) == 0o600
    path.chmod(0o644)  # a file from an older demo run is narrowed when rewritten
    _host_config(path, 1883, tmp_path / "journal.sqlite", 0, PIN)
    assert mode(path) == 0o600


def test_the_broker_password_file_is_never_readable_by_others(tmp_path, open_umask, monkeypatch):
    """Checked while mosquitto_passwd fills it, not only at the end: a reader that opened
    it while it was 0644 could read the hashes through that descriptor."""
    seen = []
    real = subprocess.run

    def run(argv, *a, **kw):
        if argv and argv[0] == "mosquitto_passwd":
            seen.append(mode(argv[-3]))
        return real(argv, *a, **kw)

    monkeypatch.setattr(broker_mod.subprocess, "run", run)
    b = PrivateBroker(tmp_path / "broker")
    b._write_config()
    assert seen and set(seen) == {0o600}, seen
    assert mode(tmp_path / "broker" / "passwd") == 0o600


def test_a_new_journal_is_0600_from_the_start(tmp_path, open_umask):
    path = tmp_path / "j.sqlite"
    j = Journal(path)
    try:
        j.add_input("tick", 1, status="ok")
        j.commit()
        for side in ("", "-wal", "-shm"):
            assert mode(f"{path}{side}") == 0o600, side
    finally:
        j.close()
