"""Updates to truly broken sets, end to end (issue 24, item 6): a real private mosquitto,
`railbird run` (time sync), `railbird nodes update` serving a set built by
tools/build_firmware.py (--source: the modules as .py, which CPython imports) and then
edited to be broken, and a simulated board that runs the code on its flash
(rbnode.simproc.SimBoard: every boot a process running firmware/boot.py on the board's
flash directory, then the downloaded set's own rbnode.node on simulated hardware; its
watchdog kills a boot not fed in time).

- a working set, edited only to say so at import, commits, and its code is what ran;
- a syntax error and an import error: boot.py's import check rolls the set back at once;
- an endless loop at import and one in the node's main loop: the watchdog boot.py (or the
  node's supervisor) armed resets the board once, and that watchdog reset ends the trial;
- an exception at every boot (a crash loop): rolled back after its trial boots;
- a set that breaks sensing (every beam's level read inverted: stuck "blocked"): connected
  and synced but never healthy, rolled back at its deadline, the dead channels named.
Each time the board ends on the old set and reports it, and the flash names the outcome.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.hostproc import RailbirdRun
from harness.mqttsub import subscriber
from harness.waiting import wait_for
from railbird.fleet.view import Fleet
from rbnode import ota
from rbnode.hw.storage import FileStorage
from rbnode.node import FW_VERSION
from rbnode.simproc import SimBoard

pytestmark = [pytest.mark.broker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PW = "node-pw"
CONFIG = """
venue = "club"
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[tables.t1]
nodes = ["n1"]
"""


@pytest.fixture(scope="module")
def source_set(tmp_path_factory):
    sys.path.insert(0, str(REPO / "tools"))
    import build_firmware

    out = tmp_path_factory.mktemp("fw") / "node"
    build_firmware.build(out, version="rbnode-9-src", source=True)
    return out


def broken(source_set, tmp: Path, version: str, path: str, edit) -> Path:
    """A copy of the built set with `path` edited (edit(text) -> text), resealed (its
    manifest names the edited files: the host and the node take it as intact)."""
    import build_firmware

    d = tmp / version
    shutil.copytree(source_set, d)
    f = d / path
    new = edit(f.read_text())
    assert new != f.read_text(), "the edit changed nothing"
    f.write_text(new)
    build_firmware.reseal(d, version)
    return d


class Venue:
    def __init__(self, broker, tmp: Path, **board_kw):
        self.broker = broker
        self.host = RailbirdRun(tmp / "host", CONFIG.format(port=broker.port))
        self.host.start()
        broker.add_user("n1", PW)
        self.board = SimBoard(
            "127.0.0.1", broker.port, "club", "t1", "n1", PW, tmp / "n1",
            # a status every 2 s, not 30: each wait for "synced" is the next status
            dev={"sync_period_s": 2, "sensing": {"status_period_s": 2}}, **board_kw,
        )  # fmt: skip
        self.board.start()
        self.fleet = Fleet("club")
        self.sub = subscriber(
            broker.port,
            lambda c, u, m: self.fleet.on_message(m.topic, m.payload, m.retain),
            "ota-broken-test",
            topic=tuple(self.fleet.topics()),
        )
        self.board.wait_node(60)
        wait_for(lambda: self.synced(), "the board online and synced", 60)

    def synced(self):
        n = self.fleet.get("t1", "n1")
        return n is not None and n.online and (n.status or {}).get("sync") is not None

    def update(self, fw: Path, *more, timeout=240):
        cmd = [sys.executable, "-m", "railbird", "nodes", "update", "--firmware", str(fw)]
        cmd += ["--advertise", "127.0.0.1", "--http-port", "0", *more]
        cmd += ["--host", "127.0.0.1", "--port", str(self.broker.port)]
        cmd += ["--user", "railbird-host", "--password", "host-secret", "--wait", "1"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)

    def close(self):
        self.board.stop()
        self.sub.loop_stop()
        self.sub.disconnect()
        self.host.stop()


@pytest.fixture
def venue(broker, tmp_path):
    made = []

    def make(**kw):
        v = Venue(broker, tmp_path, **kw)
        made.append(v)
        return v

    yield make
    for v in made:
        v.close()


def rolled_back(v: Venue, r, version: str, error: str):
    """The rollout says so, the board runs the flashed set again and reports it (the
    rolled-back update in its status), and the flash's pointer names the outcome."""
    b = v.board
    out = r.stdout + r.stderr
    assert r.returncode == 1, out + b.console()[-4000:]
    assert f"t1/n1: rolled_back ({error}" in r.stdout, out + b.console()[-4000:]
    wait_for(lambda: b.fw == FW_VERSION and v.synced(), "back on the old set", 60)
    n = v.fleet.get("t1", "n1")
    wait_for(lambda: n.fw == FW_VERSION, "the old version reported", 30)
    assert n.update["state"] == "rolled_back" and n.update["version"] == version, n.update
    assert n.update["error"].startswith(error), n.update
    run = ota.running(FileStorage(b.state_dir))
    assert run["slot"] == "" and run["trial"] is None, run
    assert run["last"]["state"] == "rolled_back" and run["last"]["version"] == version


