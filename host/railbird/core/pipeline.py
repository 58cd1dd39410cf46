"""The deterministic core of the daemon: messages in, journal records out.

`Pipeline` turns raw MQTT messages (topic, payload, receive time), local referee input and
time ticks into records (events released in timeline order, late events, the provisional
`inplay` view of the shot in play, shots, game states, referee results, node status). It
does no I/O: the daemon journals the input and the records in one transaction and then
calls the outputs; a restart replays the journalled inputs through a fresh Pipeline and
arrives at exactly the same state (docs/architecture.md, "Journal rebuild").

Per-node watermarks (docs/host.md "Per-node watermarks"): each node of a table that has
reported has a `NodeMark`: `known`, its newest event time (or a fresh status with nothing
buffered), and, when the node may still have events for the past (last will `offline`, host
reconnect after a broker outage, a reconnect status with a backlog), a hold. A table's
release point (event watermark or idle tick) is capped at `known` - window of every held
node (the window because a node sends a drop when its beam clears, after rail hits stamped
later), so no shot closes and no other node's event is released past a time for which a
held node's events may still come. A node leaves the hold with evidence that it is caught
up (a live synced event, or a fresh status with empty queue and spill); a hold older than
`max_hold_ms` (host time of the input) expires: the node is `gone`, the table moves on, and
its later events are late as before. All of it is a function of the journalled inputs
(receive times, ticks, reconnects), so replays are exact.

A node's own watermark (`wm` of its batches, `NodeMark.wm`: all its events before it are in)
replaces the window for that node once its clock is synced: a one-node table is released up
to it when the batch arrives; across nodes the window for a silent node is `cross_window`,
sized from the clock models' measured uncertainty (docs/shots.md "Release").

Memory is bounded (docs/reliability.md, item 11): per node, the clock model, dedup set and
warnings of its BOOTS_KEPT (4) most recently active boots (a dedup set keeps at most 4,096
out-of-order seqs and 1,088 content prints, at most about 0.5 MB); nodes are the broker's node
logins (a login writes only its own subtree) on the tables they are configured for; per
table, REFEREE_IDS_KEPT referee ids and the last SHOTS_KEPT shots.
"""

from __future__ import annotations

import copy
import json
import logging
from collections import Counter, deque
from collections.abc import Iterable
from typing import Any, cast

from railbird.core import fastcodec, health
from railbird.core.clockmodel import BootClock, ClockModels
from railbird.core.game import Game, referee_facts, shot_input, with_referee_facts
from railbird.core.records import (
    JSON,
    ConflictRecord,
    EventRecord,
    HoldReason,
    HoldRecord,
    HoldState,
    InplayRecord,
    LateRecord,
    NodeRecord,
    Origin,
    Outcome,
    PendingRecord,
    QuarantinedRecord,
    Record,
    RefereeRecord,
    RulesErrorRecord,
    ShotRecord,
    Source,
    StateRecord,
    Status,
)
from railbird.core.refauth import authorized
from railbird.core.revision import stale_reason
from railbird.core.shotclock import ClockAction, ClockError, ShotClock, clock_for, next_turn
from railbird.core.shots import ACTIVITY, INPLAY_KINDS, Shot, ShotAssembler
from railbird.core.timeline import Event, Timeline
from rbproto import codec

log = logging.getLogger("railbird.pipeline")

NODE_KINDS_IN = ("events", "sync_result", "birth", "status")
EVENT_KINDS = frozenset(codec.EVENT_KINDS)
REFEREE_IDS_KEPT = 4096
SHOTS_KEPT = 1000  # a table's last shots, kept for inspection (`Table.shots`)
HEALTH_SHOTS = 200  # the last shots the sensor health is judged on (core/health.py)
# Boots of one node whose state (clock model, dedup set, warnings given) is kept: the most
# recently active. A node only re-sends its current backlog, so a boot four reboots back
# has long been acknowledged; should it speak again it starts afresh (unsynced, no dedup
# history). Without this, every boot ever seen stayed in memory: 20,000 boots, +37 MB.
BOOTS_KEPT = 4
# The least reorder window between nodes that send watermarks (docs/shots.md "Release"):
# a silent node may still owe an event this long after its time: a drop goes out when its
# beam clears (blocked 30-50 ms by a falling ball), then the batch linger (20 ms) and the
# Wi-Fi delivery (tens of ms). Clock uncertainty comes on top; the configured window caps it.
XWINDOW_FLOOR_US = 150_000
# The same for a table with a colour station in its ball return (`sensors` has "colour"):
# a read is stamped when the ball reaches the station and sent once it has rolled past, up
# to the longest pass later (rbnode.colour.MAX_PASS_US, 400 ms: a pass any longer is sent
# at confidence 0), then the linger and the delivery (the floor above less a beam's 50 ms).
# Sized for the 150 ms, a slow ball's read (147 ms at 300 mm/s) was released past when the
# table played on, and its ball presumed (tests/host/test_colour_release.py).
XWINDOW_COLOUR_FLOOR_US = 400_000 + XWINDOW_FLOOR_US - 50_000


def _floor(t: Table) -> int:
    """The least cross-node window of table `t`: how long a node that sends watermarks may
    still owe an event after its time."""
    return XWINDOW_COLOUR_FLOOR_US if "colour" in t.sensors else XWINDOW_FLOOR_US


class Reject(Exception):
    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason


