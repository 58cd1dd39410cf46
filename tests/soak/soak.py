"""Soak harness: simulated nodes (the real firmware on simulated hardware), a private mosquitto
and `railbird run` as a subprocess, random play at realistic and burst rates, and chaos on a
schedule. `analyse()` checks the journal against what the nodes generated and returns the
figures that `make soak` prints.

Everything here is test code; it drives the product only through its public surfaces
(SimNode, PrivateBroker, the `railbird run` / `railbird replay` commands, the journal file).
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

from harness.hostproc import RailbirdRun
from rbnode.simnode import SimNode

VENUE = "club"
NODE_PW = "node-pw"
# table -> (game line for the config, nodes). t1 has two boards (multi-node merge).
TABLES = {
    "t1": ('game = "10-ball"\nplayers = ["Ann", "Bob"]\nrace_to = 50', ["t1-a", "t1-b"]),
    "t2": ('game = "14.1"\nplayers = ["Cy", "Di"]\ntarget = 500', ["t2-a"]),
    "t3": ('game = "9-ball"\nplayers = ["Ed", "Flo"]\nrace_to = 50', ["t3-a"]),
}
QUIET_MS = 1200

CONFIG = """
venue = "{venue}"
reorder_window_ms = 500
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
user = "railbird-host"
password = "host-secret"
[shots]
quiet_ms = {quiet}
lip_rest_ms = {quiet}
cue_before_ms = 1000
break_window_ms = 1000
"""


def log(msg: str) -> None:
    """Progress on the real stderr (pytest captures stdout; a long run must not look hung)."""
    sys.__stderr__.write(f"[soak {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.__stderr__.flush()


def now_us() -> int:
    return time.monotonic_ns() // 1000  # the host's table-time axis (same clock)


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Host(RailbirdRun):
    """`railbird run` with the soak's tables; counts its starts and SIGKILLs and samples its
    memory per incarnation."""

    def __init__(self, workdir: Path, port: int):
        conf = CONFIG.format(venue=VENUE, port=port, quiet=QUIET_MS)
        for t, (game, nodes) in TABLES.items():
            conf += f"[tables.{t}]\n{game}\nnodes = {json.dumps(nodes)}\n"
        super().__init__(workdir, conf, extra_args=["--log-level", "WARNING"])
        self.starts = 0
        self.kills = 0
        self.rss = []  # per incarnation: [(t, kB)]

    def start(self, timeout=60):
        self.starts += 1
        self.rss.append([])
        return super().start(timeout=timeout)

    def wait(self, cond, what, timeout=60):
        return super().wait(cond, what, timeout, poll=0.1)

    def sample_rss(self):
        if self.alive:
            kb = rss_kb(self.proc.pid)
            if kb:
                self.rss[-1].append((time.monotonic(), kb))

    def kill(self):
        super().kill()
        self.kills += 1

    def stop(self):
        super().stop(timeout=30)

    def log_tail(self, n=4000) -> str:
        return self.log(n)


class Node:
    """A SimNode with a lock (traffic vs. restarts), a scheduling cursor and sampled status."""

    def __init__(self, broker, table: str, node_id: str, state_dir: Path, seed: int):
        self.table = table
        self.id = node_id
        self.sn = SimNode(
            "127.0.0.1",
            broker.port,
            VENUE,
            table,
            node_id,
            NODE_PW,
            state_dir,
            seed=seed,
            speed=1.0,
            keepalive_s=5,
        )
        self.lock = threading.Lock()
        self.held = False  # no new traffic (a restart is being prepared)
        self.up = False
        self.cursor_us = 0  # simulated µs (this boot) up to which play is scheduled
        self.hw_queue = 0  # high-water marks, sampled
        self.hw_spill = 0
        self.boot_counters = {}  # boot -> last counters seen in that boot
        self.restarts = 0
        self.windows = Counter()

    def start(self):
        with self.lock:
            self.sn.start()
            self.up = True
            self.cursor_us = self.sn.now_us + 200_000

    def sample(self):
        with self.lock:
            if not self.up:
                return
            st = self.sn.status()
        self.hw_queue = max(self.hw_queue, st["queue"])
        self.hw_spill = max(self.hw_spill, st["spill"])
        self.boot_counters[st["boot"]] = dict(st["counters"])

    def restart(self, park: bool, reset_cause: str):
        """Hold traffic, let every scheduled edge happen (a new boot has new simulated
        hardware), optionally wait until the node is idle, then restart it."""
        self.held = True
        try:
            with self.lock:
                pass  # a window being scheduled right now finishes; no new one starts
            deadline = time.monotonic() + 60
            while self.sn.call(lambda: bool(self.sn.hw._edges or self.sn.hw._pending)):
                assert time.monotonic() < deadline, "scheduled play did not finish"
                time.sleep(0.05)
            time.sleep(0.2)
            if not park:
                # a power cut loses what is in RAM by design: only cut when nothing is queued
                self.sn.wait_idle(timeout=120)
            self.sample()
            with self.lock:
                self.up = False
                old = self.sn.boot
                # SimNode.restart() with the old boot's final counters read in between
                # (a park moves the ring to the spill and counts it)
                self.sn.stop(park=park)
                self.boot_counters[old] = dict(self.sn.node.c)
                self.sn.reset_cause = reset_cause
                self.sn.seed += 1000
                self.sn.start()
                self.up = True
                self.cursor_us = self.sn.now_us + 200_000
            self.restarts += 1
        finally:
            self.held = False


# -- play ----------------------------------------------------------------------------------
# (name, weight, seconds of play, drops, rails, cue probability, rest after in seconds)
WINDOWS = [
    ("shot", 70, 1.5, (0, 2), (2, 10), 0.15, (QUIET_MS / 1000 + 0.3, 4.0)),
    ("break", 20, 2.0, (0, 3), (25, 40), 0.05, (QUIET_MS / 1000 + 0.3, 3.0)),
    ("burst", 10, 5.0, (20, 30), (250, 320), 0.0, (1.0, 2.0)),
]
GAP_US = 100_000  # between windows: keeps the per-channel minimum gap across windows


def schedule_window(node: Node, rng: random.Random, kind: str | None = None) -> int:
    """Schedule one window of play on `node` starting at its cursor; returns events added."""
    if kind is None:
        kind = rng.choices([w[0] for w in WINDOWS], [w[1] for w in WINDOWS])[0]
    _, _, secs, drops, rails, cue_p, rest = next(w for w in WINDOWS if w[0] == kind)
    sn = node.sn
    with node.lock:
        if not node.up:
            return 0
        start_in = max(2000, node.cursor_us - sn.now_us)
        n0 = len(sn.truth)
        sn.random(
            secs,
            drops=rng.randint(*drops),
            rails=rng.randint(*rails),
            min_gap_us=60_000,
            start_in_us=start_in,
        )
        if rng.random() < cue_p:
            sn.cue(
                dur_us=rng.randint(20_000, 40_000),
                at_us=sn.now_us + start_in + int(secs * 1e6) + 50_000,
            )
        node.cursor_us = (
            sn.now_us + start_in + int(secs * 1e6) + int(rng.uniform(*rest) * 1e6) + GAP_US
        )
        node.windows[kind] += 1
        return len(sn.truth) - n0


class Traffic(threading.Thread):
    """Keeps every node's play scheduled ~2 s ahead, samples node status and host RSS."""

    def __init__(self, nodes: list, host: Host, seed: int):
        super().__init__(name="soak-traffic", daemon=True)
        self.nodes = nodes
        self.host = host
        self.rng = random.Random(seed)
        self.stop_evt = threading.Event()
        self.forced = {}  # node id -> window kind for its next window
        self.error = None
        self.scheduled = 0

    def run(self):
        last_sample = 0.0
        try:
            while not self.stop_evt.wait(0.1):
                for n in self.nodes:
                    if n.held or not n.up:
                        continue
                    if n.cursor_us - n.sn.now_us < 2_000_000:
                        self.scheduled += schedule_window(n, self.rng, self.forced.pop(n.id, None))
                if time.monotonic() - last_sample >= 0.5:
                    last_sample = time.monotonic()
                    for n in self.nodes:
                        n.sample()
                    self.host.sample_rss()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e
            log(f"traffic thread failed: {e!r}")


