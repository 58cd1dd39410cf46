"""Every login against every topic kind on a real broker (mosquitto, or a NATS cluster's MQTT
gateway): what each login may read and write, found by trying (tests/test_acl_matrix.py,
tests/cluster/test_cluster_acl.py).

    ts = targets("club", "t1", me="n1", other="n2")     # one topic per kind (and node)
    got = read_matrix(port, logins, ts, host, sentinels)  # {(login, topic): received}
    wrote = write_matrix(port, logins, ts, host, observer_port)   # {(login, topic)}

MQTT 3.1.1 throughout (the gateway speaks nothing newer). A read probe is a subscription to
the exact topic; the host then publishes every target and, last, one `sentinel` topic per
login that the login surely reads: the broker delivers in order, so once it is in, every
probe that was going to arrive has. A write probe publishes at QoS 1 and waits until the
broker has handled it (PUBACK, or mosquitto closing the connection on a forbidden publish,
then a fresh connection for the next probe); the host, which reads everything, then sends
one message after them all from the same server: what has not reached it before that never
will. Logins probe in parallel, one thread each.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import paho.mqtt.client as paho

from railbird.access import RULES, Level, Rule

DEADLINE = 30.0  # generous: nothing here waits for a fixed time, only for a condition


@dataclass(frozen=True)
class Who:
    """A login to probe with: `user` is what the broker sees (a node's id)."""

    login: object  # railbird.access.Login
    user: str
    password: str


@dataclass(frozen=True)
class Target:
    rule: Rule
    own: bool  # a node kind: the probing node's own topic, or another node's
    topic: str


def targets(venue: str, table: str, me: str, other: str) -> list[Target]:
    out = []
    for r in RULES:
        if r.level is Level.NODE:
            out.append(Target(r, True, r.example(venue, table, me)))
            out.append(Target(r, False, r.example(venue, table, other)))
        else:
            out.append(Target(r, True, r.example(venue, table, me)))
    return out


class _Client:
    """A connected paho client keeping what it receives and its SUBACK codes."""

    def __init__(self, port: int, who: Who, tag: str, protocol=paho.MQTTv311):
        self.msgs: list[tuple[str, bytes]] = []
        self.subacks: dict[int, list] = {}
        self.acked: dict[int, bool] = {}  # mid -> the broker accepted it (MQTT 5 says)
        self.lock = threading.Lock()
        self.closed = threading.Event()
        connected = threading.Event()
        c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=tag, protocol=protocol)
        c.username_pw_set(who.user, who.password)
        # a connection the broker closed is not taken up again by a reconnect delay of 1 s
        # that close() would wait out
        c.reconnect_delay_set(0.01, 0.05)
        c.on_connect = lambda cl, u, f, rc, p: connected.set() if not rc.is_failure else None
        c.on_disconnect = lambda *a: self.closed.set()
        c.on_message = self._on_message
        c.on_subscribe = self._on_subscribe
        c.on_publish = self._on_publish
        c.connect("127.0.0.1", port)
        c.loop_start()
        self.c = c
        if not connected.wait(DEADLINE):
            self.close()
            raise AssertionError(f"{who.user} could not connect")

    def _on_message(self, c, u, m):
        with self.lock:
            self.msgs.append((m.topic, bytes(m.payload)))

    def _on_subscribe(self, c, u, mid, codes, props):
        with self.lock:
            self.subacks[mid] = list(codes)

    def _on_publish(self, c, u, mid, rc, props):
        with self.lock:
            self.acked[mid] = not rc.is_failure

    def wait(self, cond, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while True:
            with self.lock:
                if cond():
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {DEADLINE} s waiting for {what}")
            time.sleep(0.01)

    def subscribe(self, topics: list[str], qos: int) -> dict[str, bool]:
        """{topic: granted} for one SUBSCRIBE of every topic."""
        _, mid = self.c.subscribe([(t, qos) for t in topics])
        self.wait(lambda: mid in self.subacks, "a SUBACK")
        return {t: not rc.is_failure for t, rc in zip(topics, self.subacks[mid], strict=True)}

    def publish(self, topic: str, payload: bytes) -> bool:
        """Publish at QoS 1 until the broker has handled it: whether it took it and this
        connection still serves (False: a PUBACK refusing it, which mosquitto follows by
        closing the connection, or the connection closed)."""
        info = self.c.publish(topic, payload, qos=1)
        self.wait(lambda: info.mid in self.acked or self.closed.is_set(), f"PUBACK of {topic}")
        with self.lock:
            return self.acked.get(info.mid, False) and not self.closed.is_set()

    def received(self) -> list[tuple[str, bytes]]:
        with self.lock:
            return list(self.msgs)

    def close(self) -> None:
        self.c.disconnect()  # first: the network loop then ends at once, not after its 1 s
        self.c.loop_stop()


def _parallel(fn, items) -> list:
    out: list = [None] * len(items)
    errors: list[BaseException] = []

    def run(i, item):
        try:
            out[i] = fn(item)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, x)) for i, x in enumerate(items)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