class NodeMark:
    """Watermark state of one node of one table (see the module docstring)."""

    __slots__ = (
        "boot",
        "gone",
        "known",
        "reason",
        "reconnects",
        "since",
        "status_key",
        "wm",
        "wm_boot",
    )

    def __init__(self) -> None:
        self.known: int | None = None  # table µs up to which all the node's events are in
        self.since: int | None = None  # host µs at which the current hold began (None: not held)
        self.reason: str | None = None  # a HoldReason (a plain str once loaded from a snapshot)
        self.gone = False  # the hold passed max_hold: no longer holds the table
        self.boot: int | None = None  # boot of the last fresh status
        # (boot, uptime_us) of the last fresh online status
        self.status_key: tuple[int, int] | None = None
        self.reconnects: int | None = None  # its counters.reconnects
        # the node's own watermark (batch `wm`), table µs: all its events up to here are in;
        # None until a synced batch of its latest boot carries one (old firmware: never)
        self.wm: int | None = None
        self.wm_boot: int | None = None  # the boot of the node's latest batch (whose wm `wm` is)

    @property
    def holding(self) -> bool:
        return self.since is not None and not self.gone


class Table:
    """Runtime state of one table."""

    # tcfg, cfg: railbird.config's TableConfig and Config (core does not import config)
    def __init__(self, venue: str, table: str, tcfg: Any, cfg: Any) -> None:
        self.venue = venue
        self.table = table
        self.nodes = set(tcfg.nodes)
        # the optional sensors the config says the table has (core/health.py)
        self.sensors: tuple[str, ...] = tuple(tcfg.sensors)
        self.timeline = Timeline(cfg.window_us)
        self.assembler = ShotAssembler(table, tcfg.shot_params(cfg.shots))
        self.game = Game(tcfg.match(), defaults=tcfg.match_defaults())
        # the match's shot clock (core/shotclock.py; None: off, the default)
        self.clock: ShotClock | None = clock_for(self.game.match)
        self.referee_ids: deque[str] = deque()
        self.referee_id_set: set[str] = set()
        self.pos = 0
        self.unsynced_warned: set[tuple[str, int]] = set()
        self.shots: list[JSON] = []  # kept for inspection (bounded)
        # when each sensor channel last fired over the last HEALTH_SHOTS shots: derived from
        # `shots`, built from them on first use (`activity()`), then kept by `keep_shot`
        self.sensor_activity: health.Activity | None = None
        # Referee facts (a `confirm` with shot facts) entered while a shot was in play:
        # applied to that shot when it closes (protocol/REFEREE.md §3a, docs/host.md).
        self.pending_facts: JSON = {}
        self.marks: dict[str, NodeMark] = {}  # node -> NodeMark (nodes that have reported)
        # (node, boot) with a reused seq (warned once)
        self.conflicted: set[tuple[str, int]] = set()
        self.quarantine_warned: set[tuple[str, int]] = (
            set()
        )  # (node, boot) with a quarantined event

    def mark(self, node: str) -> NodeMark:
        m = self.marks.get(node)
        if m is None:
            m = self.marks[node] = NodeMark()
        return m

    def forget(self, node: str, boot: int) -> None:
        """Drop what is kept per (node, boot) (Pipeline._boot)."""
        self.timeline.forget(node, boot)
        for warned in (self.unsynced_warned, self.conflicted, self.quarantine_warned):
            warned.discard((node, boot))
        m = self.marks.get(node)
        if m is not None and m.wm_boot == boot:  # its clock model goes too
            m.wm = m.wm_boot = None

    def keep_shot(self, shot: JSON) -> None:
        """A closed shot into the kept ones (bounded) and into the sensor activity."""
        self.shots.append(shot)
        if len(self.shots) > SHOTS_KEPT:
            del self.shots[0]
        if self.sensor_activity is not None:
            self.sensor_activity.add(shot)

    def activity(self) -> health.Activity:
        """The sensor activity of the last HEALTH_SHOTS shots (core/health.py)."""
        if self.sensor_activity is None:
            self.sensor_activity = health.Activity(HEALTH_SHOTS, self.shots[-HEALTH_SHOTS:])
        return self.sensor_activity

    def shot_in_play(self) -> bool:
        """Activity on the table that is not yet a ruled shot: an open shot, or events
        still in the reorder window."""
        return bool(self.assembler.open or self.timeline.pending > 0)