# -- analysis ------------------------------------------------------------------------------
def percentile(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def journal_events(path: Path):
    db = sqlite3.connect(path)
    try:
        events = db.execute(
            "SELECT tbl, node, boot, seq, t, t_node, kind, pocket, rail, amp,"
            " dur, late, input_id FROM events"
        ).fetchall()
        rx_of = dict(db.execute("SELECT id, rx FROM inputs"))
        # arrival of each event's first copy: the raw `events` messages in journal order
        first_rx = {}
        copies = Counter()
        status = Counter()
        for topic, payload, rx, st in db.execute(
            "SELECT topic, payload, rx, status FROM inputs WHERE source='mqtt' ORDER BY id"
        ):
            status[(topic.rsplit("/", 1)[-1] if topic else "?", st)] += 1
            if not topic or not topic.endswith("/events"):
                continue
            m = json.loads(payload)
            node = topic.split("/")[5]
            for e in m["events"]:
                k = (node, m["boot"], e["seq"])
                copies[k] += 1
                first_rx.setdefault(k, rx)
        shots = [json.loads(s) for (s,) in db.execute("SELECT shot FROM shots")]
        states = db.execute("SELECT tbl, COUNT(*) FROM states GROUP BY tbl").fetchall()
        return events, rx_of, first_rx, copies, status, shots, dict(states)
    finally:
        db.close()


def match_truth(nodes: list, events: list, tol_us=2000):
    """Every generated event is in the journal exactly once: per (node, boot, kind, name)
    the same count, and the node timestamps pairwise within tol_us."""
    got = defaultdict(list)
    keys = Counter()
    for _tbl, node, boot, seq, _t, t_node, kind, pocket, rail, *_ in events:
        keys[(node, boot, seq)] += 1
        got[(node, boot, kind, pocket or rail)].append(t_node)
    want = defaultdict(list)
    for n in nodes:
        for boot, kind, name, at, _v in n.sn.truth:
            want[(n.id, boot, kind, name)].append(at)
    missing, extra, off = [], [], []
    for k in set(want) | set(got):
        w, g = sorted(want.get(k, [])), sorted(got.get(k, []))
        if len(w) > len(g):
            missing.append((k, len(w) - len(g)))
        elif len(g) > len(w):
            extra.append((k, len(g) - len(w)))
        else:
            off += [(k, a, b) for a, b in zip(w, g, strict=True) if not 0 <= b - a <= tol_us]
    dup_keys = [k for k, c in keys.items() if c > 1]
    # seq continuity per (node, boot): 0..max without gaps
    seqs = defaultdict(set)
    for k in keys:
        seqs[k[:2]].add(k[2])
    gaps = {nb: (max(s) + 1 - len(s)) for nb, s in seqs.items() if max(s) + 1 != len(s)}
    return {
        "missing": missing,
        "extra": extra,
        "time_off": off[:20],
        "n_time_off": len(off),
        "dup_keys": dup_keys,
        "seq_gaps": gaps,
    }


def in_windows(t_us, windows):
    return any(a <= t_us <= b for a, b, *_ in windows)


def window_kind(t_us, windows):
    for a, b, kind in windows:
        if a <= t_us <= b:
            return kind
    return "none"


def analyse(
    nodes,
    host: Host,
    disruptions,
    replay_ok: bool,
    final_stats: dict,
    started: float,
    broker_restarts: int,
) -> dict:
    events, rx_of, first_rx, copies, status, shots, states = journal_events(host.journal)
    m = match_truth(nodes, events)
    generated = sum(len(n.sn.truth) for n in nodes)
    journalled = len(events)
    arrive, release, arrive_steady = [], [], []
    for _tbl, node, boot, seq, t, _t_node, _kind, _pocket, _rail, _amp, _dur, late, iid in events:
        fr = first_rx.get((node, boot, seq))
        if fr is not None:
            arrive.append(fr - t)
            if not in_windows(t, disruptions):
                arrive_steady.append(fr - t)
        if rx_of.get(iid) is not None and not late:
            release.append(rx_of[iid] - t)
    late = sum(1 for e in events if e[11])
    late_by = Counter()
    for e in events:
        if e[11]:
            late_by[(e[1], window_kind(e[4], disruptions))] += 1
    pocketed = sum(len(s.get("pocketed", [])) for s in shots)
    drops_ok = sum(1 for e in events if e[6] == "drop" and not e[11])

    def ms(x):
        return None if x is None else round(x / 1000, 1)

    node_rows = []
    for n in nodes:
        tot = Counter()
        for c in n.boot_counters.values():
            tot.update(c)
        node_rows.append(
            {
                "node": n.id,
                "table": n.table,
                "generated": len(n.sn.truth),
                "boots": sorted(n.boot_counters),
                "restarts": n.restarts,
                "queue_hw": n.hw_queue,
                "spill_hw": n.hw_spill,
                "spilled": tot["spilled"],
                "resent": tot["resent"],
                "reconnects": tot["reconnects"],
                "dropped_ram": tot["dropped_ram"],
                "dropped_spill": tot["dropped_spill"],
                "irq_overflow": tot["irq_overflow"],
                "lost_edges": tot["lost_edges"],
                "windows": dict(n.windows),
            }
        )
    rss_rows = []
    for i, samples in enumerate(host.rss):
        if samples:
            mins = round((samples[-1][0] - samples[0][0]) / 60, 1)
            rss_rows.append(
                {
                    "run": i + 1,
                    "minutes": mins,
                    "first_kb": samples[0][1],
                    "last_kb": samples[-1][1],
                    "max_kb": max(s[1] for s in samples),
                }
            )
    dup_msgs = sum(c for (kind, st), c in status.items() if kind == "events" and st == "duplicate")
    return {
        "minutes": round((time.monotonic() - started) / 60, 1),
        "generated": generated,
        "journalled": journalled,
        "lost": generated - journalled + sum(c for _, c in m["extra"]),
        "missing": m["missing"],
        "extra": m["extra"],
        "dup_keys": len(m["dup_keys"]),
        "time_off": m["n_time_off"],
        "time_off_examples": m["time_off"],
        "seq_gaps": m["seq_gaps"],
        "event_copies_received": sum(copies.values()),
        "duplicate_copies_dropped": sum(copies.values()) - len(copies),
        "duplicate_event_messages": dup_msgs,
        "inputs_by_status": {f"{k}/{s}": c for (k, s), c in sorted(status.items())},
        "late": late,
        "late_by_node_and_disruption": {f"{a} {b}": c for (a, b), c in sorted(late_by.items())},
        "shots": len(shots),
        "states": states,
        "pocketed_in_shots": pocketed,
        "drops_in_time": drops_ok,
        "host": {
            k: final_stats.get(k)
            for k in (
                "received",
                "events",
                "duplicate",
                "rejected",
                "late",
                "reordered",
                "shots",
                "states",
                "sync_samples",
                "replayed",
                "connects",
            )
        },
        "rejected_by_reason": final_stats.get("rejected_by_reason"),
        "latency_arrival_ms": {
            "p50": ms(percentile(arrive, 50)),
            "p99": ms(percentile(arrive, 99)),
            "max": ms(max(arrive) if arrive else None),
        },
        "latency_arrival_steady_ms": {
            "n": len(arrive_steady),
            "p50": ms(percentile(arrive_steady, 50)),
            "p99": ms(percentile(arrive_steady, 99)),
            "max": ms(max(arrive_steady) if arrive_steady else None),
        },
        "latency_release_ms": {
            "p50": ms(percentile(release, 50)),
            "p99": ms(percentile(release, 99)),
            "max": ms(max(release) if release else None),
        },
        "nodes": node_rows,
        "host_rss": rss_rows,
        "host_starts": host.starts,
        "host_kills": host.kills,
        "broker_restarts": broker_restarts,
        "replay_check": replay_ok,
    }


def format_figures(f: dict) -> str:
    L = []
    L.append(
        f"Soak: {f['minutes']} min, {len(f['nodes'])} nodes on "
        f"{len({n['table'] for n in f['nodes']})} tables, broker restarts survived "
        f"{f['broker_restarts']}, host SIGKILLs {f['host_kills']} (starts {f['host_starts']}),"
        f" node restarts {sum(n['restarts'] for n in f['nodes'])}"
    )
    L.append("")
    L.append("| figure | value |")
    L.append("|---|---|")
    rows = [
        ("events generated (SimNode.truth)", f["generated"]),
        ("events journalled (unique node, boot, seq)", f["journalled"]),
        ("lost (generated - journalled, must be 0)", f["lost"]),
        ("journalled twice / not generated", f"{f['dup_keys']} / {len(f['extra'])}"),
        ("event copies received by the host", f["event_copies_received"]),
        ("duplicate copies dropped (by node, boot, seq)", f["duplicate_copies_dropped"]),
        ("`events` messages that were wholly duplicate", f["duplicate_event_messages"]),
        ("late (after the reorder window; journalled, not in shots)", f["late"]),
        (
            "shots assembled / pockets in shots / in-time drops",
            f"{f['shots']} / {f['pocketed_in_shots']} / {f['drops_in_time']}",
        ),
        (
            "daemon: received / events / duplicate / rejected / late",
            " / ".join(
                str(f["host"].get(k))
                for k in ("received", "events", "duplicate", "rejected", "late")
            ),
        ),
        (
            "latency node event -> raw input journalled, p50 / p99 / max (ms)",
            " / ".join(str(f["latency_arrival_ms"][k]) for k in ("p50", "p99", "max")),
        ),
        (
            "  same, outside chaos windows, p50 / p99 / max (ms)",
            " / ".join(str(f["latency_arrival_steady_ms"][k]) for k in ("p50", "p99", "max")),
        ),
        (
            "latency node event -> released into the timeline (window 500 ms), "
            "p50 / p99 / max (ms)",
            " / ".join(str(f["latency_release_ms"][k]) for k in ("p50", "p99", "max")),
        ),
        ("`railbird replay --check`", "OK" if f["replay_check"] else "MISMATCH"),
    ]
    for k, v in rows:
        L.append(f"| {k} | {v} |")
    L.append("")
    L.append(
        "| node | table | boots | generated | queue hw | spill hw | spilled | resent |"
        " reconnects | dropped ram/spill | irq overflow | lost edges |"
    )
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in f["nodes"]:
        L.append(
            f"| {n['node']} | {n['table']} | {','.join(map(str, n['boots']))} | "
            f"{n['generated']} | {n['queue_hw']} | {n['spill_hw']} | {n['spilled']} | "
            f"{n['resent']} | {n['reconnects']} | {n['dropped_ram']}/{n['dropped_spill']} | "
            f"{n['irq_overflow']} | {n['lost_edges']} |"
        )
    L.append("")
    L.append("| host run | minutes | RSS first (MiB) | RSS last (MiB) | RSS max (MiB) |")
    L.append("|---|---|---|---|---|")
    for r in f["host_rss"]:
        L.append(
            f"| {r['run']} | {r['minutes']} | {r['first_kb'] / 1024:.1f} | "
            f"{r['last_kb'] / 1024:.1f} | {r['max_kb'] / 1024:.1f} |"
        )
    return "\n".join(L)