@dataclass
class Reads:
    granted: dict  # (user, topic) -> the broker granted the subscription
    received: dict  # (user, topic) -> the probe on that topic reached the login


def read_matrix(
    port: int,
    logins: list[Who],
    ts: list[Target],
    host: Who,
    sentinels: dict[str, str],
    qos: int = 1,
    publish_port: int | None = None,
    filtered: bool = True,
    read_at=None,
) -> Reads:
    """`sentinels`: user -> a topic that login reads for certain (published after the probes).
    `filtered`: the broker grants any subscription and filters per message (mosquitto), so
    the sentinel's arrival ends the wait; otherwise (nats-server) it refuses a subscription
    it would not deliver, and the wait is also for every granted one's probe (deliveries of
    different QoS 1 subscriptions need not keep their order there). `read_at(topic)`: the
    topic a message published on `topic` is delivered on, when the broker maps it (cluster
    mode's referee input, railbird.cluster.subjects.REFEREE_MAPPING)."""
    at = read_at or (lambda t: t)
    clients = _parallel(lambda w: _Client(port, w, f"probe-r{qos}-{w.user}"), logins)
    pub = _Client(publish_port or port, host, f"probe-r{qos}-pub")
    try:
        topics = [t.topic for t in ts]
        granted = {}
        for w, c in zip(logins, clients, strict=True):
            subs = c.subscribe([*(at(t) for t in topics), sentinels[w.user]], qos)
            for topic in topics:
                granted[(w.user, topic)] = subs[at(topic)]
        for topic in topics:
            assert pub.publish(topic, f"probe {topic}".encode()), f"the host may write {topic}"
        for topic in sorted(set(sentinels.values())):
            assert pub.publish(topic, b"sentinel")

        def settled(w: Who, c: _Client) -> None:
            want = {(sentinels[w.user], b"sentinel")}
            if not filtered:
                want |= {(at(t), f"probe {t}".encode()) for t in topics if granted[(w.user, t)]}
            try:
                c.wait(lambda: want <= set(c.msgs), f"{w.user}'s messages")
            except AssertionError as e:
                raise AssertionError(f"{e}: missing {sorted(want - set(c.received()))}") from None

        _parallel(lambda wc: settled(*wc), list(zip(logins, clients, strict=True)))
        received = {}
        for w, c in zip(logins, clients, strict=True):
            got = set(c.received())
            for topic in topics:
                received[(w.user, topic)] = (at(topic), f"probe {topic}".encode()) in got
        return Reads(granted, received)
    finally:
        for c in (*clients, pub):
            c.close()


