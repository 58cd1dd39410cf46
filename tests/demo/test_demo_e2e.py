"""Done-when tests of issue 7: `railbird demo --seconds 20` on a fresh copy of the checkout
succeeds, shows that both games progressed and leaves no process behind; Ctrl-C stops the
interactive demo cleanly; the recorded journal replays to identical shots and states."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from railbird.sim import verify

pytestmark = [pytest.mark.broker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def fresh_checkout(dest: Path) -> Path:
    """The checkout's files as a clone would have them (tracked and new, not ignored): no
    .venv, no node_modules, no build output, no __pycache__."""
    files = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for f in files:
        src = REPO / f
        if not f or not src.is_file():
            continue
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / f)
    return dest


def env_for(checkout: Path) -> dict:
    """Run the copy's package (not the editable install of the main checkout)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(checkout / "host"), str(checkout / "protocol")])
    env.pop("RAILBIRD_MQTT_PASSWORD", None)
    return env


def processes_mentioning(text: str) -> list:
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmd:
            out.append((int(pid), cmd))
    return out


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("demo")
    checkout = fresh_checkout(base / "clone")
    work = base / "work"
    t0 = time.monotonic()
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "railbird",
            "demo",
            "--seconds",
            "20",
            "--workdir",
            str(work),
            "--web-port",
            "0",
        ],
        cwd=checkout,
        env=env_for(checkout),
        capture_output=True,
        text=True,
        timeout=120,
    )
    res.elapsed = time.monotonic() - t0
    res.work = work
    res.checkout = checkout
    return res


def test_demo_20s_on_a_fresh_checkout(demo_run):
    r = demo_run
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "DEMO OK: both games progressed" in out
    for line in ("t1 10-ball", "t2 14.1"):
        row = next(x for x in out.splitlines() if line in x)
        assert "progressed" in row and "NO PROGRESS" not in row, row
    assert "web scoreboard:  http://127.0.0.1:" in out
    assert "referee PIN:" in out
    assert f"journal:         {r.work / 'journal.sqlite'}" in out
    # it was the copy's code that ran: the firmware came from the copy
    log = (r.work / "sim-t1.log").read_text()
    assert "railbird sim: table demo/t1" in log
    # it ends by itself after its 20 s (a demo that hung would reach the 120 s timeout);
    # how long the start takes is the machine's business, so the bound is generous
    assert r.elapsed < 110, r.elapsed
    s = verify.summary(r.work / "journal.sqlite")
    assert s["t1"]["shots"] >= 2 and s["t2"]["shots"] >= 2
    assert s["t1"]["score_changes"] >= 1 and s["t2"]["score_changes"] >= 1
    assert s["t1"]["rules_errors"] == 0 and s["t2"]["rules_errors"] == 0


def test_demo_leaves_no_process_behind(demo_run):
    assert processes_mentioning(str(demo_run.work)) == []


def test_simulator_and_host_agree(demo_run):
    """The simulated referee consoles follow the host's retained state topic: the host's
    state equalled the simulator's expectation after every turn."""
    import json

    for t in ("t1", "t2"):
        stats = json.loads((demo_run.work / f"sim-{t}.log").read_text().strip().splitlines()[-1])
        assert stats["disagreed"] == 0, stats
        assert stats["agreed"] >= 3, stats


def test_replay_gives_identical_shots_and_states(demo_run):
    journal = demo_run.work / "journal.sqlite"
    chk = verify.replay_check(journal)
    assert chk["shots"] == chk["stored_shots"] >= 4
    assert chk["states"] == chk["stored_states"] >= 8
    assert chk["shots_equal"] and chk["states_equal"], chk
    res = subprocess.run(
        [sys.executable, "-m", "railbird", "replay", str(journal), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "identical" in res.stderr


def test_ctrl_c_stops_everything(tmp_path):
    work = tmp_path / "work"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "railbird",
            "demo",
            "--workdir",
            str(work),
            "--web-port",
            "0",
            "--no-board",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        out = []
        for line in p.stdout:
            out.append(line)
            if "logs:" in line or time.monotonic() > deadline:
                break
        # broker, host, two tables all up before the Ctrl-C
        deadline = time.monotonic() + 30
        while len(processes_mentioning(str(work))) < 4:
            assert time.monotonic() < deadline, processes_mentioning(str(work))
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        rest, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    text = "".join(out) + rest
    assert p.returncode == 0, text
    assert "Railbird demo stopped" in text and "(SIGINT)" in text
    deadline = time.monotonic() + 5  # exited children may take a moment to be reaped
    while processes_mentioning(str(work)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(work)) == []


def test_missing_mosquitto_prints_the_install_command(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no mosquitto on PATH
    code = (
        "import railbird.broker as b, sys\n"
        "b.find_mosquitto = lambda: (_ for _ in ()).throw(b.BrokerError('missing'))\n"
        "from railbird.cli import main\n"
        "sys.exit(main(['demo', '--seconds', '1']))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 1
    assert "sudo apt-get install -y mosquitto" in res.stderr