class Pipeline:
    def __init__(self, cfg: Any) -> None:  # a railbird.config.Config
        self.cfg = cfg
        self.tables: dict[tuple[str, str], Table] = {}
        self.clocks = ClockModels()
        self.counters: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        # events of a kind this host does not know (a later additive protocol change,
        # protocol/SPEC.md "Additive changes"), per node; skipped, their seq consumed
        self.unknown_kinds: Counter[str] = Counter()
        self.node_status: dict[tuple[str, str, str], JSON] = {}
        self.node_table: dict[str, str] = {
            n: name for name, tc in cfg.table.items() for n in tc.nodes
        }
        # node -> {boot: None}, least recently active first
        self.boots: dict[str, dict[int, None]] = {}
        for name in sorted(cfg.table):  # configured tables exist from the start
            if cfg.venue != "*":
                self.table(cfg.venue, name)

    # -- helpers -----------------------------------------------------------------------
    def table(self, venue: str, table: str) -> Table:
        key = (venue, table)
        t = self.tables.get(key)
        if t is None:
            if self.cfg.venue not in ("*", venue):
                raise Reject("unknown venue", f"unknown venue: {venue}")
            tcfg = self.cfg.table_config(table)
            if tcfg is None:
                raise Reject("unknown table", f"unknown table: {venue}/{table}")
            t = self.tables[key] = Table(venue, table, tcfg, self.cfg)
        return t

    def _reject(self, code: str, reason: str) -> Outcome:
        self.counters["rejected"] += 1
        self.rejected[code] += 1
        return (Status.REJECTED, reason, [])

    COUNTERS = (
        "received",
        "events",
        "duplicate",
        "rejected",
        "late",
        "reordered",
        "shots",
        "states",
        "sync_samples",
        "referee",
        "referee_refused",
        "referee_stale",
        "rules_refused",
        "ignored",
        "referee_pending",
        "referee_facts_refused",
        "holds",
        "holds_expired",
        "reconnects",
        "conflicts",
        "quarantined",
        "unknown_kind_events",
    )

    def stats(self) -> JSON:
        d: JSON = dict.fromkeys(self.COUNTERS, 0)
        d.update(self.counters)
        d["rejected_by_reason"] = dict(self.rejected)
        d["unknown_kind_events_by_node"] = dict(self.unknown_kinds)
        d["pending"] = sum(t.timeline.pending for t in self.tables.values())
        d["held"] = sorted(
            f"{k[1]}/{n}" for k, t in self.tables.items() for n, m in t.marks.items() if m.holding
        )
        return d

    # -- MQTT messages -------------------------------------------------------------------
    def on_message(
        self, topic: str, payload: bytes, rx: int | None, sealed: bool = False
    ) -> Outcome:
        """-> (status, reason, records); status is ok, duplicate, rejected or ignored.
        `sealed`: a referee payload was sealed by the daemon (railbird.core.refauth): its
        `token_ok` is the token check's outcome."""
        self.counters["received"] += 1
        try:
            # the shared codec's decision, by the host's shortcut for event batches
            kind, venue, table, node, msg = fastcodec.decode_message(topic, payload)
        except codec.ProtocolError as e:
            return self._reject(e.code, e.reason)
        try:
            if table is None:  # the codec gives a table for every host input kind
                self.counters["ignored"] += 1
                return (Status.IGNORED, f"{kind} is not host input", [])
            if kind == "referee":
                return self._referee(venue, table, msg, Source.MQTT, sealed, rx)
            if kind not in NODE_KINDS_IN or node is None:
                self.counters["ignored"] += 1
                return (Status.IGNORED, f"{kind} is not host input", [])
            t = self.table(venue, table)
            home = self.node_table.get(node)
            if home is not None and home != table:
                # a node's login may write under any table (the ACL cannot know which is
                # its own): it counts only on the table whose `nodes` lists it
                raise Reject(
                    "wrong table",
                    f"wrong table: node {node} reports for {venue}/{home}, not {venue}/{table}",
                )
            if t.nodes and node not in t.nodes:
                raise Reject("unknown node", f"unknown node: {node} on {venue}/{table}")
            self._boot(node, msg["boot"])
            if kind == "events":
                return self._events(t, node, msg, rx)
            if kind == "sync_result":
                if not self.clocks.add_sync(node, msg["boot"], msg):
                    raise Reject("bad sync", f"bad sync: impossible timestamps id {msg['id']}")
                self.counters["sync_samples"] += 1
                return (Status.OK, None, [])
            # birth / status
            if kind == "status" and rx is not None and msg.get("uptime_us") is not None:
                # node time at publish: an arrival bound for an unsynced clock model
                clock = self.clocks.get(node, msg["boot"])
                if not clock.synced:
                    clock.observe_arrival(msg["uptime_us"], rx, stamp=False)
            self.node_status[(venue, table, node)] = msg
            records: list[Record] = [NodeRecord(venue=venue, table=table, node=node, status=msg)]
            if kind == "status":
                self._status_mark(t, node, msg, rx, records)
            else:
                t.mark(node)
            return (Status.OK, None, records)
        except Reject as e:
            return self._reject(e.code, e.reason)

    def _boot(self, node: str, boot: int) -> None:
        """(node, boot) is active: it becomes the node's most recent boot; the least
        recently active beyond BOOTS_KEPT is forgotten everywhere."""
        boots = self.boots.get(node)
        if boots and next(reversed(boots)) == boot:
            return  # already the most recent (the usual case)
        if boots is None:
            boots = self.boots[node] = {}
        elif boot in boots:
            del boots[boot]  # re-inserted last: dicts keep insertion order
        boots[boot] = None
        if len(boots) > BOOTS_KEPT:
            old = next(iter(boots))
            del boots[old]
            self.clocks.forget(node, old)
            for t in self.tables.values():
                t.forget(node, old)

    # -- per-node watermarks -----------------------------------------------------------
    @staticmethod
    def _hold_record(
        t: Table, node: str, m: NodeMark, state: HoldState, at: int | None, was: str | None = None
    ) -> HoldRecord:
        """The one place a hold record is made: the node's hold is now `state` (its
        reason and known time from `m`; `was`: the hold a `live` node left)."""
        return HoldRecord(
            venue=t.venue,
            table=t.table,
            node=node,
            state=state,
            known=m.known,
            at=at,
            reason=None if state == HoldState.LIVE else m.reason,
            was=was,
        )

    def _hold(
        self,
        t: Table,
        node: str,
        m: NodeMark,
        now: int | None,
        reason: HoldReason,
        records: list[Record],
    ) -> None:
        if now is None or self.cfg.max_hold_us <= 0:
            return
        if m.since is not None and not m.gone:
            m.reason = reason if reason != HoldReason.RECONNECT else m.reason
            return
        m.since, m.reason, m.gone = now, reason, False
        self.counters["holds"] += 1
        records.append(self._hold_record(t, node, m, HoldState.HELD, now))

    def _unhold(
        self, t: Table, node: str, m: NodeMark, now: int | None, records: list[Record]
    ) -> None:
        if m.since is None:
            return
        was = HoldState.GONE if m.gone else HoldState.HELD
        m.since, m.reason, m.gone = None, None, False
        records.append(self._hold_record(t, node, m, HoldState.LIVE, now, was=was))

    def _status_mark(
        self, t: Table, node: str, msg: JSON, rx: int | None, records: list[Record]
    ) -> None:
        m = t.mark(node)
        boot = msg["boot"]
        if msg["state"] == "offline":
            # the last will (or its retained copy): the node's events since `known` may
            # still come; a will of an older boot than the node's latest status is stale
            if m.boot is None or boot >= m.boot:
                self._hold(t, node, m, rx, HoldReason.OFFLINE, records)
            return
        key = (boot, msg.get("uptime_us") or 0)
        if m.status_key is not None and key <= m.status_key:
            return  # a retained copy re-delivered (host resubscribe): no news
        new_conn = m.boot is not None and boot != m.boot
        rc = (msg.get("counters") or {}).get("reconnects")
        if rc is not None and m.reconnects is not None and rc > m.reconnects:
            new_conn = True
        m.status_key, m.boot, m.reconnects = key, boot, rc
        buffered = (msg.get("queue") or 0) + (msg.get("spill") or 0)
        if buffered == 0:
            # nothing buffered at publish: every event before uptime_us is in
            when = self.clocks.get(node, boot).to_table(msg["uptime_us"], rx)
            if rx is not None and when > rx:
                when = rx  # published before it arrived, whatever a broken stamp says
            if m.known is None or when > m.known:
                m.known = when
            self._unhold(t, node, m, rx, records)
        elif new_conn or m.holding:
            # (re)connected with a backlog: hold until it is in
            self._hold(t, node, m, rx, HoldReason.BACKLOG, records)

    def cross_window(self, t: Table) -> int:
        """The reorder window for the nodes of `t` that send watermarks: how long after a
        time such a node, silent since, may still send an event for it (a drop goes out when
        its beam clears, then the batch linger and the network) plus how far two nodes' clock
        models may disagree (the measured uncertainty of each, railbird.core.clockmodel).
        At least the table's floor (`_floor`), never more than the configured window."""
        worst = 0
        for node, m in t.marks.items():
            if m.wm is not None and m.wm_boot is not None:  # a wm is of its wm_boot
                u = self.clocks.get(node, m.wm_boot).uncertainty_us() or 0
                if u > worst:
                    worst = u
        window: int = self.cfg.window_us
        return min(window, _floor(t) + 2 * worst)

    def release_window(self, t: Table) -> int:
        """How long after an event the table's release point passes it at the latest when no
        other input comes (railbird.daemon.ticks): the largest window of its nodes."""
        marks = t.marks
        if marks and len(marks) >= len(t.nodes) and all(m.wm is not None for m in marks.values()):
            return self.cross_window(t)
        window: int = self.cfg.window_us
        return window

    def _point(self, t: Table, base: int) -> int:
        """The release point at time `base` (the largest table time seen, or a tick's now)
        before holds: the earliest over the table's nodes of what each has shown complete:
        for a node that sends watermarks its own (or base - cross_window, should it have said
        nothing since), for any other base - window. With one node that sends watermarks
        that is its watermark: no reorder window at all."""
        window: int = self.cfg.window_us
        if not t.marks:
            return base - window
        # a configured node not heard from yet may still send anything: the window for it
        point = base - window if len(t.marks) < len(t.nodes) else None
        xw: int | None = None
        least = base - min(window, _floor(t))  # base - xw is never above this
        for m in t.marks.values():
            if m.wm is None:
                b = base - window
            elif m.wm >= least:
                b = m.wm  # no need to size the window (the usual case on a live batch)
            else:
                if xw is None:
                    xw = self.cross_window(t)
                b = max(m.wm, base - xw)
            if point is None or b < point:
                point = b
        assert point is not None  # t.marks is not empty
        return point

    def _upto(
        self, t: Table, base: int | None, now: int | None, records: list[Record]
    ) -> int | None:
        """The table's release point at `base` (`_point`), capped at known - window of every
        held node (None: a held node with no known time holds everything). Expires old
        holds."""
        cand = None if base is None else self._point(t, base)
        held = [node for node, m in t.marks.items() if m.holding]
        for node in sorted(held) if len(held) > 1 else held:
            m = t.marks[node]
            assert m.since is not None  # holding
            if now is not None and now - m.since >= self.cfg.max_hold_us:
                m.gone = True
                self.counters["holds_expired"] += 1
                t.assembler.warn(
                    f"gone: node {node} ({m.reason}) held the table "
                    f"{(now - m.since) / 1e6:.0f} s (max_hold_ms); the table "
                    "moved on, its events before now may arrive late"
                )
                records.append(self._hold_record(t, node, m, HoldState.GONE, now))
                continue
            if m.known is None:
                return None
            # a node's stream is in order only within the window (a drop is sent when the
            # beam clears, after rail hits stamped later): its newest time minus the window
            b = m.known - self.cfg.window_us
            if cand is None or b < cand:
                cand = b
        return cand

    def on_reconnect(self, rx: int) -> list[Record]:
        """The host reconnected to the broker after losing it (journalled by the daemon):
        the nodes lost it too, most likely, and their backlogs are still to come. Every
        node that has reported holds its table until it shows it is caught up."""
        self.counters["reconnects"] += 1
        records: list[Record] = []
        for key in sorted(self.tables):
            t = self.tables[key]
            for node in sorted(t.marks):
                m = t.marks[node]
                if m.since is None:
                    self._hold(t, node, m, rx, HoldReason.RECONNECT, records)
        return records

    def _events(self, t: Table, node: str, msg: JSON, rx: int | None) -> Outcome:
        boot = msg["boot"]
        clock = self.clocks.get(node, boot)
        evs = msg["events"]
        if not clock.synced:
            # the batch's newest event gives its tightest bound (see clockmodel.py); with no
            # arrival time there is no bound
            if rx is not None:
                clock.observe_arrival(max(e["t"] for e in evs), rx)
            if (node, boot) not in t.unsynced_warned:
                t.unsynced_warned.add((node, boot))
                t.assembler.warn(
                    f"unsynced: node {node} boot {boot} has no time sync yet; "
                    "its times are estimated from arrival"
                )
        records: list[Record] = []
        fresh = conflicts = quarantined = unknown = 0
        m = t.mark(node)
        newest: int | None = None
        # every event passes this loop: names bound once (issue 16, item 5)
        counters = self.counters
        # counted once after the loop, unless "events" is not a counter yet (its place among
        # the counters, which snapshots keep in order, is then the first fresh event's)
        defer = "events" in counters
        push = t.timeline.push
        synced = clock.synced
        ts = [e["t"] for e in evs]
        # each event's time on the table, and the latest plausible one (None: no bound)
        tts, limits = clock.to_table_many(ts, rx), clock.latest_many(ts, rx)
        for e, et, limit in zip(evs, tts, limits, strict=True):
            kind = e["kind"]
            if kind not in EVENT_KINDS:  # counted and skipped; the rest is kept
                unknown += 1
                continue
            t_node = e["t"]
            ev = Event(
                t=et,
                node=node,
                boot=boot,
                seq=e["seq"],
                kind=kind,
                pocket=e.get("pocket"),
                rail=e.get("rail"),
                amp=e.get("amp"),
                dur=e.get("dur"),
                n=e.get("n"),
                t_node=t_node,
                synced=synced,
                ball=e.get("ball"),
                conf=e.get("conf"),
            )
            odd = limit is not None and et > limit  # a broken stamp, not an event time
            if not odd and (newest is None or et > newest):
                newest = et
            st = push(ev, odd)
            if st == "ok":
                fresh += 1
                if not defer:
                    counters["events"] += 1
                continue
            if st == "duplicate":
                counters["duplicate"] += 1
                continue
            if st == "conflict":
                conflicts += 1
                self._conflict(t, ev, records)
                continue
            if st == "quarantined":  # kept in `quarantined`, not an event of the table
                assert rx is not None and limit is not None  # only an arrival bounds a time
                quarantined += 1
                self._quarantine(t, ev, rx, limit, records)
                continue
            fresh += 1
            if not defer:
                counters["events"] += 1
            if st == "late":
                counters["late"] += 1
                records.append(LateRecord(venue=t.venue, table=t.table, event=ev))
                t.assembler.warn(
                    f"late: {ev.kind} event {node}/{boot}/{ev.seq} arrived after "
                    "the reorder window; journalled, not in the shot facts"
                )
            elif st == "reordered":
                counters["reordered"] += 1
        if defer and fresh:
            counters["events"] += fresh
        # a node sends its events in order: all of them up to its newest are in
        if newest is not None and (m.known is None or newest > m.known):
            m.known = newest
        if (
            m.since is not None
            and newest is not None
            and clock.synced
            and rx is not None
            and rx - newest <= self.cfg.window_us
        ):
            self._unhold(t, node, m, rx, records)  # a live event: the node is caught up
        self._watermark(t, node, boot, m, clock, msg.get("wm"), rx)
        tl = t.timeline
        upto = self._upto(t, tl.max_seen, rx, records)
        self._advance(t, [] if upto is None else tl.release(upto), None, records)
        self._expire(t, upto, records)
        if conflicts:
            reason = f"{conflicts} event(s) reuse a (node, boot, seq) with other content"
            return (Status.CONFLICT if fresh == 0 else Status.OK, reason, records)
        if quarantined:
            reason = f"quarantined: {quarantined} event(s) stamped far beyond their arrival"
            return (Status.QUARANTINED if fresh == 0 else Status.OK, reason, records)
        if unknown:
            self.counters["unknown_kind_events"] += unknown
            self.unknown_kinds[node] += unknown
            if fresh == 0:
                return (Status.OK, f"{unknown} event(s) of a kind this host does not know", records)
        if fresh == 0:
            return (Status.DUPLICATE, None, records)
        return (Status.OK, None, records)

    def _watermark(
        self,
        t: Table,
        node: str,
        boot: int,
        m: NodeMark,
        clock: BootClock,
        wm: int | None,
        rx: int | None,
    ) -> None:
        """A batch's `wm` (node µs: every event of the boot before it has been sent) as the
        node's table-time watermark. Only from a synced clock model (a provisional mapping
        may still move back), less the model's uncertainty (a later sample may move the
        node's next events back by that much), never past the batch's arrival, and never
        lower than one already taken (the spec: a lower one is ignored). A batch of another
        boot than the last starts afresh: its wm, or none (old firmware, or unsynced)."""
        if m.wm_boot != boot:
            m.wm_boot, m.wm = boot, None
        if wm is None or not clock.synced:
            return
        w = clock.to_table(wm, rx) - 1
        if m.wm is not None and (w if rx is None else min(w, rx)) <= m.wm:
            return  # no higher than the one taken, before the uncertainty comes off
        w -= clock.uncertainty_us() or 0
        if rx is not None and w > rx:
            w = rx
        if m.wm is None or w > m.wm:
            m.wm = w

    def _quarantine(self, t: Table, ev: Event, rx: int, limit: int, records: list[Record]) -> None:
        """An event whose table time lies beyond its arrival by more than the clock model
        can be wrong (clockmodel `latest`): a broken stamp. Kept (journalled in
        `quarantined`), counted, warned once per boot; never in the timeline, whose
        watermark it would drag into the future (the table's later events late, itself
        pending for ever, referee facts held for a shot that never ends)."""
        self.counters["quarantined"] += 1
        ahead = ev.t - rx
        records.append(
            QuarantinedRecord(
                venue=t.venue,
                table=t.table,
                event=ev,
                rx=rx,
                reason=f"table time {ahead} µs ahead of its arrival "
                f"(plausible: at most {limit - rx} µs)",
            )
        )
        if (ev.node, ev.boot) not in t.quarantine_warned:
            t.quarantine_warned.add((ev.node, ev.boot))
            t.assembler.warn(
                f"quarantined: {ev.kind} event {ev.node}/{ev.boot}/{ev.seq} is stamped "
                f"{ahead / 1e6:.3f} s ahead of its arrival (a broken node clock?); "
                "journalled, not in the shot facts"
            )

    def _conflict(self, t: Table, ev: Event, records: list[Record]) -> None:
        """An event numbered like one already seen but saying something else: kept (the
        record is journalled in `conflicts`), counted, warned once per boot; not scored,
        since its time is on another boot's clock."""
        self.counters["conflicts"] += 1
        records.append(ConflictRecord(venue=t.venue, table=t.table, event=ev))
        if (ev.node, ev.boot) not in t.conflicted:
            t.conflicted.add((ev.node, ev.boot))
            t.assembler.warn(
                f"conflict: node {ev.node} boot {ev.boot} seq {ev.seq} differs from the event "
                "seen with that number (boot counter reused?); kept, not in the shot facts"
            )

    def _advance(
        self, t: Table, released: list[Event], now: int | None, records: list[Record]
    ) -> None:
        if released:
            venue, table, pos = t.venue, t.table, t.pos
            feed, inplay_of = t.assembler.feed, t.assembler.inplay
            append = records.append
            for ev in released:
                pos += 1
                t.pos = pos
                append(EventRecord(venue=venue, table=table, event=ev, pos=pos))
                closed = feed(ev)
                if closed:
                    for shot in closed:
                        self._shot(t, shot, records, ev.t)
                if t.clock is not None and ev.kind in ACTIVITY:
                    self._clock(t, t.clock.activity(ev.t, ev.kind == "strike"), ev.t, records)
                if ev.kind in INPLAY_KINDS:  # no other kind changes the in-play view
                    inplay = inplay_of(ev)
                    if inplay is not None:
                        # provisional: the pocketed balls of the shot in play, at once (the
                        # ruling follows with the shot record when the shot closes)
                        view = cast(JSON, inplay)  # a TypedDict, as the Shot in _shot
                        append(InplayRecord(venue=venue, table=table, inplay=view))
        if now is not None:
            for shot in t.assembler.advance(now):
                self._shot(t, shot, records, now)

    def sensor_health(self, t: Table) -> list[health.ChannelHealth]:
        """The health of the table's sensor channels from its last shots (core/health.py):
        as `health.channel_health(recent, health.present(recent, t.sensors))` of the last
        HEALTH_SHOTS shots, kept up as they close rather than scanned again."""
        return t.activity().judge(t.sensors)

    def sensor_report(self, venue: str, table: str) -> health.Report | None:
        """The table's sensor health as its owner is shown it (None: no such table); a
        function of its kept shots, so a replay or a restart gives the same."""
        t = self.tables.get((venue, table))
        return None if t is None else health.report(self.sensor_health(t))

    def _expire(self, t: Table, upto: int | None, records: list[Record]) -> None:
        """Every event up to `upto` is released: a count whose deadline has passed with no
        activity has run out (the time foul is proposed, core/shotclock.py)."""
        if t.clock is None or upto is None:
            return
        clock = t.clock.expire(upto)
        if clock is not t.clock:
            s = clock.settings
            who = self._player_name(t, clock.player)
            text = f"Shot clock: time ran out for {who}; foul {s.foul} proposed to the referee"
            ann = {"text": text, "rule": "shot clock", "level": "info"}
            self._clock(t, clock, upto, records, [ann])

    def _player_name(self, t: Table, player: int | None) -> str:
        m = t.game.match or {}
        players = m.get("players") or []
        return str(players[player]) if player is not None and player < len(players) else "?"

    def _clock(
        self,
        t: Table,
        clock: ShotClock,
        at: int,
        records: list[Record],
        announcements: list[JSON] | None = None,
        source: Origin = Origin.SENSED,
    ) -> None:
        """The clock changed without the game: the game's state with the new clock, as a
        state record of cause `shot_clock` (the displays' one feed)."""
        if clock == t.clock:
            return
        t.clock = clock
        snap = t.game.snapshot()
        state = t.game.state()
        game = t.game.game
        if snap is None or state is None or game is None:
            return
        records.append(
            StateRecord(
                venue=t.venue,
                table=t.table,
                game=game,
                state=dict(state, shot_clock=clock.view(at)),
                fen=snap["fen"],
                announcements=announcements or [],
                cause="shot_clock",
                source=source,
            )
        )

    def _shot(self, t: Table, closed: Shot, records: list[Record], at: int | None) -> None:
        # the assembler's Shot is the JSON dict the records, the journal and the rules
        # carry; to mypy a TypedDict is no dict[str, Any], so the two types meet here, once
        shot = cast(JSON, closed)
        self.counters["shots"] += 1
        t.keep_shot(shot)
        # a channel silent through many shots is said in every shot while it lasts
        # (core/health.py): what it changes in the facts, for the referee and the owner
        said = health.warnings(t.activity().suspects(t.sensors))
        if said:
            shot["warnings"] = [*shot["warnings"], *said]
        records.append(ShotRecord(venue=t.venue, table=t.table, shot=shot))
        facts, t.pending_facts = t.pending_facts, {}
        if t.game.available:
            inp = shot_input(shot, self.cfg.lip_policy, t.game.state())
            if facts:
                # The referee's facts for this shot: one shot, ruled once with them. If the
                # rules refuse the combination, the facts are reported refused and the
                # sensed shot is ruled alone (the referee can still correct it).
                merged = with_referee_facts(inp, facts)
                ok, res = t.game.feed(merged)
                if ok:
                    self._game_result(
                        t,
                        ok,
                        res,
                        merged,
                        Origin.SENSED,
                        records,
                        referee_facts=sorted(facts),
                        at=shot["end"] if at is None else at,
                        shot_end=shot["end"],
                    )
                    return
                self.counters["referee_facts_refused"] += 1
                records.append(
                    RulesErrorRecord(
                        venue=t.venue,
                        table=t.table,
                        input=merged,
                        error=f"referee facts refused: {res['error']}",
                        source=Origin.REFEREE,
                    )
                )
            ok, res = t.game.feed(inp)
            end = shot["end"]
            self._game_result(
                t, ok, res, inp, Origin.SENSED, records, at=end if at is None else at, shot_end=end
            )

    def _game_result(
        self,
        t: Table,
        ok: bool,
        res: JSON,
        inp: JSON,
        source: Origin,
        records: list[Record],
        referee_facts: list[str] | None = None,
        at: int | None = None,
        shot_end: int | None = None,
    ) -> None:
        if ok:
            state = res["state"]
            if inp.get("type") == "match":
                t.clock = clock_for(t.game.match)
            if t.clock is not None and isinstance(state, dict) and at is not None:
                # a sensed shot's count is backdated to its last activity; a referee's shot
                # (a time foul accepted) or another input's starts when it came
                sensed = shot_end is not None
                t.clock = next_turn(
                    t.clock,
                    state,
                    shot=sensed or inp.get("type") == "shot",
                    at=shot_end if shot_end is not None else at,
                    announcements=res["announcements"],
                )
                state = dict(state, shot_clock=t.clock.view(at))
            self.counters["states"] += 1
            game = t.game.game
            # a game that rules has a match, and a match a known game (rules.engine.new_match)
            assert game is not None
            records.append(
                StateRecord(
                    venue=t.venue,
                    table=t.table,
                    game=game,
                    state=state,
                    fen=res["fen"],
                    announcements=res["announcements"],
                    cause=inp.get("type"),
                    source=source,
                    referee_facts=referee_facts or None,
                )
            )
        else:
            self.counters["rules_refused"] += 1
            records.append(
                RulesErrorRecord(
                    venue=t.venue, table=t.table, input=inp, error=res["error"], source=source
                )
            )

    # -- referee input ---------------------------------------------------------------------
    def _referee(
        self,
        venue: str,
        table: str,
        msg: JSON,
        source: Source,
        sealed: bool = False,
        rx: int | None = None,
    ) -> Outcome:
        t = self.table(venue, table)
        if source == Source.MQTT and not authorized(msg, self.cfg.referee_token, sealed):
            raise Reject("unauthorized", "unauthorized: referee token missing or wrong")
        rid = msg.get("id")
        rev = msg.get("rev")
        if rev is not None:
            # checked before the id is taken: the same input sent again is stale again, and
            # nothing of it is kept (core/revision.py)
            now = t.game.revision()
            if rev != now:
                return self._stale(t, msg, rid, now, source)
        if rid is not None:
            if rid in t.referee_id_set:
                self.counters["referee_duplicate"] += 1
                return (Status.DUPLICATE, f"referee input {rid} seen", [])
            t.referee_ids.append(rid)
            t.referee_id_set.add(rid)
            if len(t.referee_ids) > REFEREE_IDS_KEPT:
                t.referee_id_set.discard(t.referee_ids.popleft())
        inp = msg["input"]
        self.counters["referee"] += 1
        if inp.get("type") == "clock":
            return self._clock_input(t, msg, rid, inp, source, rx)
        facts = referee_facts(inp)
        if facts and t.game.available and t.shot_in_play():
            return self._pending(t, msg, rid, inp, facts, source)
        ok, res = t.game.feed(inp)
        records: list[Record] = [
            RefereeRecord(
                venue=venue,
                table=table,
                id=rid,
                by=msg.get("by"),
                input=inp,
                ok=ok,
                error=None if ok else res["error"],
                source=source,
            )
        ]
        self._game_result(t, ok, res, inp, Origin.REFEREE, records, at=rx)
        if not ok:
            self.counters["referee_refused"] += 1
            return (Status.REFUSED, res["error"], records)
        return (Status.OK, None, records)

    def _clock_input(
        self, t: Table, msg: JSON, rid: str | None, inp: JSON, source: Source, rx: int | None
    ) -> Outcome:
        """The referee's `clock` input (protocol/REFEREE.md §9b): hold, resume, restart,
        adjust, extension, placed, dismiss, at the input's receive time."""
        error = None
        clock = t.clock
        try:
            extra = set(inp) - {"type", "action", "seconds", "t_us", "source", "comment"}
            if extra:
                raise ClockError(f"unknown field(s) for clock: {', '.join(sorted(extra))}")
            if clock is None:
                raise ClockError("this match has no shot clock")
            if rx is None:
                raise ClockError("a clock input needs its receive time")
            try:
                action = ClockAction(str(inp.get("action")))
            except ValueError:
                names = ", ".join(a.value for a in ClockAction)
                raise ClockError(f"clock action must be one of {names}") from None
            seconds = inp.get("seconds")
            if action == ClockAction.ADJUST and (
                type(seconds) is not int or not 0 <= seconds <= 600
            ):
                raise ClockError("adjust needs seconds, an integer from 0 to 600")
            clock = clock.act(action, rx, seconds if type(seconds) is int else None)
        except ClockError as e:
            error = str(e)
        records: list[Record] = [
            RefereeRecord(
                venue=t.venue,
                table=t.table,
                id=rid,
                by=msg.get("by"),
                input=inp,
                ok=error is None,
                error=error,
                source=source,
            )
        ]
        if error is not None:
            self.counters["referee_refused"] += 1
            return (Status.REFUSED, error, records)
        assert clock is not None and rx is not None
        self._clock(t, clock, rx, records, source=Origin.REFEREE)
        return (Status.OK, None, records)

    def _stale(
        self, t: Table, msg: JSON, rid: str | None, now: str | None, source: Source
    ) -> Outcome:
        """Referee input made against a revision that is not the table's now: refused,
        with where the table is now."""
        self.counters["referee_stale"] += 1
        snap = t.game.snapshot()
        reason = stale_reason(snap["state"] if snap else None)
        rec = RefereeRecord(
            venue=t.venue,
            table=t.table,
            id=rid,
            by=msg.get("by"),
            input=msg["input"],
            ok=False,
            error=reason,
            source=source,
            rev=now,
        )
        return (Status.STALE, reason, [rec])

    def _pending(
        self, t: Table, msg: JSON, rid: str | None, inp: JSON, facts: JSON, source: Source
    ) -> Outcome:
        """A `confirm` with shot facts while a shot is in play: the facts are for that
        shot. They are held and ruled with it when it closes (one shot, not two)."""
        bad = t.game.check_facts(facts)
        rec = RefereeRecord(
            venue=t.venue,
            table=t.table,
            id=rid,
            by=msg.get("by"),
            input=inp,
            ok=bad is None,
            error=bad,
            source=source,
            pending=bad is None,
        )
        if bad is not None:
            self.counters["referee_refused"] += 1
            return (Status.REFUSED, bad, [rec])
        t.pending_facts.update(copy.deepcopy(facts))
        self.counters["referee_pending"] += 1
        snap = t.game.snapshot() or {}
        pending = PendingRecord(
            venue=t.venue,
            table=t.table,
            facts=sorted(t.pending_facts),
            state=snap.get("state"),
            fen=snap.get("fen"),
        )
        return (Status.PENDING, None, [rec, pending])

    def on_referee(
        self,
        venue: str,
        table: str,
        msg: JSON,
        source: Source = Source.LOCAL,
        rx: int | None = None,
    ) -> Outcome:
        """In-process referee input: msg is a `referee` message body ({"input": ...});
        `rx` its receive time (host time; the shot clock's inputs need it)."""
        self.counters["received"] += 1
        try:
            if not isinstance(msg, dict) or not isinstance(msg.get("input"), dict):
                raise Reject("bad value", "bad value: input must be an object")
            return self._referee(venue, table, msg, source, rx=rx)
        except Reject as e:
            return self._reject(e.code, e.reason)

    # -- time ------------------------------------------------------------------------------
    def tick(self, now: int, tables: Iterable[tuple[str, str]] | None = None) -> list[Record]:
        """Host time `now` (table time); release what the window allows and close shots
        that have been quiet long enough. Returns the records (empty: nothing changed)."""
        records: list[Record] = []
        for key in sorted(tables if tables is not None else self.tables):
            t = self.tables.get(key)
            if t is None:
                continue
            upto = self._upto(t, now, now, records)
            if upto is None:
                continue
            rel = t.timeline.release(upto)
            self._advance(t, rel, upto, records)
            self._expire(t, upto, records)
        return records

    def flush(self) -> list[Record]:
        """End of input (offline tools): release everything and close open shots."""
        records: list[Record] = []
        for key in sorted(self.tables):
            t = self.tables[key]
            self._advance(t, t.timeline.flush(), None, records)
            for shot in t.assembler.flush():
                self._shot(t, shot, records, None)
        return records


def shot_json(shot: JSON) -> str:
    """Canonical serialisation (sorted keys, compact): byte-stable across runs."""
    return json.dumps(shot, sort_keys=True, separators=(",", ":"))
