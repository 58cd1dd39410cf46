"""`python -m railbird.bench.scale` (`make bench-scale`): one host process against N tables.

For each N (default 50, 200, 1,000 and 2,000): a private mosquitto with the project's own
configuration (password file, ACL, persistence; one login per node, hashed as `railbird
setup` hashes them), `railbird run` as an installer runs it with the MQTT feeds (and Home
Assistant discovery) and the web scoreboard with its referee panel on, pinned to one CPU
core, and N simulated nodes, one MQTT connection each, speaking the node firmware's own MQTT
client (firmware/rbnode/mqtt.py) from a few load-generator processes on the other cores.

Each node behaves like the firmware on a table in play: birth and status (retained, the
status every 30 s), the four-timestamp time sync (three samples at connect, five more 5 s
apart in the warm-up, standing in for the quiet moments of hours of uptime, then every 60 s),
events held until its first sync result is out, events batched as the firmware does (sent
20 ms after the first is ready, so one event per batch mostly; a drop when its beam clears),
each batch with the node's watermark `wm`. The traffic model is the scale probe's (issue 16):
a shot every 15-25 s, a break every 7-11 shots (about every 3 minutes); an open shot is 3-10
rail hits and 0-2 drops over 0.8-4 s, a scratch now and then (the cue ball in the return
after its pocket's delay); a break 14-26 rail hits and 0-3 drops in 3 s: about 0.43 events/s
per table. A referee console answers what the rules wait for (the lag, options, calls,
confirmations) from the `state` feed, as a referee at the table would.

Measured per N, over a window after a warm-up:
- daemon CPU (utime + stime of `railbird run` from /proc, one core = 100 %) and per table,
  its RSS (and peak), the broker's CPU;
- kept up: node events sent against events the daemon journalled (read from its journal),
  sampled every 2 s; the backlog at the end of the window and its largest value;
- latency from a drop's publication by its node to: the journal (the input's row, written
  in the batch's transaction, `inputs.wall`), the timeline (the input that released it,
  `events.input_id`), the shot feed (the MQTT `shot` message that carries it, received by a
  display client), and the web stream (the first `/events/v/<venue>` event that shows it);
  beside the broker's own publish -> subscribe latency (the same node messages received
  by that display client). The shot feed is also measured from the shot's last event, which
  is where `quiet_ms` starts: that is the figure the issue bounds by quiet_ms + 250 ms;
- the summary: every table's retained `summary` and the venue index, checked against the
  shots after the load stops (pocketed today per table, the index's totals), and how long
  after a shot message its table's summary showed it.
Then the restart of a 1,000,000-event journal (railbird.bench.suite's restart benchmark).

All times are the machine's CLOCK_MONOTONIC (the host's table time) except the journal's
`wall`, converted with the offset between the two clocks taken at the start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import pickle
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rbproto.codec import POCKETS, RAILS

VENUE = "scale"
NODE_PW = "scale-node-pw"
REFEREE_PIN = "583920"
QUIET_MS = 5000  # the config's default; the shot feed bound is QUIET_MS + SHOT_SLACK_MS
SHOT_SLACK_MS = 250
LINGER_US = 20_000  # the firmware's batch_linger_ms
STATUS_S, SYNC_S = 30, 60
WARM_SYNCS = 5  # sync samples 5 s apart after the connect (FakeNode.periodic)
NODES_PER_GENERATOR = 500
CUE_RETURN_US = {"HL": 2_850_000, "HR": 2_850_000, "SL": 2_000_000, "SR": 2_000_000}
GAMES = ("9-ball", "10-ball")


def now_us() -> int:
    return time.monotonic_ns() // 1000


def table_id(i: int) -> str:
    return f"t{i:04d}"


def node_id(i: int) -> str:
    return f"n{i:04d}"


def _other_cpus() -> set:
    cpus = os.sched_getaffinity(0)
    rest = cpus - {min(cpus)}
    return rest or cpus


# -- the traffic model ---------------------------------------------------------------------
def shot_times(rnd: random.Random):
    """(µs from this shot's start to the next one's, is this shot a break), for ever: a shot
    every 15-25 s, a break every 7-11 shots."""
    to_break = rnd.randint(0, 10)
    while True:
        brk = to_break == 0
        to_break = rnd.randint(7, 11) if brk else to_break - 1
        yield rnd.randint(15_000_000, 25_000_000), brk


def shot_plan(rnd: random.Random, brk: bool) -> list:
    """One shot's events: [(µs after the strike, µs until the node can send it, event)]."""
    if brk:
        span = 3_000_000
        rails = rnd.randint(14, 26)
        drops = rnd.choice((0, 1, 1, 2, 2, 3))
    else:
        span = rnd.randint(800_000, 4_000_000)
        rails = rnd.randint(3, 10)
        drops = rnd.choices((0, 1, 2), (45, 45, 10))[0]
    out = []
    for _ in range(rails):
        t = rnd.randint(50_000, span)
        out.append(
            (t, 0, {"kind": "rail", "rail": rnd.choice(RAILS), "amp": rnd.randint(200, 4000)})
        )
    for k in range(drops):
        t = rnd.randint(300_000, span)
        dur = rnd.randint(30_000, 50_000)  # sent when the beam clears
        pocket = rnd.choice(POCKETS)
        out.append((t, dur, {"kind": "drop", "pocket": pocket, "dur": dur}))
        if k == 0 and not brk and rnd.random() < 0.06:  # a scratch: the cue ball returns
            back = CUE_RETURN_US.get(pocket, 1_000_000) + rnd.randint(-100_000, 100_000)
            cdur = rnd.randint(20_000, 40_000)
            out.append((t + back, cdur, {"kind": "cue", "dur": cdur}))
    out.sort(key=lambda x: x[0] + x[1])
    return out


