"""Run inside the machine by the installed Railbird's Python (/opt/railbird/bin/python):
the commands the journey needs there, each printing one JSON line.

    player.py play --node t1-node --node t2-node --shots 2 --balls 2
        simulated boards (rbnode.simnode.SimNode: the real node firmware on the simulated
        hardware layer), each configured by the node config setup wrote
        (/etc/railbird/nodes/<node>.json), play `shots` shots of `balls` pocketed balls
        each; every event handed to the broker before the board stops (as a graceful power
        down) -> {"sent": {node: {"boot": b, "drops": n}}}
    player.py back --unit railbird --url URL -- systemctl kill -s KILL railbird
        run the command, then wait until the unit runs a NEW main process and URL answers
        -> {"seconds": s, "pid": new}
    player.py journal [--path P]
        what the host journalled -> {"drops": {node: {boot: n}}, "shots": {table: n},
        "version": user_version}

It imports the firmware from the installed package's copy of the sources
(<prefix>/share/railbird/firmware), the one `railbird node provision` builds from."""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ETC = Path("/etc/railbird")
STATE = Path("/var/lib/railbird-sim")  # the boards' flash, kept across runs (boot counter)


def play(nodes: list[str], shots: int, balls: int, gap: float) -> dict[str, object]:
    sys.path.insert(0, str(Path(sys.prefix) / "share" / "railbird" / "firmware"))
    from rbnode.simnode import SimNode
    from rbproto.codec import POCKETS

    boards = []
    for node in nodes:
        nc = json.loads((ETC / "nodes" / f"{node}.json").read_text())
        b = nc["broker"]
        if b.get("tls"):  # the CA file a provisioned board keeps beside its config
            b["ca"] = str(ETC / "tls" / b["ca"])
        sn = SimNode(
            b["host"], b["port"], nc["venue"], nc["table"], nc["node"], b["password"],
            STATE / node, dev=nc,
        )  # fmt: skip
        sn.start()
        sn.wait_connected(30)
        boards.append(sn)
    for shot in range(shots):
        if shot:
            time.sleep(gap)  # longer than the host's quiet time: the shot ends
        for ball in range(balls):
            for sn in boards:
                sn.drop(POCKETS[(shot * balls + ball) % len(POCKETS)])
            time.sleep(0.3)
    sent = {}
    for sn in boards:
        sn.wait_idle(120)
        drops = sum(1 for t in sn.truth if t[1] == "drop")
        sent[sn.node_id] = {"boot": sn.node.boot, "drops": drops}
        sn.stop(park=True)
    return {"sent": sent}


def main_pid(unit: str) -> int:
    r = subprocess.run(
        ["systemctl", "show", "-p", "MainPID", "--value", unit],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(r.stdout.strip() or 0)


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def back(unit: str, url: str, command: list[str], timeout: float) -> dict[str, object]:
    old = main_pid(unit)
    t0 = time.monotonic()
    subprocess.run(command, check=True)
    while time.monotonic() - t0 < timeout:
        pid = main_pid(unit)
        if pid not in (0, old) and answers(url):
            return {"seconds": round(time.monotonic() - t0, 3), "pid": pid, "old": old}
        time.sleep(0.05)
    return {"seconds": None, "pid": main_pid(unit), "old": old}


def journal(path: Path) -> dict[str, object]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    drops: dict[str, dict[int, int]] = {}
    rows = "SELECT node, boot, count(*) FROM events WHERE kind = 'drop' GROUP BY node, boot"
    for node, boot, n in db.execute(rows):
        drops.setdefault(node, {})[boot] = n
    shots = dict(db.execute("SELECT tbl, count(*) FROM shots GROUP BY tbl").fetchall())
    version = db.execute("PRAGMA user_version").fetchone()[0]
    db.close()
    return {"drops": drops, "shots": shots, "version": version}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="player.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("--node", action="append", required=True)
    p.add_argument("--shots", type=int, default=2)
    p.add_argument("--balls", type=int, default=2)
    p.add_argument("--gap", type=float, default=6.5)
    b = sub.add_parser("back")
    b.add_argument("--unit", default="railbird")
    b.add_argument("--url", required=True)
    b.add_argument("--timeout", type=float, default=60.0)
    b.add_argument("command", nargs="+")
    j = sub.add_parser("journal")
    j.add_argument("--path", type=Path, default=Path("/var/lib/railbird/journal.sqlite"))
    a = ap.parse_args(argv)
    if a.cmd == "play":
        out = play(a.node, a.shots, a.balls, a.gap)
    elif a.cmd == "back":
        out = back(a.unit, a.url, a.command, a.timeout)
    else:
        out = journal(a.path)
    print(json.dumps(out, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
