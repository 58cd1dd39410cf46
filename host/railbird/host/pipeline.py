"""The deterministic core of the daemon: messages in, journal records out.

`Pipeline` turns raw MQTT messages (topic, payload, receive time), local referee input and
time ticks into records (events released in timeline order, late events, shots, game states,
referee results, node status). It does no I/O: the daemon journals the input and the records
in one transaction and then calls the outputs; a restart replays the journalled inputs
through a fresh Pipeline and arrives at exactly the same state (DESIGN.md §5).
"""

from __future__ import annotations

import copy
import json
import logging
from collections import Counter, deque

from rbproto import codec

from ..clockmodel import ClockModels
from ..shots import ShotAssembler
from ..timeline import Event, Timeline
from .game import Game, referee_facts, shot_input, with_referee_facts

log = logging.getLogger("railbird.pipeline")

NODE_KINDS_IN = ("events", "sync_result", "birth", "status")
REFEREE_IDS_KEPT = 4096


class Reject(Exception):
    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Table:
    """Runtime state of one table."""

    def __init__(self, venue: str, table: str, tcfg, cfg):
        self.venue = venue
        self.table = table
        self.nodes = set(tcfg.nodes)
        self.timeline = Timeline(cfg.window_us)
        self.assembler = ShotAssembler(table, cfg.shots)
        self.game = Game(tcfg.match())
        self.referee_ids: deque = deque()
        self.referee_id_set: set = set()
        self.pos = 0
        self.unsynced_warned: set = set()
        self.shots: list = []  # kept for inspection (bounded)
        # Referee facts (a `confirm` with shot facts) entered while a shot was in play:
        # applied to that shot when it closes (protocol/REFEREE.md §3a, docs/host.md).
        self.pending_facts: dict = {}

    def shot_in_play(self) -> bool:
        """Activity on the table that is not yet a ruled shot: an open shot, or events
        still in the reorder window."""
        return self.assembler.open or self.timeline.pending > 0