# -- the load generator: simulated nodes on one asyncio loop per process --------------------
class FakeNode:
    """One table's node: the firmware's MQTT client and the firmware's messages, with the
    traffic model instead of sensors."""

    def __init__(self, i: int, port: int, gen):
        from rbnode.mqtt import MQTTClient

        self.i = i
        self.table, self.node = table_id(i), node_id(i)
        self.gen = gen
        self.rnd = random.Random(i * 7919 + 1)
        self.boot = 1
        self.base = now_us() - self.rnd.randint(60, 3600) * 1_000_000  # boot on the host axis
        self.seq = 0
        self.sync_id = 0
        self.sync_best = None  # (delay, offset)
        self.samples = 0
        self.synced = asyncio.Event()
        root = f"railbird/v1/{VENUE}/{self.table}/node/{self.node}"
        self.t_events, self.t_status = root + "/events", root + "/status"
        self.t_birth, self.t_sync_req = root + "/birth", root + "/sync/req"
        self.t_sync_resp, self.t_sync_result = root + "/sync/resp", root + "/sync/result"
        will = json.dumps({"v": 1, "node": self.node, "boot": self.boot, "state": "offline"})
        self.mqtt = MQTTClient(
            self.node,
            "127.0.0.1",
            port,
            user=self.node,
            password=NODE_PW,
            keepalive=60,
            will=(self.t_status, will.encode(), 1, True),
            max_inflight=8,
            subs=[(self.t_sync_resp, 0), (root + "/config", 1)],
            on_message=self._on_message,
            on_connect=self._on_connect,
        )

    def node_now(self) -> int:
        return now_us() - self.base

    def _pub(self, topic, msg, qos=1, retain=False):
        payload = json.dumps(msg, separators=(",", ":")).encode()
        task = asyncio.get_running_loop().create_task(
            self.mqtt.publish(topic, payload, qos, retain)
        )
        self.gen.tasks.add(task)
        task.add_done_callback(self.gen.tasks.discard)
        self.gen.sent_msgs += 1

    def _on_connect(self):
        self._pub(
            self.t_birth,
            {
                "v": 1,
                "node": self.node,
                "boot": self.boot,
                "fw": "bench-scale",
                "reset": "power",
                "config_hash": "00000000",
                "pinmap": "esp32-devkitc",
                "caps": ["pcnt", "cue", "wm"],
            },
            retain=True,
        )
        self._status()
        for _ in range(3):
            self._sync_req()

    def _status(self):
        msg = {
            "v": 1,
            "node": self.node,
            "boot": self.boot,
            "state": "online",
            "uptime_us": self.node_now(),
            "queue": 0,
            "spill": 0,
            "counters": {"events": self.seq},
            "sync": None,
        }
        if self.sync_best is not None:
            d, off = self.sync_best
            msg["sync"] = {
                "offset_us": off,
                "delay_us": d,
                "uncertainty_us": d // 2,
                "samples": self.samples,
            }
        self._pub(self.t_status, msg, retain=True)

    def _sync_req(self):
        self.sync_id += 1
        msg = {"v": 1, "node": self.node, "boot": self.boot, "id": self.sync_id}
        msg["t1"] = self.node_now()
        self._pub(self.t_sync_req, msg, qos=0)

    def _on_message(self, topic, payload, retain):
        if topic != self.t_sync_resp:
            return
        t4 = self.node_now()
        try:
            m = json.loads(payload)
            t1, t2, t3 = m["t1"], m["t2"], m["t3"]
        except (ValueError, KeyError, TypeError):
            return
        delay = (t4 - t1) - (t3 - t2)
        off = ((t2 - t1) + (t3 - t4)) // 2
        if self.sync_best is None or delay < self.sync_best[0]:
            self.sync_best = (delay, off)
        self.samples += 1
        msg = {"v": 1, "node": self.node, "boot": self.boot, "id": m.get("id", 0)}
        msg.update(t1=t1, t2=t2, t3=t3, t4=t4)
        self._pub(self.t_sync_result, msg)
        self.synced.set()

    async def periodic(self):
        # A node that has run for hours has its minimum-delay sync sample from a quiet
        # moment; the connect burst of N nodes is anything but. So, in the warm-up, a sample
        # every 5 s (jittered), then the firmware's period: status every 30 s, sync every 60.
        for _ in range(WARM_SYNCS):
            await asyncio.sleep(4.5 + self.rnd.random())
            self._sync_req()
        next_status = next_sync = time.monotonic()
        while True:
            await asyncio.sleep(1 + self.rnd.random())
            now = time.monotonic()
            if now >= next_status:
                next_status = now + STATUS_S
                self._status()
            if now >= next_sync:
                next_sync = now + SYNC_S
                self._sync_req()

    async def play(self):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.synced.wait(), 5)  # the firmware holds events 2 s
        nxt = now_us() + self.rnd.randint(0, 20_000_000)
        for shot, (gap, brk) in enumerate(shot_times(self.rnd), 1):
            await _sleep_until(nxt)
            if self.gen.stop_play:
                break
            start, nxt = nxt, nxt + gap
            await self._shot(start, shot_plan(self.rnd, brk), shot)

    async def _shot(self, start: int, plan: list, shot: int):
        i, n = 0, len(plan)
        last_t = max(start + t for t, _, _ in plan) if plan else start
        while i < n:
            ready = start + plan[i][0] + plan[i][1]
            await _sleep_until(ready + LINGER_US)
            now = now_us()
            batch = []
            while i < n and start + plan[i][0] + plan[i][1] <= now and len(batch) < 32:
                batch.append(plan[i])
                i += 1
            # the watermark: nothing older than it is still to come (a beam still blocked
            # holds it at the moment it was blocked)
            wm = now
            for t, _, _ in plan[i:]:
                if start + t < wm:
                    wm = start + t
            evs = []
            for t, _, ev in batch:
                e = dict(ev, seq=self.seq, t=start + t - self.base)
                self.seq += 1
                evs.append(e)
            msg = {"v": 1, "node": self.node, "boot": self.boot, "events": evs}
            msg["wm"] = wm - self.base
            payload = json.dumps(msg, separators=(",", ":")).encode()
            await self.mqtt.publish(self.t_events, payload, 1)
            sent = now_us()
            self.gen.sent_msgs += 1
            self.gen.sent_events += len(evs)
            for (t, _, ev), e in zip(batch, evs, strict=True):
                self.gen.records.append(
                    (
                        self.i,
                        e["seq"],
                        ev["kind"],
                        ev.get("pocket"),
                        start + t,
                        sent,
                        shot,
                        start + t == last_t,
                    )
                )


async def _sleep_until(t_us: int):
    d = t_us - now_us()
    if d > 0:
        await asyncio.sleep(d / 1e6)


class _Gen:
    def __init__(self):
        self.stop_play = False
        self.sent_msgs = 0
        self.sent_events = 0
        self.records: list = []
        self.tasks: set = set()


async def _generate(indices, port, ctl, counters, slot, out_path):
    gen = _Gen()
    nodes = []
    runs = []
    for k, i in enumerate(indices):
        nd = FakeNode(i, port, gen)
        nodes.append(nd)
        runs.append(asyncio.create_task(nd.mqtt.run()))
        if k % 50 == 49:
            await asyncio.sleep(0.05)  # a venue's nodes do not all connect in one instant
    for nd in nodes:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(nd.mqtt.wait_connected(), 60)
    counters[slot * 4 + 0] = sum(1 for nd in nodes if nd.mqtt.isconnected())
    plays = [asyncio.create_task(nd.play()) for nd in nodes]
    periodic = [asyncio.create_task(nd.periodic()) for nd in nodes]
    while not ctl["stop_play"].is_set():
        counters[slot * 4 + 1] = gen.sent_events
        counters[slot * 4 + 2] = gen.sent_msgs
        counters[slot * 4 + 0] = sum(1 for nd in nodes if nd.mqtt.isconnected())
        await asyncio.sleep(0.2)
    gen.stop_play = True
    await asyncio.gather(*plays, return_exceptions=True)
    counters[slot * 4 + 1] = gen.sent_events
    counters[slot * 4 + 2] = gen.sent_msgs
    counters[slot * 4 + 3] = 1  # done playing
    while not ctl["quit"].is_set():
        await asyncio.sleep(0.2)
    for t in periodic:
        t.cancel()
    for nd in nodes:
        await nd.mqtt.disconnect()
    for r in runs:
        r.cancel()
    with open(out_path, "wb") as f:
        pickle.dump(gen.records, f)


def _generator_main(indices, port, ctl, counters, slot, out_path):
    from railbird.sim.table import firmware_path

    firmware_path()
    _raise_fd_limit()
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, _other_cpus())
    asyncio.run(_generate(indices, port, ctl, counters, slot, out_path))


def _raise_fd_limit():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# -- the observer: a display (MQTT feeds), the web stream, a referee console ------------------
class Observer:
    def __init__(self, port: int, web_port: int, n: int):
        self.port, self.web_port, self.n = port, web_port, n
        self.lock = threading.Lock()
        self.events = []  # (rx, node index, seqs)
        self.shots = []  # (rx, table index, shot dict)
        self.summaries = []  # (rx, table index, pocketed_today, online)
        self.last_summary = {}  # table index -> message
        self.index = None  # the venue index as last received
        self.web = []  # (rx, table index, [(pocket, t)])
        self.web_seen = set()
        self.inplay = []  # (rx, table index, [(pocket, t)]) of any in-play feed
        self.referee_sent = 0
        self.web_error = None
        self.web_events = 0

    def start(self):
        from railbird.mqttclient import BrokerLogin, new_client

        self.rnd = random.Random(5)  # before the first message can come: it is used there
        login = BrokerLogin(port=self.port, user="railbird-referee", password="referee-secret")
        self.ref, _ = new_client("bench-scale", login, client_id="scale-referee", mqtt311=True)
        self.ref.max_queued_messages_set(0)
        self.ref.connect("127.0.0.1", self.port)
        self.ref.loop_start()
        self.sub, _ = new_client(
            "bench-scale",
            BrokerLogin(port=self.port, user="railbird-display", password="display-secret"),
            client_id="scale-display",
            mqtt311=True,
            on_connect=lambda c, *a: c.subscribe(f"railbird/v1/{VENUE}/#", qos=1),
        )
        self.sub.on_message = self._on_message
        self.sub.connect("127.0.0.1", self.port)
        self.sub.loop_start()
        threading.Thread(target=self._web, daemon=True).start()
        return self

    def stop(self):
        for c in (self.sub, self.ref):
            c.disconnect()
            c.loop_stop()

    def _on_message(self, client, userdata, m):
        rx = now_us()
        p = m.topic.split("/")
        try:
            msg = json.loads(m.payload)
        except ValueError:
            return
        leaf = p[-1]
        if len(p) == 4 and leaf == "summary":
            self.index = (rx, msg)
            return
        if len(p) < 5 or not p[3].startswith("t"):
            return
        ti = int(p[3][1:])
        if leaf == "events" and len(p) == 7:
            self.events.append((rx, ti, [e.get("seq") for e in msg.get("events", ())]))
        elif leaf == "shot":
            self.shots.append((rx, ti, msg))
        elif leaf == "summary":
            self.summaries.append((rx, ti, msg.get("pocketed_today"), msg.get("online")))
            self.last_summary[ti] = msg
        elif leaf == "state":
            self._referee(p[3], msg.get("state") or {})
        elif leaf == "inplay":
            got = (msg.get("inplay") or msg).get("pocketed") or []
            self.inplay.append((rx, ti, [(x.get("pocket"), x.get("t")) for x in got]))

    def _referee(self, table: str, st: dict):
        """What a referee at the table enters when the rules wait (railbird.bench.journal)."""
        valid = {v.get("type"): v for v in st.get("valid_inputs") or () if isinstance(v, dict)}
        rnd = self.rnd
        todo = []
        if st.get("match_winner") is not None or st.get("ended"):
            todo = [{"type": "match"}, {"type": "lag", "winner": rnd.randint(0, 1)}]
        elif st.get("awaiting") == "lag":
            todo = [{"type": "lag", "winner": rnd.randint(0, 1)}]
        elif "option" in valid and valid["option"].get("choices"):
            todo = [{"type": "option", "choice": valid["option"]["choices"][0]}]
        elif "rerack" in valid:
            todo = [{"type": "rerack", **dict.fromkeys(valid["rerack"].get("fields", ()), False)}]
        else:
            if st.get("unconfirmed") and rnd.random() < 0.5:
                todo.append({"type": "confirm"})
            call = valid.get("call")
            if call is not None and call.get("balls") and not st.get("call") and rnd.random() < 0.8:
                todo.append(
                    {"type": "call", "ball": call["balls"][0], "pocket": rnd.choice(POCKETS)}
                )
        for inp in todo:
            self.referee_sent += 1
            msg = {"v": 1, "input": inp, "by": "bench", "token": REFEREE_PIN}
            msg["id"] = f"r{self.referee_sent}"
            self.ref.publish(f"railbird/v1/{VENUE}/{table}/referee", json.dumps(msg), qos=1)

    def _web(self):
        import http.client

        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=60)
                conn.request("GET", f"/events/v/{VENUE}")
                resp = conn.getresponse()
                event = None
                while True:
                    line = resp.fp.readline()
                    if not line:
                        break
                    if line.startswith(b"event: "):
                        event = line[7:].strip()
                    elif line.startswith(b"data: ") and event == b"table":
                        self._web_table(now_us(), line[6:])
            except (OSError, http.client.HTTPException) as e:
                self.web_error = repr(e)
            time.sleep(0.5)

    def _web_table(self, rx, data):
        self.web_events += 1
        try:
            snap = json.loads(data)
            ti = int(snap["table"][1:])
        except (ValueError, KeyError, TypeError):
            return
        got = []
        for part in ("inplay", "last_shot"):
            s = snap.get(part) or {}
            for x in s.get("pocketed") or ():
                key = (ti, x.get("pocket"), x.get("t"))
                if key not in self.web_seen:
                    self.web_seen.add(key)
                    got.append((x.get("pocket"), x.get("t")))
        if got:
            self.web.append((rx, ti, got))


def _observer_main(port, web_port, n, ctl, out_path):
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, _other_cpus())
    obs = Observer(port, web_port, n).start()
    ctl["observer_up"].set()
    ctl["quit"].wait()
    time.sleep(0.5)
    obs.stop()
    data = {
        k: getattr(obs, k)
        for k in (
            "events",
            "shots",
            "summaries",
            "last_summary",
            "index",
            "web",
            "inplay",
            "referee_sent",
            "web_error",
            "web_events",
        )
    }
    with open(out_path, "wb") as f:
        pickle.dump(data, f)


# -- the broker and the daemon -----------------------------------------------------------------
def _broker(workdir: Path, n: int):
    from railbird.broker import PrivateBroker
    from railbird.install import mqttpass

    class ScaleBroker(PrivateBroker):
        """The project's broker config; the password file written as `railbird setup` writes
        it (mosquitto_passwd once per user would take minutes for 2,000 nodes)."""

        def _write_passwords(self):
            from railbird.private import write_private

            entries = {u: mqttpass.hash_password(pw) for u, pw in self.users.items()}
            write_private(self.workdir / "passwd", mqttpass.render(entries))

    users = {node_id(i): NODE_PW for i in range(n)}
    return ScaleBroker(workdir / "broker", users=users)


def _config(n: int, port: int, web_port: int, journal: Path) -> str:
    lines = [
        f'venue = "{VENUE}"',
        f'journal = "{journal}"',
        f'referee_token = "{REFEREE_PIN}"',
        "[broker]",
        'host = "127.0.0.1"',
        f"port = {port}",
        'user = "railbird-host"',
        'password = "host-secret"',
        "[outputs.web]",
        'host = "127.0.0.1"',
        f"port = {web_port}",
    ]
    for i in range(n):
        game = GAMES[i % len(GAMES)]
        lines += [
            f"[tables.{table_id(i)}]",
            f'game = "{game}"',
            'players = ["Ann", "Bob"]',
            "race_to = 7",
            f'nodes = ["{node_id(i)}"]',
        ]
    return "\n".join(lines) + "\n"


def _cpu_s(pid: int) -> float | None:
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _waited_s(pid: int) -> float:
    """Seconds the process's threads spent runnable but waiting for a CPU (schedstat): on a
    shared machine, how much the daemon was held back by others."""
    total = 0
    for st in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(st.read_text().split()[1])
    return total / 1e9


def _mem_kb(pid: int) -> dict:
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        pass
    return out


class JournalCount:
    """Node events the daemon has journalled, read from its journal by a read-only
    connection of our own (WAL: it never blocks the daemon's writes); the daemon itself is
    not asked (its --stats-file walks every table five times a second)."""

    def __init__(self, path: Path):
        self.path = path
        self.db = None
        self.last_id = 0
        self.events = 0

    def __call__(self) -> int:
        if self.db is None:
            if not self.path.exists():
                return 0
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)
        try:
            rows = self.db.execute(
                "SELECT id, payload FROM inputs WHERE id > ? AND topic LIKE '%/events'",
                (self.last_id,),
            ).fetchall()
        except sqlite3.Error:
            return self.events
        for iid, payload in rows:
            self.last_id = max(self.last_id, iid)
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                self.events += len(json.loads(payload).get("events") or ())
        return self.events

    def close(self):
        if self.db is not None:
            self.db.close()


def _host_online(port: int, timeout: float) -> bool:
    """The host's retained `online` on railbird/v1/<venue>/host: the daemon is up."""
    from railbird.mqttclient import BrokerLogin, new_client

    seen = threading.Event()

    def on_message(c, u, m):
        with contextlib.suppress(ValueError, AttributeError):
            if json.loads(m.payload).get("state") == "online":
                seen.set()

    c, _ = new_client(
        "bench-scale",
        BrokerLogin(port=port, user="railbird-display", password="display-secret"),
        client_id="scale-ready",
        mqtt311=True,
        on_connect=lambda c, *a: c.subscribe(f"railbird/v1/{VENUE}/host", qos=1),
    )
    c.on_message = on_message
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        return seen.wait(timeout)
    finally:
        c.disconnect()
        c.loop_stop()


def _pct(xs: list, q: float):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _summ(xs_us: list) -> dict:
    return {
        "n": len(xs_us),
        "p50": _pct(xs_us, 0.5),
        "p99": _pct(xs_us, 0.99),
        "max": max(xs_us) if xs_us else None,
    }


def run_n(n: int, seconds: float, warmup: float, workdir: Path, log, profile=None) -> dict:
    """One N: start everything, play, measure, stop, analyse."""
    from railbird.broker import free_port

    workdir.mkdir(parents=True, exist_ok=True)
    _raise_fd_limit()
    broker = _broker(workdir, n)
    t0 = time.monotonic()
    broker.start(timeout=30)
    journal = workdir / "journal.sqlite"
    web_port = free_port()
    conf = workdir / "railbird.toml"
    conf.write_text(_config(n, broker.port, web_port, journal))
    taken = JournalCount(journal)
    ctx = mp.get_context("fork")
    ctl = {k: ctx.Event() for k in ("stop_play", "quit", "observer_up")}
    n_gen = max(1, (n + NODES_PER_GENERATOR - 1) // NODES_PER_GENERATOR)
    counters = ctx.Array("q", 4 * n_gen, lock=False)
    procs = []
    daemon = None
    res = {"n": n}
    try:
        with open(workdir / "host.log", "ab") as hl:
            daemon = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "railbird",
                    "run",
                    "--config",
                    str(conf),
                    "--log-level",
                    "WARNING",
                ],
                stdout=hl,
                stderr=hl,
                preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
            )
        deadline = time.monotonic() + 120
        while not _host_online(broker.port, 1.0):
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"railbird run did not connect: {_tail(workdir / 'host.log')}")
        log(f"N={n}: broker and daemon up in {time.monotonic() - t0:.1f} s")
        obs = ctx.Process(
            target=_observer_main, args=(broker.port, web_port, n, ctl, workdir / "observer.pkl")
        )
        obs.start()
        procs.append(obs)
        ctl["observer_up"].wait(30)
        t1 = time.monotonic()
        for g in range(n_gen):
            idx = list(range(g, n, n_gen))
            p = ctx.Process(
                target=_generator_main,
                args=(idx, broker.port, ctl, counters, g, workdir / f"gen{g}.pkl"),
            )
            p.start()
            procs.append(p)
        while sum(counters[g * 4] for g in range(n_gen)) < n:
            if time.monotonic() - t1 > 120:
                raise RuntimeError(
                    f"only {sum(counters[g * 4] for g in range(n_gen))} of {n} nodes connected"
                )
            time.sleep(0.2)
        log(f"N={n}: {n} nodes connected in {time.monotonic() - t1:.1f} s; warm-up {warmup:.0f} s")
        time.sleep(warmup)
        # -- the measurement window
        m0_us = now_us()
        cpu0 = {k: _cpu_s(p) for k, p in (("daemon", daemon.pid), ("broker", broker.proc.pid))}
        gen_cpu0 = sum(_cpu_s(p.pid) or 0 for p in procs[1:])
        waited0 = _waited_s(daemon.pid)
        spy = None
        if profile:  # py-spy's samples of the daemon over the window (collapsed stacks)
            out = Path(profile) / f"daemon-{n}.txt"
            exe = Path(sys.executable).with_name("py-spy")  # in the venv, or on the PATH
            exe = str(exe) if exe.exists() else shutil.which("py-spy") or "py-spy"
            cmd = [exe, "record", "-p", str(daemon.pid)]
            cmd += ["-d", str(int(seconds)), "-r", "50", "-f", "raw", "-o", str(out)]
            spy = subprocess.Popen(
                [*cmd, "--nonblocking", "--threads"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        got0 = taken()
        load0 = os.getloadavg()[0]
        w0 = time.monotonic()
        samples = []  # (s since window start, sent events, daemon events)
        while time.monotonic() - w0 < seconds:
            time.sleep(2.0)
            sent = sum(counters[g * 4 + 1] for g in range(n_gen))
            got = taken()
            samples.append((time.monotonic() - w0, sent, got))
            if daemon.poll() is not None:
                raise RuntimeError(f"railbird run exited: {_tail(workdir / 'host.log')}")
        wall_s = time.monotonic() - w0
        cpu1 = {k: _cpu_s(p) for k, p in (("daemon", daemon.pid), ("broker", broker.proc.pid))}
        gen_cpu1 = sum(_cpu_s(p.pid) or 0 for p in procs[1:])
        waited1 = _waited_s(daemon.pid)
        got1 = taken()
        load1 = os.getloadavg()[0]
        mem = _mem_kb(daemon.pid)
        m1_us = now_us()
        if spy is not None:  # it writes its file after the window: a starved one late
            try:
                spy.wait(120)
            except subprocess.TimeoutExpired:
                spy.terminate()
                log(f"N={n}: py-spy did not finish its profile; stopped")
        ctl["stop_play"].set()
        log(f"N={n}: window of {wall_s:.0f} s done; letting the last shots close")
        while sum(counters[g * 4 + 3] for g in range(n_gen)) < n_gen:
            time.sleep(0.2)
        sent_total = sum(counters[g * 4 + 1] for g in range(n_gen))
        # drain: the daemon takes in everything sent (or we say how far it got)
        d0 = time.monotonic()
        while taken() < sent_total and time.monotonic() - d0 < 120:
            time.sleep(0.2)
        drain_s = time.monotonic() - d0
        got_total = taken()
        time.sleep(QUIET_MS / 1000 + 3.0)  # the last shots close; summaries go out
        ctl["quit"].set()
        for p in procs:
            p.join(60)
        res.update(
            window_s=wall_s,
            daemon_cpu=(cpu1["daemon"] - cpu0["daemon"]) / wall_s,
            daemon_waited=(waited1 - waited0) / wall_s,
            cpu_per_event_ms=(cpu1["daemon"] - cpu0["daemon"]) * 1e3 / max(1, got1 - got0),
            load=(load0 + load1) / 2,
            broker_cpu=(cpu1["broker"] - cpu0["broker"]) / wall_s,
            generators_cpu=(gen_cpu1 - gen_cpu0) / wall_s,
            rss_mb=mem.get("VmRSS", 0) / 1024,
            peak_rss_mb=mem.get("VmHWM", 0) / 1024,
            samples=samples,
            sent_events=sent_total,
            daemon_events=got_total,
            drain_s=drain_s,
            m0_us=m0_us,
            m1_us=m1_us,
        )
    finally:
        ctl["stop_play"].set()
        ctl["quit"].set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(60)
            except subprocess.TimeoutExpired:
                daemon.kill()
        broker.stop()
        taken.close()
    res.update(_analyse(n, workdir, n_gen, res))
    return res


def _tail(p: Path, n: int = 2000) -> str:
    return p.read_text(errors="replace")[-n:] if p.exists() else ""


def _analyse(n: int, workdir: Path, n_gen: int, res: dict) -> dict:
    records = []
    for g in range(n_gen):
        with open(workdir / f"gen{g}.pkl", "rb") as f:
            records += pickle.load(f)
    with open(workdir / "observer.pkl", "rb") as f:
        obs = pickle.load(f)
    m0, m1 = res["m0_us"], res["m1_us"]
    # (table, seq) -> record; node i is table i
    by_key = {(r[0], r[1]): r for r in records}
    in_window = [r for r in records if m0 <= r[5] <= m1]
    drops = [r for r in in_window if r[2] == "drop"]
    # the broker's own publish -> subscribe, for every node message in the window
    pubsub = []
    for rx, ti, seqs in obs["events"]:
        for s in seqs:
            r = by_key.get((ti, s))
            if r is not None and m0 <= r[5] <= m1:
                pubsub.append(rx - r[5])
    # journal and timeline from the journal itself
    wall_off = time.time() - time.monotonic()  # monotonic = wall - wall_off (same machine)
    db = sqlite3.connect(f"file:{workdir / 'journal.sqlite'}?mode=ro", uri=True)
    journal_at = {}  # (table, seq) -> µs (monotonic axis)
    rows = db.execute("SELECT id, wall, payload FROM inputs WHERE topic LIKE '%/events'")
    for _iid, wall, payload in rows:
        try:
            msg = json.loads(payload)
            ti = int(msg["node"][1:])
        except (ValueError, KeyError, TypeError):
            continue
        at = int((wall - wall_off) * 1e6)
        for e in msg.get("events", ()):
            journal_at[(ti, e.get("seq"))] = at
    released_at = {}
    rows = db.execute(
        "SELECT e.node, e.seq, i.wall FROM events e JOIN inputs i ON i.id = e.input_id"
        " WHERE e.kind = 'drop'"
    )
    for node, seq, wall in rows:
        released_at[(int(node[1:]), seq)] = int((wall - wall_off) * 1e6)
    late = db.execute("SELECT COUNT(*) FROM events WHERE late = 1").fetchone()[0]
    shots_journal = db.execute("SELECT tbl, shot FROM shots").fetchall()
    db.close()
    to_journal = [journal_at[(r[0], r[1])] - r[5] for r in drops if (r[0], r[1]) in journal_at]
    to_release = [released_at[(r[0], r[1])] - r[5] for r in drops if (r[0], r[1]) in released_at]
    # drops of each table by pocket, to match the outputs' pocketed entries (table time)
    drops_of = {}
    for r in records:
        if r[2] == "drop":
            drops_of.setdefault((r[0], r[3]), []).append(r)

    def match(ti, pocket, t):
        best = None
        for r in drops_of.get((ti, pocket), ()):
            if (
                t is not None
                and abs(r[4] - t) < 50_000
                and (best is None or abs(r[4] - t) < abs(best[4] - t))
            ):
                best = r
        return best

    last_of_shot = {}  # (table, shot) -> send time of its last event
    for r in records:
        if r[7]:
            last_of_shot[(r[0], r[6])] = r[5]
    to_feed, last_to_feed, shot_rx = [], [], []
    matched = 0
    for rx, ti, msg in obs["shots"]:
        shot_rx.append((rx, ti, len(msg.get("pocketed") or ())))
        for x in msg.get("pocketed") or ():
            r = match(ti, x.get("pocket"), x.get("t"))
            if r is None or not m0 <= r[5] <= m1:
                continue
            matched += 1
            to_feed.append(rx - r[5])
            last = last_of_shot.get((ti, r[6]))
            if last is not None:
                last_to_feed.append(rx - last)
    to_web = []
    for source in ("web", "inplay"):
        got = []
        for rx, ti, pocketed in obs[source]:
            for pocket, t in pocketed:
                r = match(ti, pocket, t)
                if r is not None and m0 <= r[5] <= m1:
                    got.append(rx - r[5])
        if source == "web":
            to_web = got
    # the summary: current at the end, and how soon after a shot it showed it. The reference
    # is the shot feed as the same display client received it (both are the daemon's
    # outputs; its journal may hold shots it processed after the client stopped). A table
    # whose last shot came less than 1 s before the end may not have been flushed yet.
    final = obs["last_summary"]
    feed_balls, feed_last = {}, {}
    for rx, ti, msg in obs["shots"]:
        k = len(msg.get("pocketed") or ())
        if k:
            feed_balls[ti] = feed_balls.get(ti, 0) + k
            feed_last[ti] = max(feed_last.get(ti, 0), rx)
    ends = [rx for rx, *_ in obs["shots"]] + [rx for rx, *_ in obs["summaries"]]
    end = max(ends) if ends else 0
    wrong = [
        ti for ti in range(n)
        if (final.get(ti) or {}).get("pocketed_today") != feed_balls.get(ti, 0)
        and end - feed_last.get(ti, 0) >= 1_000_000
    ]  # fmt: skip
    idx_rx, idx = obs["index"] or (0, {})
    shown = sum((final.get(ti) or {}).get("pocketed_today") or 0 for ti in range(n))
    last_summary = max((rx for rx, *_ in obs["summaries"]), default=0)
    index_ok = (
        idx.get("count") == n
        and idx.get("online_count") == n
        and (idx.get("pocketed_today") == shown or idx_rx - last_summary < 1_500_000)
    )
    shot_balls = {}
    for tbl, shot in shots_journal:
        sh = json.loads(shot)
        shot_balls[int(tbl[1:])] = shot_balls.get(int(tbl[1:]), 0) + len(sh.get("pocketed") or ())
    # summary lag: a shot with balls -> its table's summary counting them
    lag = []
    sums = {}
    for rx, ti, pt, _online in obs["summaries"]:
        sums.setdefault(ti, []).append((rx, pt))
    running = {}
    for rx, ti, k in sorted(shot_rx):
        running[ti] = running.get(ti, 0) + k
        if not k or not m0 <= rx <= m1:
            continue
        want = running[ti]
        for srx, pt in sums.get(ti, ()):
            if srx >= rx and pt is not None and pt >= want:
                lag.append(srx - rx)
                break
    s = res["samples"]
    backlog = [max(0, sent - got) for _, sent, got in s]  # the sent count lags up to 0.2 s
    rate = n * 0.43
    kept_up = bool(s) and backlog[-1] <= max(50, rate * 2) and res["drain_s"] < 10
    return {
        "drops": len(drops),
        "events_in_window": len(in_window),
        "event_rate": len(in_window) / max(1e-9, res["window_s"]) / n,
        "pubsub": _summ(pubsub),
        "journal": _summ(to_journal),
        "released": _summ(to_release),
        "feed": _summ(to_feed),
        "feed_last": _summ(last_to_feed),
        "web": _summ(to_web),
        "summary_lag": _summ(lag),
        "summary_tables_wrong": len(wrong),
        "summary_wrong_example": wrong[:5],
        "summary_tables_seen": len(final),
        "index_ok": index_ok,
        "index": {k: idx.get(k) for k in ("count", "online_count", "pocketed_today", "complete")},
        "balls_in_shots": sum(shot_balls.values()),
        "backlog_end": backlog[-1] if backlog else None,
        "backlog_max": max(backlog) if backlog else None,
        "kept_up": kept_up,
        "late_events": late,
        "referee_sent": obs["referee_sent"],
        "web_error": obs["web_error"],
        "web_events": obs["web_events"],
        "shots_fed": len(obs["shots"]),
        "feed_matched": matched,
    }


# -- the report --------------------------------------------------------------------------------
def _ms(x):
    return "-" if x is None else (f"{x / 1e3:,.0f}" if x >= 10_000 else f"{x / 1e3:.1f}")


def _lat(d):
    return f"{_ms(d['p50'])} / {_ms(d['p99'])} / {_ms(d['max'])}"


def _needs(r: dict) -> float:
    """Share of one core the daemon needs for the offered load at the CPU per event it had."""
    return r["cpu_per_event_ms"] / 1e3 * r["event_rate"] * r["n"]


def _table(columns: list, rows: list) -> list:
    """A header, a rule and the rows: `columns` (title, width), each row's cells formatted
    already and right-aligned to their column's width (0: as they are)."""

    def line(cells):
        return " | ".join(f"{c:>{w}}" for c, (_, w) in zip(cells, columns, strict=True))

    hdr = line([title for title, _ in columns])
    return [hdr, "-" * len(hdr)] + [line(cells) for cells in rows]


def _load_row(r: dict) -> list:
    """A row of the load table (`_LOAD_COLUMNS`)."""
    ok = "yes" if r["kept_up"] else "NO"
    if r["summary_tables_wrong"] == 0 and r["index_ok"]:
        summ = "current"
    else:
        index = "ok" if r["index_ok"] else "wrong"
        summ = f"STALE ({r['summary_tables_wrong']} tables wrong, index {index})"
    return [
        f"{r['n']:,}",
        f"{r['daemon_cpu'] * 100:.1f}%",
        f"{r['daemon_cpu'] * 100 / r['n']:.3f}%",
        f"{r['cpu_per_event_ms']:.2f}",
        f"{_needs(r) * 100:.0f}%",
        f"{r['daemon_waited'] * 100:.0f}%",
        f"{r['rss_mb']:.0f} ({r['peak_rss_mb']:.0f})",
        f"{r['broker_cpu'] * 100:.1f}%",
        f"{r['event_rate']:.2f}",
        f"{ok} ({r['backlog_end']} / {r['backlog_max']})",
        summ,
    ]


_LOAD_COLUMNS = [
    ("tables", 6),
    ("daemon CPU", 10),
    ("per table", 9),
    ("ms CPU/event", 12),
    ("needs", 6),
    ("waited", 6),
    ("RSS (peak) MiB", 14),
    ("broker", 6),
    ("ev/s/tbl", 8),
    ("kept up (backlog end/max)", 25),
    ("summary", 0),
]
# the latency table's columns after `tables`: (title, width, the figure's key)
_LATENCIES = [
    ("broker pub->sub", 20, "pubsub"),
    ("-> journal", 20, "journal"),
    ("-> timeline", 20, "released"),
    ("-> shot feed", 20, "feed"),
    ("last event -> shot", 20, "feed_last"),
    ("-> web stream", 20, "web"),
    ("shot -> summary", 18, "summary_lag"),
]


def report(results: list) -> list:
    lines = _table(_LOAD_COLUMNS, [_load_row(r) for r in results])
    loads = ", ".join(f"{r['load']:.1f}" for r in results)
    lines.append(
        f"(daemon CPU: what it used of its one core; needs: its CPU per event times the events "
        f"offered, what it would use if it kept up; waited: share of the window its threads were "
        f"runnable but waiting for a CPU (other processes); load average {loads} on "
        f"{os.cpu_count()} CPUs)"
    )
    lines.append("")
    lines.append("latency from a drop's publication, ms: p50 / p99 / max")
    lines += _table(
        [("tables", 6)] + [(title, width) for title, width, _ in _LATENCIES],
        [[f"{r['n']:,}"] + [_lat(r[key]) for _, _, key in _LATENCIES] for r in results],
    )
    lines.append("")
    bound = (QUIET_MS + SHOT_SLACK_MS) * 1000
    for r in results:
        p99 = r["feed_last"]["p99"]
        current = r["summary_tables_wrong"] == 0 and r["index_ok"]
        met = p99 is not None and p99 <= bound and r["kept_up"] and current
        lines.append(
            f"{r['n']:>6,} tables: {'MET' if met else 'NOT MET'}: kept up "
            f"{'yes' if r['kept_up'] else 'no'}, last event -> shot feed p99 {_ms(p99)} ms "
            f"(bound quiet_ms + {SHOT_SLACK_MS} = {QUIET_MS + SHOT_SLACK_MS} ms), summary "
            f"{'current' if current else 'not current'}; {r['drops']:,} drops, "
            f"{r['shots_fed']:,} shots fed, {r['late_events']:,} late events, "
            f"{r['referee_sent']:,} referee inputs, load generators "
            f"{r['generators_cpu'] * 100:.0f}% CPU"
        )
        if not r["kept_up"]:
            lines.append(
                f"{'':>6}  it stops here: it needs {_needs(r) * 100:.0f}% of a core at "
                f"{r['cpu_per_event_ms']:.2f} ms CPU per event, and got "
                f"{r['daemon_cpu'] * 100:.0f}% (waiting {r['daemon_waited'] * 100:.0f}% of the "
                f"time for a CPU); at that cost one core keeps up with about "
                f"{r['n'] / max(_needs(r), 1e-9):,.0f} tables"
            )
    busy = [r for r in results if r["load"] > (os.cpu_count() or 1)]
    if busy:
        lines.append(
            f"NOTE: the machine was busy (load average above its {os.cpu_count()} CPUs at N = "
            f"{', '.join(str(r['n']) for r in busy)}): the daemon waited for a CPU (`waited`), "
            "so these figures understate what one core of its own does"
        )
    return lines


def main(argv=None) -> int:
    from railbird.bench import suite  # its restart benchmark, options and all

    ap = argparse.ArgumentParser(
        prog="python -m railbird.bench.scale", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument(
        "--tables",
        default=os.environ.get("BENCH_SCALE_TABLES", "50,200,1000,2000"),
        help="numbers of tables, comma-separated (default %(default)s; env BENCH_SCALE_TABLES)",
    )
    ap.add_argument(
        "--seconds",
        type=float,
        default=float(os.environ.get("BENCH_SCALE_SECONDS", "120")),
        help="measurement window per N (default %(default)s; env BENCH_SCALE_SECONDS)",
    )
    ap.add_argument(
        "--warmup",
        type=float,
        default=30.0,
        help="seconds of play before the window (default %(default)s)",
    )
    suite.add_restart_options(ap, events_env="BENCH_SCALE_RESTART_EVENTS")
    ap.add_argument("--keep", action="store_true", help="keep each N's working directory")
    ap.add_argument(
        "--profile",
        help="record the daemon with py-spy over each window into this folder "
        "(daemon-<N>.txt, collapsed stacks; pip install py-spy)",
    )
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    ns = [int(x.replace("_", "")) for x in args.tables.replace(" ", "").split(",") if x]

    def log(msg):
        print(f"[bench-scale {time.strftime('%H:%M:%S')}] {msg}", flush=True)

    cpus = sorted(os.sched_getaffinity(0))
    log(
        f"{len(cpus)} CPUs: the daemon on CPU {cpus[0]}, broker and load generators on the rest;"
        f" N = {', '.join(map(str, ns))}; {args.seconds:.0f} s measured per N"
    )
    load = os.getloadavg()[0]
    if load > len(cpus) / 2:
        log(f"the machine is busy already (load average {load:.1f}): figures will be pessimistic")
    results = []
    base = Path(tempfile.mkdtemp(prefix="railbird-bench-scale-"))
    try:
        for n in ns:
            r = run_n(n, args.seconds, args.warmup, base / f"n{n}", log, args.profile)
            results.append(r)
            for line in report([r]):
                log(line)
            if not args.keep:
                shutil.rmtree(base / f"n{n}", ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            log(f"working directories kept in {base}")
    print()
    print("\n".join(report(results)))
    restart = None
    if args.restart_events:
        with tempfile.TemporaryDirectory(prefix="railbird-bench-") as wd:
            restart = suite.bench_restart(
                args.restart_events, args.cache, wd, baseline=False, changes=False
            )
        rs = restart["restart"]
        print(
            f"\nrestart: journal of {restart['events']:,} events ({restart['size_mb']:,.0f} MiB): "
            f"{rs['seconds']:.2f} s to rebuilt and processing new input "
            f"({rs['replayed']:,} inputs replayed after the snapshot)"
        )
    if args.json:
        keep = [{k: v for k, v in r.items() if k != "samples"} for r in results]
        Path(args.json).write_text(json.dumps({"scale": keep, "restart": restart}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
