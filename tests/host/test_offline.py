"""`railbird assemble` (deterministic, byte for byte) and `railbird replay`."""

import json
import subprocess
import sys

from . import scripts as S


def _input():
    msgs = [S.sync_result(0), *S.batches(S.game(), size=3)]
    bad = json.dumps({"topic": "railbird/v1/club/t1/node/t1-node/events", "payload": "{oops"})
    return S.jsonl(msgs[:3]) + bad + "\n# comment\n\n" + S.jsonl(msgs[3:])


def _assemble(text, *args):
    return subprocess.run(
        [sys.executable, "-m", "railbird", "assemble", *args],
        input=text.encode(),
        capture_output=True,
        check=True,
    )


def test_assemble_is_deterministic_byte_for_byte():
    text = _input()
    a = _assemble(text)
    b = _assemble(text)
    assert a.stdout == b.stdout and a.stdout
    shots = [json.loads(x) for x in a.stdout.decode().splitlines()]
    assert [s["n"] for s in shots] == list(range(1, 8))
    assert b"bad json" in a.stderr
    # canonical form: sorted keys, compact
    first = a.stdout.decode().splitlines()[0]
    assert first == json.dumps(shots[0], sort_keys=True, separators=(",", ":"))


def test_assemble_all_records_and_stats():
    r = _assemble(_input(), "--all", "--stats")
    types = {json.loads(x).get("type", "shot") for x in r.stdout.decode().splitlines()}
    assert {"event", "shot"} <= types
    stats = json.loads(r.stderr.decode().strip().splitlines()[-1])
    assert stats["events"] == len(S.game())


def test_replay_of_a_daemon_journal(tmp_path):
    import time

    from railbird.config import from_dict
    from railbird.daemon.worker import Daemon

    cfg = from_dict(
        {
            "venue": "club",
            "journal": str(tmp_path / "j.sqlite"),
            "tables": {"t1": {"nodes": [S.NODE]}},
        }
    )
    d = Daemon(cfg, connect=False)
    for t, p in [S.sync_result(0), *S.batches(S.game(), size=3)]:
        d.inbox.put(("mqtt", S.RX, t, p, 0, 0))
    d.start()
    deadline = time.time() + 30  # generous: a loaded machine
    while d.pipeline.counters["shots"] < 7 and time.time() < deadline:
        time.sleep(0.01)
    d.stop()
    j = str(tmp_path / "j.sqlite")
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", j, "--check"], capture_output=True, check=True
    )
    summary = json.loads(r.stdout)
    assert summary["tables"]["club/t1"]["shots"] == 7
    assert b"OK: 7 shots identical" in r.stderr
    exp = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", j, "--export-inputs"],
        capture_output=True,
        check=True,
    ).stdout
    shots = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", j, "--shots"], capture_output=True, check=True
    ).stdout
    assert _assemble(exp.decode()).stdout == shots


def test_replay_refuses_a_missing_journal_without_creating_one(tmp_path):
    missing = tmp_path / "nope.sqlite"
    p = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(missing)], capture_output=True, text=True
    )
    assert p.returncode == 2 and "no such journal file" in p.stderr
    assert not missing.exists()


def test_replay_reports_a_bad_config_file_clearly(tmp_path):
    journal = tmp_path / "j.sqlite"
    from railbird.daemon.journal import Journal

    Journal(str(journal)).close()
    bad = tmp_path / "bad.toml"
    bad.write_text('venue = "Not A Slug"\n')
    p = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(journal), "--config", str(bad)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "venue" in p.stderr and "Traceback" not in p.stderr
