"""The fleet as its nodes report it: the retained `birth` and `status` of every node (and
whatever arrives while watching), one row per node.

`Fleet` is fed MQTT messages (`on_message(topic, payload, retained)`, any thread) and
answers `rows()`, `get(table, node)` and `wait(predicate, timeout)`. A node's *last seen*:
a status that arrived while watching was seen at its arrival; a retained one is dated by
the node's own clock mapped to the host's (`uptime_us + sync.offset_us` is the host's
monotonic microseconds when it was sent, the clock `railbird run` answers time sync with),
which is right when `railbird nodes` runs on the host machine, and unknown ("?") before the
node's first sync or when the date is implausible; an offline node (its last will) says
"offline".
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from railbird.tableorder import pair_key
from rbproto import codec

# counters shown in the table (every counter is in --json)
SHOWN_COUNTERS = (
    ("events", "ev"),
    ("published", "pub"),
    ("dropped_ram", "drop"),
    ("dropped_spill", "dropsp"),
    ("reconnects", "rc"),
    ("jams", "jam"),
)


def now_us() -> int:
    """The host's clock for time sync (railbird.daemon.ingest answers with the same)."""
    return time.monotonic_ns() // 1000


@dataclass
class NodeState:
    venue: str
    table: str
    node: str
    birth: dict | None = None
    status: dict | None = None
    status_rx_us: int | None = None  # host clock at arrival of a status seen live
    status_retained: bool = True
    changes: int = 0  # messages taken (for waiters)
    updates: list = field(default_factory=list)  # every distinct status.update, in order

    @property
    def online(self) -> bool:
        return self.status is not None and self.status.get("state") == "online"

    @property
    def fw(self) -> str | None:
        if self.status is not None and self.status.get("fw"):
            return self.status["fw"]
        return self.birth["fw"] if self.birth else None

    @property
    def update(self) -> dict | None:
        return (self.status or {}).get("update")

    def last_seen_s(self, now: int | None = None) -> float | None:
        """Seconds since the node's latest status, or None when unknown."""
        st = self.status
        if st is None or st.get("state") != "online":
            return None
        now = now_us() if now is None else now
        if not self.status_retained and self.status_rx_us is not None:
            return max(0.0, (now - self.status_rx_us) / 1e6)
        sync = st.get("sync")
        if not sync or "uptime_us" not in st:
            return None
        age = (now - (st["uptime_us"] + sync["offset_us"])) / 1e6
        if -5 <= age <= 30 * 86400:  # else: another machine's clock, or none at all
            return max(0.0, age)
        return None

    def row(self, now: int | None = None) -> dict:
        st = self.status or {}
        seen = self.last_seen_s(now)
        return {
            "venue": self.venue,
            "table": self.table,
            "node": self.node,
            "state": st.get("state", "unknown"),
            "fw": self.fw,
            "pinmap": self.birth["pinmap"] if self.birth else None,
            "boot": st.get("boot", self.birth["boot"] if self.birth else None),
            "last_seen_s": None if seen is None else round(seen, 1),
            "rssi": st.get("rssi"),
            "counters": st.get("counters", {}),
            "update": self.update,
            "config_error": st.get("config_error"),
            # whether it obeys only commands the venue key signed (birth caps "signed"):
            # None until its birth is known
            "signed": None if self.birth is None else "signed" in (self.birth.get("caps") or ()),
            "net": st.get("net"),  # the last network change's outcome (SPEC.md `net`)
        }


