"""Issue 23, item 14: retained `birth` and `status` messages (topics the protocol does
retain) under tables or nodes the configuration does not know are not journalled again at
every host start. The probe: 2,000 such messages gave 2,000 -> 4,000 -> 6,000 journal rows
over three starts (about 2 MB a start); issue 13's fix covered `events` junk only.

Real parts: a private mosquitto with the project config, `railbird run` as a subprocess
started three times on one journal, the junk published retained with nodes' own logins. The
config subscribes to every table of the venue (`subscribe` left empty), as setup writes it,
so the broker hands the host every retained copy at every start."""

from __future__ import annotations

import json
import sqlite3

import pytest

from harness.hostproc import RailbirdRun
from rbproto import codec

from .test_retained_junk import CONFIG, publish_retained

pytestmark = [pytest.mark.broker, pytest.mark.slow]

NODE, PW, BOOT = "t1-node", "node-pw", 4
STRAY, STRAY_PW = "stray-node", "stray-pw"  # a login the config lists under no table
JUNK_TABLES = 60
STARTS = 3


def status(node: str) -> bytes:
    return json.dumps(
        {"v": 1, "node": node, "boot": BOOT, "state": "online", "uptime_us": 93_000_000}
    ).encode()


def birth(node: str) -> bytes:
    return json.dumps(
        {"v": 1, "node": node, "boot": BOOT, "fw": "0.1.0", "reset": "power"}
    ).encode()


def junk() -> list:
    out = []
    for i in range(JUNK_TABLES):  # invented tables, with the t1 node's own login
        out.append((codec.topic("club", f"junk-{i}", "status", NODE), status(NODE)))
        out.append((codec.topic("club", f"junk-{i}", "birth", NODE), birth(NODE)))
    return out


def stray() -> list:
    # a node the config does not list, on a table it knows
    return [
        (codec.topic("club", "t1", "status", STRAY), status(STRAY)),
        (codec.topic("club", "t1", "birth", STRAY), birth(STRAY)),
    ]


def rows(path) -> tuple[int, int]:
    """(journalled inputs of the junk, journalled inputs of t1-node's own retained status)"""
    db = sqlite3.connect(path)
    try:
        junk_rows = db.execute(
            "SELECT count(*) FROM inputs WHERE tbl LIKE 'junk-%' OR topic LIKE ?",
            (f"%/node/{STRAY}/%",),
        ).fetchone()[0]
        own = db.execute(
            "SELECT count(*) FROM inputs WHERE topic = ?",
            (codec.topic("club", "t1", "status", NODE),),
        ).fetchone()[0]
        return junk_rows, own
    finally:
        db.close()


def test_retained_status_of_unknown_tables_is_counted_not_journalled(broker, tmp_path):
    broker.add_user(NODE, PW)
    broker.add_user(STRAY, STRAY_PW)
    publish_retained(broker.port, NODE, PW, junk())
    publish_retained(broker.port, STRAY, STRAY_PW, stray())
    # the node's own retained status on its own table still counts at every start
    publish_retained(broker.port, NODE, PW, [(codec.topic("club", "t1", "status", NODE),
                                              status(NODE))])  # fmt: skip
    n_topics = 2 * JUNK_TABLES + 2

    host = RailbirdRun(tmp_path / "host", CONFIG.format(port=broker.port, node=NODE))
    seen = []
    for start in range(STARTS):
        host.start()
        try:
            # every retained copy reached the host: the junk counted, t1-node's status
            # journalled once more (its row count grows by one a start)
            s = host.wait(
                lambda s, n=start: s["retained_unknown"] >= n_topics and rows(host.journal)[1] > n,
                f"start {start + 1}: the retained messages",
                timeout=30,
            )
            seen.append(s["retained_unknown"])
        finally:
            host.stop()
        print(f"start {start + 1}: junk rows, own status rows = {rows(host.journal)}")

    junk_rows, own = rows(host.journal)
    assert junk_rows == 0, f"retained junk journalled: {junk_rows} rows"
    assert own == STARTS  # the configured node's retained status is input, as before
    assert seen == [n_topics] * STARTS  # once per topic, not per copy
