"""The rollout's side of version order and signing (issue 23, defect 6;
railbird.fleet.rollout): a node that runs a later version than the set is skipped unless the
owner forces the downgrade; a forced one is journalled (who, when, from, to) before its
command goes out, and the command is bound to the node's boot and running version under the
venue key's signature. The node's answer comes from the firmware's own decision
(rbnode.trust) on the command the rollout published, fed back as its status.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from railbird.fleet.downgrades import Journal
from railbird.fleet.firmware import FirmwareSet
from railbird.fleet.rollout import Rollout
from railbird.fleet.view import Fleet
from rbnode.trust import Trust
from rbproto import codec

NEW, OLD = "rbnode-0.2.0", "rbnode-0.1.5"


@pytest.fixture
def signer(venue_keys):
    return venue_keys[0]


class Board:
    """A node that runs `fw` in boot `boot` and answers each command with the firmware's
    own verdict (downloads always 'fail': only the decision is under test)."""

    def __init__(self, fleet: Fleet, key: str, fw: str, boot: int = 7):
        self.fleet, self.fw, self.boot = fleet, fw, boot
        self.trust = Trust({"venue": "club", "table": "t1", "node": "n1", "venue_key": key})
        self.commands: list[dict] = []
        self.status(None)

    def status(self, update):
        msg = {"v": 1, "node": "n1", "boot": self.boot, "state": "online", "uptime_us": 1,
               "fw": self.fw, "update": update}  # fmt: skip
        self.fleet.on_message(codec.topic("club", "t1", "status", "n1"),
                              codec.encode("status", msg))  # fmt: skip

    def publish(self, topic, payload):
        cmd = codec.decode("update", payload)
        self.commands.append(cmd)
        why = self.trust.update(cmd, False, self.boot, self.fw)
        if why is None:
            self.fw = cmd["version"]  # installed and healthy
            self.status({"id": cmd["id"], "version": cmd["version"], "state": "done"})
        else:
            self.status({"id": cmd["id"], "state": "failed", "error": why})


def rollout(board, signer, journal=None, **kw):
    fw = FirmwareSet(Path("/nonexistent"), NEW, b"{}", (("a.py", 1, "0" * 64),))
    fw = FirmwareSet(Path("/nonexistent"), kw.pop("version", NEW), b"{}", fw.files)
    return Rollout(board.fleet, board.publish, fw, "http://127.0.0.1:9/fw/x/", signer=signer,
                   journal=journal, table_timeout_s=20, say=lambda s: None, **kw)  # fmt: skip


def test_forward_is_signed_and_taken(signer):
    b = Board(Fleet("club"), signer.public, OLD)
    [r] = rollout(b, signer).run({"t1": ["n1"]})
    assert (r.outcome, b.fw) == ("done", NEW), r
    assert "downgrade" not in b.commands[0] and len(b.commands[0]["sig"]) == 768


def test_a_downgrade_is_skipped_unless_forced_then_journalled(signer, tmp_path, monkeypatch):
    monkeypatch.setenv("SUDO_USER", "owner")
    journal = Journal(tmp_path / "downgrades.jsonl")
    b = Board(Fleet("club"), signer.public, NEW)
    [r] = rollout(b, signer, journal, version=OLD).run({"t1": ["n1"]})
    assert r.outcome == "downgrade" and not b.commands and b.fw == NEW, r
    assert not r.ok and journal.read() == []
    [r] = rollout(b, signer, journal, version=OLD, force_downgrade=True).run({"t1": ["n1"]})
    assert (r.outcome, b.fw) == ("done", OLD), r
    assert b.commands[-1]["downgrade"] == {"boot": 7, "from": NEW}
    [d] = journal.read()
    assert (d.who, d.node, d.from_version, d.to_version, d.boot) == ("owner", "n1", NEW, OLD, 7)
    assert d.at.endswith("Z") and d.update == b.commands[-1]["id"]
    line = json.loads((tmp_path / "downgrades.jsonl").read_text())
    assert line["from_version"] == NEW and line["to_version"] == OLD


def test_unsigned_commands_are_refused_by_a_board_with_the_key(signer):
    b = Board(Fleet("club"), signer.public, OLD)
    [r] = rollout(b, None).run({"t1": ["n1"]})
    assert r.outcome == "failed" and r.detail.startswith("refused: unsigned update"), r
    assert b.fw == OLD
