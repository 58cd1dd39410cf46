"""Roll a firmware set out over the air, one table at a time (`railbird nodes update`).

For each table in turn: every online node of the table that does not run the set's version
gets the `update` command (protocol/SPEC.md; QoS 1, sent again every `resend_s` while the
node's status shows nothing of it, since a node that was reconnecting never got it); the
rollout then follows each node's `status.update` until the node runs the new version and
says "done" (it was healthy on trial and committed the set), or says "failed" (refused
before anything was installed) or "rolled_back" (the set never got healthy: the node runs
the previous one again), or the table's time is up. A table with a node that did not end
on the new version stops the rollout (the next tables are "not reached") unless
keep_going: a set that fails on one table is not pushed to the others.

A node that is offline is skipped and reported ("offline") and the rollout goes on: one
unplugged board must not keep a whole venue on the old set. A table whose retained state
shows a match in play is skipped ("match in play") unless forced: a board that restarts
into a new set mid-rack loses what it senses meanwhile. Neither counts as a failure of the
set; both leave the exit status 1, since those nodes do not run it.

Versions only go forward (rbproto.signing.version_key): a node that runs a later version
than the set is skipped ("downgrade": not forced) unless the owner forces it
(force_downgrade); then its command carries a `downgrade` bound to the node's boot and
running version, signed with the rest, and the downgrade is journalled (who, when, from,
to: railbird.fleet.downgrades) before the command goes out. With a signer (the venue key,
railbird.venuekey.Signer) every command is signed; a node provisioned with the venue key
refuses one that is not (protocol/SPEC.md "Signed commands").
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from railbird.fleet.downgrades import Downgrade
from railbird.fleet.firmware import FirmwareSet
from railbird.fleet.view import Fleet, NodeState
from rbproto import codec, signing

GOOD = ("done", "up to date")
FAILED = ("failed", "rolled_back", "timeout")  # the set was tried and did not take: stop


@dataclass
class NodeResult:
    table: str
    node: str
    before: str | None
    # done, up to date, failed, rolled_back, timeout; offline, match in play, downgrade,
    # not reached
    outcome: str
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.outcome in GOOD

    def line(self) -> str:
        text = f"{self.table}/{self.node}: {self.outcome}"
        if self.outcome == "done":
            text += f" ({self.before or '?'} -> {self.detail}, {self.seconds:.0f} s)"
        elif self.detail:
            text += f" ({self.detail})"
        return text


def new_id() -> str:
    return time.strftime("u%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class Rollout:
    def __init__(
        self,
        fleet: Fleet,
        publish,
        fw: FirmwareSet,
        url: str,
        *,
        update_id: str | None = None,
        trial_s: int | None = None,
        trial_boots: int | None = None,
        table_timeout_s: float = 900.0,
        resend_s: float = 20.0,
        keep_going: bool = False,
        force: bool = False,
        signer=None,
        force_downgrade: bool = False,
        journal=None,
        say=print,
    ):
        self.fleet = fleet
        self.publish = publish  # publish(topic, payload bytes): QoS 1, not retained
        self.fw = fw
        self.id = update_id or new_id()
        cmd = {
            "v": 1,
            "id": self.id,
            "version": fw.version,
            "url": url,
            "manifest_sha256": fw.manifest_sha256,
        }
        if trial_s is not None:
            cmd["trial_s"] = trial_s
        if trial_boots is not None:
            cmd["trial_boots"] = trial_boots
        self.cmd = cmd
        self.signer = signer  # sign(cmd, downgrade) -> cmd with sig: Signer.sign_update
        self.force_downgrade = force_downgrade
        self.journal = journal  # journal(Downgrade) before a forced downgrade is sent
        self.payload = self._payload(None)
        self.table_timeout_s = table_timeout_s
        self.resend_s = resend_s
        self.keep_going = keep_going
        self.force = force  # update tables with a match in play too
        self.say = say

    def run(self, plan: dict[str, list[str]]) -> list[NodeResult]:
        """plan: table -> node ids, in rollout order -> one result per node."""
        out: list[NodeResult] = []
        stop = False
        for table, nodes in plan.items():
            if stop:
                out += [
                    NodeResult(table, n, self._fw(table, n), "not reached", "rollout stopped")
                    for n in nodes
                ]
                continue
            if not self.force and self.fleet.in_play(table):
                self.say(f"table {table}: skipped, a match is in play (--force updates it)")
                out += [
                    NodeResult(table, n, self._fw(table, n), "match in play", "skipped")
                    for n in nodes
                ]
                continue
            self.say(f"table {table}: {', '.join(nodes)}")
            res = self.table(table, nodes)
            out += res
            if any(r.outcome in FAILED for r in res) and not self.keep_going:
                stop = True
        return out

    def _fw(self, table, node):
        ns = self.fleet.get(table, node)
        return ns.fw if ns else None

    def _ours(self, ns: NodeState, seen: int) -> list[dict]:
        """This rollout's status.update reports of the node since index `seen`."""
        return [u for u in ns.updates[seen:] if u.get("id") == self.id]

    def _payload(self, downgrade) -> bytes:
        cmd = self.cmd
        if self.signer is not None:
            cmd = self.signer.sign_update(cmd, downgrade)
        elif downgrade is not None:
            cmd = {**cmd, "downgrade": {"boot": downgrade[3], "from": downgrade[4]}}
        return codec.encode("update", cmd)

    def _send(self, venue, table, node, payload):
        self.publish(codec.topic(venue, table, "update", node), payload)

    def _downgrade(self, ns: NodeState) -> bytes:
        """The command for a forced downgrade of `ns`, journalled first."""
        boot = (ns.status or {}).get("boot", 0)
        assert ns.fw is not None
        bound = (ns.venue, ns.table, ns.node, boot, ns.fw)
        payload = self._payload(bound)
        if self.journal is not None:
            self.journal(
                Downgrade.now(ns.venue, ns.table, ns.node, ns.fw, self.fw.version, self.id, boot)
            )
        self.say(f"  {ns.table}/{ns.node}: forced downgrade {ns.fw} -> {self.fw.version}")
        return payload

    def table(self, table: str, nodes: list[str]) -> list[NodeResult]:
        results: dict[str, NodeResult] = {}
        pending: dict[str, dict] = {}  # node -> {t0, sent, venue, state}
        t0 = time.monotonic()
        for node in nodes:
            ns = self.fleet.get(table, node)
            if ns is None or not ns.online:
                results[node] = NodeResult(
                    table, node, ns.fw if ns else None, "offline", "skipped: not online"
                )
            elif ns.fw == self.fw.version:
                results[node] = NodeResult(table, node, ns.fw, "up to date")
            elif ns.fw and signing.older(self.fw.version, ns.fw) and not self.force_downgrade:
                results[node] = NodeResult(
                    table, node, ns.fw, "downgrade", "skipped: --force-downgrade to go back"
                )
            else:
                older = bool(ns.fw) and signing.older(self.fw.version, ns.fw)
                payload = self._downgrade(ns) if older else self.payload
                # counted before the send: an answer may arrive before publish() returns
                seen = len(ns.updates)
                self._send(ns.venue, table, node, payload)
                pending[node] = {
                    "sent": t0,
                    "venue": ns.venue,
                    "state": None,
                    "before": ns.fw,
                    "seen": seen,
                    "payload": payload,
                }
        deadline = t0 + self.table_timeout_s
        while pending and time.monotonic() < deadline:
            self.fleet.wait(lambda f: False, 0.5)
            now = time.monotonic()
            for node in list(pending):
                p = pending[node]
                ns = self.fleet.get(table, node)
                reports = self._ours(ns, p["seen"]) if ns else []
                if ns is not None:
                    p["seen"] = len(ns.updates)
                if not reports:
                    if p["state"] is None and now - p["sent"] >= self.resend_s:
                        # never reached the node: again
                        self._send(p["venue"], table, node, p["payload"])
                        p["sent"] = now
                    continue
                for u in reports:
                    if u.get("state") != p["state"]:
                        p["state"] = u.get("state")
                        extra = f" ({u['error']})" if u.get("error") else ""
                        self.say(f"  {table}/{node}: {p['state']}{extra}")
                u = reports[-1]
                state = u.get("state")
                if state == "done" and ns.fw == self.fw.version:
                    results[node] = NodeResult(
                        table, node, p["before"], "done", self.fw.version, now - t0
                    )
                elif state in ("failed", "rolled_back"):
                    results[node] = NodeResult(
                        table, node, p["before"], state, u.get("error") or "", now - t0
                    )
                else:
                    continue
                del pending[node]
        for node, p in pending.items():
            results[node] = NodeResult(
                table,
                node,
                p["before"],
                "timeout",
                f"last state {p['state'] or 'none'} after {self.table_timeout_s:.0f} s",
                self.table_timeout_s,
            )
        return [results[n] for n in nodes]