def test_a_working_set_runs_from_the_flash_and_commits(venue, source_set, tmp_path):
    good = broken(
        source_set, tmp_path, "rbnode-9-marked", "rbnode/node.py",
        lambda t: t.replace("FW_VERSION = ", 'print("SET-MARKER from the downloaded set")\n'
                            "FW_VERSION = ", 1),
    )  # fmt: skip
    v = venue()
    r = v.update(good, "--trial-s", "60")
    b = v.board
    assert r.returncode == 0, r.stdout + r.stderr + b.console()[-4000:]
    assert f"t1/n1: done ({FW_VERSION} -> rbnode-9-marked" in r.stdout, r.stdout
    assert b.fw == "rbnode-9-marked"
    log = b.console()
    # the marker is printed by the downloaded node.py only: boot 2 ran the slot's code
    boots = log.split("--- boot ")
    assert "SET-MARKER" not in boots[1] and "SET-MARKER" in boots[2], log[-4000:]
    assert "on trial" in boots[2]
    assert [c for c, _ in b.boots] == ["power"] and b.reboots == 1
    run = ota.running(FileStorage(b.state_dir))
    assert run["slot"] == "a" and run["last"]["state"] == "done"


def test_a_syntax_error_is_rolled_back_at_once(venue, source_set, tmp_path):
    bad = broken(
        source_set,
        tmp_path,
        "rbnode-9-syntax",
        "rbnode/node.py",
        lambda t: t + "\ndef broken(:\n    pass\n",
    )
    v = venue()
    r = v.update(bad, "--trial-s", "60")
    rolled_back(v, r, "rbnode-9-syntax", "import failed: SyntaxError(")
    assert [e for _, e in v.board.boots] == ["reset", "reset"]  # install, the failed import


def test_an_import_error_is_rolled_back_at_once(venue, source_set, tmp_path):
    bad = broken(
        source_set,
        tmp_path,
        "rbnode-9-import",
        "rbnode/node.py",
        lambda t: "from rbnode.nothere import anything  # noqa\n" + t,
    )
    v = venue()
    r = v.update(bad, "--trial-s", "60")
    rolled_back(v, r, "rbnode-9-import", "import failed: ModuleNotFoundError(")


def test_a_hang_at_import_is_rolled_back_after_one_watchdog_period(venue, source_set, tmp_path):
    bad = broken(
        source_set,
        tmp_path,
        "rbnode-9-hang-import",
        "rbnode/node.py",
        lambda t: "while True:\n    pass\n" + t,
    )
    v = venue()
    r = v.update(bad, "--trial-s", "600", "--trial-boots", "3")
    rolled_back(v, r, "rbnode-9-hang-import", "watchdog reset on trial boot 1")
    b = v.board
    assert b.boots == [("power", "reset"), ("soft", "wdt")], b.boots
    assert "does not import" not in b.console()


def test_a_hang_in_the_main_loop_is_rolled_back_after_one_watchdog_period(
    venue, source_set, tmp_path
):
    bad = broken(
        source_set, tmp_path, "rbnode-9-hang-loop", "rbnode/node.py",
        lambda t: t.replace("    def poll_sensors(self):\n",
                            "    def poll_sensors(self):\n        while True:\n            pass\n"),
    )  # fmt: skip
    v = venue()
    r = v.update(bad, "--trial-s", "600", "--trial-boots", "3")
    rolled_back(v, r, "rbnode-9-hang-loop", "watchdog reset on trial boot 1")
    assert v.board.boots == [("power", "reset"), ("soft", "wdt")], v.board.boots


def test_a_crash_loop_is_rolled_back_after_its_trial_boots(venue, source_set, tmp_path):
    bad = broken(
        source_set, tmp_path, "rbnode-9-crash", "rbnode/node.py",
        lambda t: t.replace("        dev = dev_settings(dev)\n",
                            '        raise RuntimeError("crash at every boot")\n', 1),
    )  # fmt: skip
    v = venue(fatal_pause_s=1)
    r = v.update(bad, "--trial-boots", "2")
    rolled_back(v, r, "rbnode-9-crash", "no healthy status in 2 boots")
    b = v.board
    assert [e for _, e in b.boots] == ["reset", "reset", "reset"], b.boots
    assert b.console().count("RuntimeError: crash at every boot") == 2


def test_a_set_that_breaks_sensing_is_rolled_back(venue, source_set, tmp_path):
    bad = broken(
        source_set,
        tmp_path,
        "rbnode-9-blind",
        "rbnode/beam.py",
        lambda t: t.replace(
            "self._blocked = hw.BEAM_BLOCKED", "self._blocked = 1 - hw.BEAM_BLOCKED"
        ),
    )
    v = venue()
    r = v.update(bad, "--trial-s", "15")
    rolled_back(v, r, "rbnode-9-blind", "no healthy status within 15 s: sensing: pocket ")
    assert "not alive" in r.stdout and "cue" in r.stdout, r.stdout
    assert v.board.boots == [("power", "reset"), ("soft", "reset")], v.board.boots