def write_matrix(
    port: int,
    logins: list[Who],
    ts: list[Target],
    host: Who,
    observer_port: int | None = None,
    protocol=paho.MQTTv311,
) -> set[tuple[str, str]]:
    """{(user, topic)} of the probes that reached the host, which subscribes to everything
    (`railbird/#`, `homeassistant/#`) at QoS 0 on `observer_port` (default `port`).
    `protocol`: the writers' MQTT version; with 5 mosquitto answers a forbidden publish
    with a refusing PUBACK before it closes the connection (3.1.1 has no such code)."""
    observer = _Client(observer_port or port, host, "probe-w-observer")
    try:
        granted = observer.subscribe(["railbird/#", "homeassistant/#"], 0)
        assert all(granted.values()), granted

        def probe(w: Who) -> None:
            c = _Client(port, w, f"probe-w-{w.user}", protocol)
            try:
                for i, t in enumerate(ts):
                    if not c.publish(t.topic, f"write {w.user} {t.topic}".encode()):
                        c.close()  # refused: mosquitto closes the connection
                        c = _Client(port, w, f"probe-w-{w.user}-{i}", protocol)
            finally:
                c.close()

        _parallel(probe, logins)
        # after every probe was handled, from the server they went to: the last to arrive
        done = "railbird/v1/probe/done/state"
        pub = _Client(port, host, "probe-w-done")
        try:
            assert pub.publish(done, b"done")
        finally:
            pub.close()
        observer.wait(lambda: any(t == done for t, _ in observer.msgs), "the last message")
        out = set()
        for _t, p in observer.received():
            if p.startswith(b"write "):
                _, user, topic = p.decode().split(" ", 2)
                out.add((user, topic))
        return out
    finally:
        observer.close()


def topic(venue: str, table: str, leaf: str, node: str | None = None) -> str:
    """A table's topic, or a node's when `node` is given (protocol/SPEC.md topic tree)."""
    base = f"railbird/v1/{venue}/{table}"
    return f"{base}/node/{node}/{leaf}" if node else f"{base}/{leaf}"


def wrong_writes(logins, targets_, writes) -> list:
    """(user, topic, written) wherever what a login could write differs from what
    railbird.access grants it."""
    from railbird.access import Access, allows

    return [
        (w.user, t.topic, got)
        for w in logins
        for t in targets_
        if (got := (w.user, t.topic) in writes)
        != allows(w.login, t.rule.kind, Access.WRITE, own=t.own)
    ]


def check_spec_cases(received, writes, venue: str, table: str, me: str, other: str) -> None:
    """The access cases stated from protocol/SPEC.md (§Security), not from
    railbird.access, so a wrong description cannot pass against itself; one statement
    for both brokers. `received[(user, topic)]`: whether the login read it; `writes`: the
    (user, topic) each login could write."""

    def t(leaf: str, node: str | None = None) -> str:
        return topic(venue, table, leaf, node)

    # referee input carries the PIN: only the host reads it, no display, no other console
    assert received[("railbird-host", t("referee"))]
    assert not received[("railbird-display", t("referee"))]
    assert not received[("railbird-referee", t("referee"))]
    # net carries the Wi-Fi password: the host and that node only
    assert received[(me, t("net", me))] and not received[(me, t("net", other))]
    assert not received[("railbird-display", t("net", me))]
    assert not received[("railbird-referee", t("net", me))]
    # displays and consoles read the feeds
    for user in ("railbird-display", "railbird-referee"):
        assert received[(user, t("state"))] and received[(user, f"railbird/v1/{venue}/host")]
    # a node reads its own commands, and nothing of another node's
    assert received[(me, t("config", me))] and received[(me, t("update", me))]
    assert not received[(me, t("config", other))] and not received[(me, t("update", other))]
    assert not received[(me, t("state"))]
    # a node writes what a node publishes, only its own; never its own update or config
    for leaf in ("birth", "status", "events", "sync/req", "sync/result"):
        assert (me, t(leaf, me)) in writes
        assert (me, t(leaf, other)) not in writes
    for leaf in ("update", "config", "net", "sync/resp"):
        assert (me, t(leaf, me)) not in writes
    assert (me, t("referee")) not in writes and (me, t("state")) not in writes
    # a display writes nothing; a console only referee input
    assert not {topic for u, topic in writes if u == "railbird-display"}
    assert {topic for u, topic in writes if u == "railbird-referee"} == {t("referee")}