class Fleet:
    def __init__(self, venue: str = "+"):
        self.venue = venue
        self.nodes: dict[tuple[str, str], NodeState] = {}  # (table, node) -> state
        self.rejected = 0
        # table -> its game state (the retained `state` feed): whether a match is in play
        self.states: dict[str, dict] = {}
        self._cv = threading.Condition()

    def topics(self) -> list[str]:
        base = f"{codec.ROOT}/{self.venue}/+/node/+"
        return [f"{base}/birth", f"{base}/status", f"{codec.ROOT}/{self.venue}/+/state"]

    def in_play(self, table: str) -> bool:
        """Whether the table's retained state shows a match begun and not over (the lag
        decided, no winner, not ended): a board restarting into a new set mid-rack would lose
        the shots of its outage window."""
        with self._cv:
            st = self.states.get(table)
        if not st or not st.get("game") or not st.get("players"):
            return False
        if st.get("match_winner") or st.get("ended"):
            return False
        return st.get("awaiting") != "lag"

    def on_message(self, topic: str, payload: bytes, retained: bool = False) -> None:
        try:
            kind, venue, table, node, msg = codec.decode_message(topic, payload)
        except codec.ProtocolError:
            with self._cv:
                self.rejected += 1
            return
        if kind == "state":
            with self._cv:
                self.states[table] = msg.get("state") or {}
                self._cv.notify_all()
            return
        if kind not in ("birth", "status"):
            return
        with self._cv:
            ns = self.nodes.get((table, node))
            if ns is None:
                ns = self.nodes[(table, node)] = NodeState(venue, table, node)
            if kind == "birth":
                ns.birth = msg
            else:
                ns.status = msg
                ns.status_retained = retained
                u = msg.get("update")
                if u and (not ns.updates or ns.updates[-1] != u):
                    ns.updates.append(u)
                ns.status_rx_us = now_us()
            ns.changes += 1
            self._cv.notify_all()

    def get(self, table: str, node: str) -> NodeState | None:
        with self._cv:
            return self.nodes.get((table, node))

    def tables(self) -> dict[str, list[str]]:
        with self._cv:
            out: dict[str, list[str]] = {}
            for table, node in sorted(self.nodes, key=pair_key):
                out.setdefault(table, []).append(node)
            return out

    def rows(self) -> list[dict]:
        now = now_us()
        with self._cv:
            return [self.nodes[k].row(now) for k in sorted(self.nodes, key=pair_key)]

    def wait(self, predicate, timeout: float) -> bool:
        """Wait until predicate(fleet) is true (checked at every message) -> whether it is."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(min(left, 0.5))
            return True


def counters_text(counters: dict) -> str:
    return " ".join(
        f"{short}={counters[name]}" for name, short in SHOWN_COUNTERS if name in counters
    )


def age_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f}s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h ago"
    return f"{seconds / 86400:.0f}d ago"


def update_text(u: dict | None) -> str:
    if not u:
        return "-"
    s = u.get("state", "?")
    if s == "downloading" and u.get("total"):
        s += f" {100 * u.get('bytes', 0) // u['total']}%"
    if u.get("error"):
        s += f" ({u['error']})"
    return s


def signed_text(signed: bool | None) -> str:
    """The COMMANDS column: a board without the venue key obeys any command the broker
    lets through; "?" until its birth message is known."""
    if signed is None:
        return "?"
    return "signed" if signed else "any"


def table_text(rows: list[dict]) -> str:
    """The fleet as an aligned text table."""
    head = (
        "TABLE",
        "NODE",
        "STATE",
        "FIRMWARE",
        "PIN MAP",
        "LAST SEEN",
        "RSSI",
        "COUNTERS",
        "COMMANDS",
        "NET",
        "UPDATE",
        "SENSORS",
    )
    lines = [head]
    for r in rows:
        state = r["state"]
        seen = "offline" if state == "offline" else age_text(r["last_seen_s"])
        lines.append(
            (
                r["table"],
                r["node"],
                state,
                r["fw"] or "?",
                r["pinmap"] or "?",
                seen,
                "-" if r["rssi"] is None else f"{r['rssi']} dBm",
                counters_text(r["counters"]) or "-",
                signed_text(r.get("signed")),
                (r.get("net") or {}).get("state", "-"),
                update_text(r["update"]),
                # the table's sensor health (railbird nodes reads it from the journal)
                r.get("sensors") or "-",
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )
