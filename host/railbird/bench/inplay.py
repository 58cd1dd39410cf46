"""`make bench`, in play (issue 15, item 4): a pocketed ball's latency from the node to the
web board, end to end, beside the broker's own publish -> subscribe latency in the same run.

A private mosquitto, `railbird run` as a subprocess (its default outputs and the web
scoreboard), and the simulated node firmware (rbnode.simnode: the node code the ESP32 runs,
on simulated hardware, synced and sending its watermark `wm`) on a table with one node. The
bench drops balls through the node's pocket beams in groups of `GROUP` (a shot with several
balls down), lets each shot close, and for every drop measures from the moment the node's
MQTT client publishes the batch that carries it to the moment the table's web event stream
(/events/v/<venue>/t/<table>) delivers the snapshot whose provisional `inplay` shows it.
Beside it, on the same broker in the same run: a paho publisher and subscriber (QoS 1) of
`BROKER_MESSAGES` timestamped messages, their publish -> receive latency.

The publish time comes from a probe on the simulated node's own MQTT client (the time its
`publish` is called with an events batch holding the drop); the node's beam, debounce and
batching time before that are the firmware's, not the host's, and are not counted.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rbproto.codec import POCKETS

VENUE, TABLE, NODE, NODE_PW = "bench", "t1", "t1-pockets", "node-pw"
GROUP = 8  # balls per shot
GAP_S = 0.12  # between the drops of a shot
QUIET_MS = 300  # the shot closes this long after its last ball
BROKER_MESSAGES = 1000
TARGET_P99_MS = 150.0

CONFIG = """
venue = "{venue}"
stats_period_s = 0
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-bench-inplay"
[shots]
quiet_ms = {quiet}
[tables.{table}]
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
"""


def percentiles(xs: list) -> dict:
    s = sorted(xs)

    def q(p):
        return s[min(len(s) - 1, max(0, round(p * (len(s) - 1))))]

    return {
        "n": len(s),
        "p50": statistics.median(s),
        "p99": q(0.99),
        "max": s[-1],
    }


class _Stream:
    """The table's web event stream on a thread: when each provisional ball first appeared
    (`balls`: a ball is its shot and its place in the shot's pocketed list) and the number
    of `table` events."""

    def __init__(self, port: int, path: str):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        # the address itself as the Host: the web server refuses names it does not know
        # (outputs/web/hostcheck), as a browser's would be after DNS rebinding
        host = f"127.0.0.1:{port}"
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        self.events = 0
        self.status = ""  # the response's status line: a refused stream says why
        self.balls: list[float] = []
        self._seen: set = set()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buf, event = b"", None
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    return
                now = time.monotonic()
                buf += data
                if not self.status and b"\r\n" in buf:
                    self.status = buf.split(b"\r\n", 1)[0].decode(errors="replace")
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line.startswith(b"event: "):
                        event = line[7:].strip()
                    elif line.startswith(b"data: ") and event == b"table":
                        ip = json.loads(line[6:]).get("inplay") or {}
                        self.events += 1
                        for i in range(len(ip.get("pocketed") or ())):
                            if (ip.get("shot"), i) not in self._seen:
                                self._seen.add((ip.get("shot"), i))
                                self.balls.append(now)
        except (OSError, ValueError):
            return

    def close(self):
        self.sock.close()


def broker_latency(port: int, n: int = BROKER_MESSAGES) -> dict:
    """A plain paho publisher and subscriber at QoS 1 on the same broker: publish -> receive,
    one message at a time (latency, not throughput)."""
    from railbird.bench.subscriber import host_subscriber
    from railbird.broker import DEFAULT_USERS
    from railbird.mqttclient import BrokerLogin, new_client

    # a topic nobody else subscribes to; the host's login may write it (a node's writes
    # only what a node publishes, which the daemon here would take as input)
    topic = f"railbird/v1/{VENUE}/bench-latency/probe"
    lat, done = [], threading.Event()

    def on_message(c, u, m):
        lat.append(time.monotonic() - float(m.payload))
        if len(lat) >= n:
            done.set()

    sub = host_subscriber(port, topic, "bench-lat-sub", on_message)
    login = BrokerLogin(port=port, user="railbird-host", password=DEFAULT_USERS["railbird-host"])
    pub, _ = new_client("bench", login, client_id="bench-lat-pub")
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    for _ in range(n):
        pub.publish(topic, repr(time.monotonic()), qos=1)
        time.sleep(0.002)
    done.wait(30)
    for c in (pub, sub):
        c.disconnect()
        c.loop_stop()
    return percentiles(lat)


def _probe(sn, published: list, clock=time.monotonic) -> None:
    """Note when the node's MQTT client publishes an events batch holding a drop (`clock`:
    the screens' bench compares with a browser's, so it uses the wall clock)."""
    mq = sn.node.mqtt
    orig = mq.publish

    async def publish(topic, payload, qos=1, retain=False):
        if topic.endswith("/events"):
            msg = json.loads(payload)
            n = sum(1 for e in msg.get("events", ()) if e.get("kind") == "drop")
            published.extend([clock()] * n)
        return await orig(topic, payload, qos, retain)

    mq.publish = publish


def start_host(wd: Path) -> tuple[subprocess.Popen, Path, str]:
    """`railbird run` on wd/host.toml, journal and stats in wd, log in wd/host.log ->
    (process, stats file, the web server's URL) once it is connected."""
    stats = wd / "stats.json"
    with open(wd / "host.log", "ab") as log:
        host = subprocess.Popen(
            [
                *(sys.executable, "-m", "railbird", "run", "--config", str(wd / "host.toml")),
                *("--journal", str(wd / "journal.sqlite"), "--stats-file", str(stats)),
            ],
            stdout=log,
            stderr=log,
        )
    try:
        s = _wait_stats(stats, lambda s: s["connected"] and s["outputs"]["web"]["url"], 30, host)
    except (RuntimeError, TimeoutError):
        stop_host(host)
        raise
    return host, stats, s["outputs"]["web"]["url"]


def stop_host(host: subprocess.Popen) -> None:
    host.terminate()
    try:
        host.wait(10)
    except subprocess.TimeoutExpired:
        host.kill()


def _wait_stats(path: Path, cond, timeout: float, proc) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"railbird run exited ({proc.returncode})")
        try:
            s = json.loads(path.read_text())
            if cond(s):
                return s
        except (OSError, ValueError, KeyError, TypeError):
            pass
        time.sleep(0.05)
    raise TimeoutError("railbird run: " + path.read_text() if path.exists() else "no stats")


def bench_inplay(drops: int = 200, workdir: str | None = None) -> dict:
    from railbird.broker import PrivateBroker
    from railbird.sim.table import firmware_path

    firmware_path()
    from rbnode.simnode import SimNode

    with tempfile.TemporaryDirectory(prefix="railbird-bench-inplay-", dir=workdir) as tmp:
        wd = Path(tmp)
        broker = PrivateBroker(wd / "broker", users={NODE: NODE_PW}).start()
        host = sn = stream = None
        try:
            conf = wd / "host.toml"
            conf.write_text(
                CONFIG.format(venue=VENUE, port=broker.port, quiet=QUIET_MS, table=TABLE, node=NODE)
            )
            host, stats, web = start_host(wd)
            web_port = int(web.rsplit(":", 1)[1])
            sn = SimNode("127.0.0.1", broker.port, VENUE, TABLE, NODE, NODE_PW, wd / "node")
            sn.start()
            sn.wait_connected()
            _wait_stats(stats, lambda s: s["sync_samples"] >= 3, 30, host)
            published: list[float] = []  # when each drop left the node
            _probe(sn, published)
            stream = _Stream(web_port, f"/events/v/{VENUE}/t/{TABLE}")
            deadline = time.monotonic() + 10
            while not stream.events and time.monotonic() < deadline:
                time.sleep(0.01)  # the first snapshot: the stream is open
            for g in range(0, drops, GROUP):
                for k in range(min(GROUP, drops - g)):
                    sn.drop(POCKETS[(g + k) % 6], dur_us=30_000)
                    time.sleep(GAP_S)
                time.sleep(QUIET_MS / 1000 + 0.3)  # the shot closes
            deadline = time.monotonic() + 5
            while len(stream.balls) < len(published) and time.monotonic() < deadline:
                time.sleep(0.05)
            lat = [w - p for p, w in zip(published, stream.balls, strict=False)]
            missed = drops - len(lat)
            why = f"the stream answered {stream.status!r}" if stream.status else "no answer"
            base = broker_latency(broker.port)
        finally:
            if stream is not None:
                stream.close()
            if sn is not None:
                sn.stop()
            if host is not None:
                stop_host(host)
            broker.stop()
    return {
        "inplay": percentiles(lat) if lat else None,
        "missed": missed,
        "broker": base,
        "why": why,
    }


def held(r: dict) -> bool:
    """Every drop shown in play, p99 within the target."""
    ip = r["inplay"]
    return ip is not None and not r["missed"] and ip["p99"] * 1e3 <= TARGET_P99_MS


def line(r: dict) -> str:
    def ms(p):
        return f"p50 {p['p50'] * 1e3:.1f} / p99 {p['p99'] * 1e3:.1f} / max {p['max'] * 1e3:.1f} ms"

    ip = r["inplay"]
    if ip is None:
        return f"in play     no drop reached the web stream as in play: {r.get('why', '?')}"
    verdict = "OK" if held(r) else "TOO SLOW"
    return (
        f"in play     drop published -> provisional ball on the web stream, single-node table, "
        f"{ip['n']} drops ({r['missed']} missed): {ms(ip)}, target p99 {TARGET_P99_MS:.0f} ms: "
        f"{verdict}   baseline mosquitto publish -> subscribe ({r['broker']['n']} messages, "
        f"QoS 1): {ms(r['broker'])}"
    )


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    print(line(bench_inplay(n, os.environ.get("TMPDIR"))))