class Pipeline:
    def __init__(self, cfg):
        self.cfg = cfg
        self.tables: dict = {}
        self.clocks = ClockModels()
        self.counters = Counter()
        self.rejected = Counter()
        self.node_status: dict = {}
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

    def _reject(self, code: str, reason: str):
        self.counters["rejected"] += 1
        self.rejected[code] += 1
        return ("rejected", reason, [])

    COUNTERS = ("received", "events", "duplicate", "rejected", "late", "reordered", "shots",
                "states", "sync_samples", "referee", "referee_refused", "rules_refused",
                "ignored", "referee_pending", "referee_facts_refused")

    def stats(self) -> dict:
        d = {k: 0 for k in self.COUNTERS}
        d.update(self.counters)
        d["rejected_by_reason"] = dict(self.rejected)
        d["pending"] = sum(t.timeline.pending for t in self.tables.values())
        return d

    # -- MQTT messages -------------------------------------------------------------------
    def on_message(self, topic: str, payload: bytes, rx: int | None):
        """-> (status, reason, records); status is ok, duplicate, rejected or ignored."""
        self.counters["received"] += 1
        try:
            kind, venue, table, node, msg = codec.decode_message(topic, payload)
        except codec.ProtocolError as e:
            return self._reject(e.code, e.reason)
        try:
            if kind == "referee":
                return self._referee(venue, table, msg, "mqtt")
            if kind not in NODE_KINDS_IN:
                self.counters["ignored"] += 1
                return ("ignored", f"{kind} is not host input", [])
            t = self.table(venue, table)
            if t.nodes and node not in t.nodes:
                raise Reject("unknown node", f"unknown node: {node} on {venue}/{table}")
            if kind == "events":
                return self._events(t, node, msg, rx)
            if kind == "sync_result":
                if not self.clocks.add_sync(node, msg["boot"], msg):
                    raise Reject("bad sync", f"bad sync: impossible timestamps id {msg['id']}")
                self.counters["sync_samples"] += 1
                return ("ok", None, [])
            # birth / status
            if kind == "status" and rx is not None and msg.get("uptime_us") is not None:
                # node time at publish: an arrival bound for an unsynced clock model
                clock = self.clocks.get(node, msg["boot"])
                if not clock.synced:
                    clock.observe_arrival(msg["uptime_us"], rx)
            self.node_status[(venue, table, node)] = msg
            return ("ok", None, [{"type": "node", "venue": venue, "table": table,
                                  "node": node, "status": msg}])
        except Reject as e:
            return self._reject(e.code, e.reason)

    def _events(self, t: Table, node: str, msg: dict, rx):
        boot = msg["boot"]
        clock = self.clocks.get(node, boot)
        evs = msg["events"]
        if not clock.synced:
            # the batch's newest event gives its tightest bound (see clockmodel.py)
            clock.observe_arrival(max(e["t"] for e in evs), rx)
            if (node, boot) not in t.unsynced_warned:
                t.unsynced_warned.add((node, boot))
                t.assembler.warn(f"unsynced: node {node} boot {boot} has no time sync yet; "
                                 "its times are estimated from arrival")
        records = []
        fresh = 0
        for e in evs:
            ev = Event(clock.to_table(e["t"], rx), node, boot, e["seq"], e["kind"], e.get("pocket"),
                       e.get("rail"), e.get("amp"), e.get("dur"), e.get("n"), e["t"],
                       clock.synced)
            st = t.timeline.push(ev)
            if st == "duplicate":
                self.counters["duplicate"] += 1
                continue
            fresh += 1
            self.counters["events"] += 1
            if st == "late":
                self.counters["late"] += 1
                records.append({"type": "late", "venue": t.venue, "table": t.table, "event": ev})
                t.assembler.warn(f"late: {ev.kind} event {node}/{boot}/{ev.seq} arrived after "
                                 "the reorder window; journalled, not in the shot facts")
            elif st == "reordered":
                self.counters["reordered"] += 1
        self._advance(t, t.timeline.release(), None, records)
        if fresh == 0:
            return ("duplicate", None, records)
        return ("ok", None, records)

    def _advance(self, t: Table, released: list, now, records: list) -> None:
        for ev in released:
            t.pos += 1
            records.append({"type": "event", "venue": t.venue, "table": t.table, "event": ev,
                            "pos": t.pos})
            for shot in t.assembler.feed(ev):
                self._shot(t, shot, records)
        if now is not None:
            for shot in t.assembler.advance(now):
                self._shot(t, shot, records)

    def _shot(self, t: Table, shot: dict, records: list) -> None:
        self.counters["shots"] += 1
        t.shots.append(shot)
        if len(t.shots) > 1000:
            del t.shots[0]
        records.append({"type": "shot", "venue": t.venue, "table": t.table, "shot": shot})
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
                    self._game_result(t, ok, res, merged, "sensed", records,
                                      referee_facts=sorted(facts))
                    return
                self.counters["referee_facts_refused"] += 1
                records.append({"type": "rules_error", "venue": t.venue, "table": t.table,
                                "input": merged, "error": f"referee facts refused: "
                                                         f"{res['error']}",
                                "source": "referee"})
            ok, res = t.game.feed(inp)
            self._game_result(t, ok, res, inp, "sensed", records)

    def _game_result(self, t, ok, res, inp, source, records, referee_facts=None):
        if ok:
            self.counters["states"] += 1
            rec = {"type": "state", "venue": t.venue, "table": t.table,
                   "game": t.game.game, "state": res["state"], "fen": res["fen"],
                   "announcements": res["announcements"], "cause": inp.get("type"),
                   "source": source}
            if referee_facts:
                rec["referee_facts"] = referee_facts
            records.append(rec)
        else:
            self.counters["rules_refused"] += 1
            records.append({"type": "rules_error", "venue": t.venue, "table": t.table,
                            "input": inp, "error": res["error"], "source": source})

    # -- referee input ---------------------------------------------------------------------
    def _referee(self, venue, table, msg, source):
        t = self.table(venue, table)
        token = self.cfg.referee_token
        if token and source == "mqtt" and msg.get("token") != token:
            raise Reject("unauthorized", "unauthorized: referee token missing or wrong")
        rid = msg.get("id")
        if rid is not None:
            if rid in t.referee_id_set:
                self.counters["referee_duplicate"] += 1
                return ("duplicate", f"referee input {rid} seen", [])
            t.referee_ids.append(rid)
            t.referee_id_set.add(rid)
            if len(t.referee_ids) > REFEREE_IDS_KEPT:
                t.referee_id_set.discard(t.referee_ids.popleft())
        inp = msg["input"]
        self.counters["referee"] += 1
        facts = referee_facts(inp)
        if facts and t.game.available and t.shot_in_play():
            return self._pending(t, msg, rid, inp, facts, source)
        ok, res = t.game.feed(inp)
        records = [{"type": "referee", "venue": venue, "table": table, "id": rid,
                    "by": msg.get("by"), "input": inp, "ok": ok,
                    "error": None if ok else res["error"], "source": source}]
        self._game_result(t, ok, res, inp, "referee", records)
        if not ok:
            self.counters["referee_refused"] += 1
            return ("refused", res["error"], records)
        return ("ok", None, records)

    def _pending(self, t: Table, msg, rid, inp, facts, source):
        """A `confirm` with shot facts while a shot is in play: the facts are for that
        shot. They are held and ruled with it when it closes (one shot, not two)."""
        bad = t.game.check_facts(facts)
        rec = {"type": "referee", "venue": t.venue, "table": t.table, "id": rid,
               "by": msg.get("by"), "input": inp, "ok": bad is None, "error": bad,
               "source": source}
        if bad is not None:
            self.counters["referee_refused"] += 1
            return ("refused", bad, [rec])
        t.pending_facts.update(copy.deepcopy(facts))
        self.counters["referee_pending"] += 1
        rec["pending"] = True
        snap = t.game.snapshot() or {}
        return ("pending", None, [rec, {"type": "pending", "venue": t.venue, "table": t.table,
                                        "facts": sorted(t.pending_facts),
                                        "state": snap.get("state"), "fen": snap.get("fen")}])

    def on_referee(self, venue: str, table: str, msg: dict, source: str = "local"):
        """In-process referee input: msg is a `referee` message body ({"input": ...})."""
        self.counters["received"] += 1
        try:
            if not isinstance(msg, dict) or not isinstance(msg.get("input"), dict):
                raise Reject("bad value", "bad value: input must be an object")
            return self._referee(venue, table, msg, source)
        except Reject as e:
            return self._reject(e.code, e.reason)

    # -- time ------------------------------------------------------------------------------
    def tick(self, now: int, tables=None) -> list:
        """Host time `now` (table time); release what the window allows and close shots
        that have been quiet long enough. Returns the records (empty: nothing changed)."""
        records = []
        upto = now - self.cfg.window_us
        for key in sorted(tables if tables is not None else self.tables):
            t = self.tables.get(key)
            if t is None:
                continue
            rel = t.timeline.release(upto)
            self._advance(t, rel, upto, records)
        return records

    def flush(self) -> list:
        """End of input (offline tools): release everything and close open shots."""
        records = []
        for key in sorted(self.tables):
            t = self.tables[key]
            self._advance(t, t.timeline.flush(), None, records)
            for shot in t.assembler.flush():
                self._shot(t, shot, records)
        return records


def shot_json(shot: dict) -> str:
    """Canonical serialisation (sorted keys, compact): byte-stable across runs."""
    return json.dumps(shot, sort_keys=True, separators=(",", ":"))
