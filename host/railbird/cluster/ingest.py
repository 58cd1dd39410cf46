"""A cluster worker's input: JetStream consumers of the tables it owns (docs/scaling.md).

`ClusterIngest` stands where railbird.daemon.ingest.Ingest stands in a single host: the
daemon's worker takes ("mqtt", rx, topic, payload, mid, qos) items from the inbox, runs and
journals them, commits, and only then calls `ack(mid)`, which acknowledges the JetStream
message. Everything else of the daemon (pipeline, journal, snapshots, outputs) is the same.

Time: `rx` is the stream's own timestamp of the message (wall-clock µs), the same for every
worker that ever reads it, so a table rebuilt from the stream by another worker has the same
clock models, quarantine bounds and shots; the daemon's ticks use the same clock (`now`).

Ownership: the tables are spread over `partitions` (CRC-32 of venue/table). A worker holds a
partition by a lease, a key `p.<n>` in the JetStream key-value bucket `railbird-leases`
(R3) whose value is the worker's id, created when free and renewed every `lease_s / 4`; the
bucket's TTL (`lease_s`) deletes the key of a worker that stopped renewing it. Each worker
also renews `w.<id>`, so every worker knows how many are alive and holds
ceil(partitions with tables / workers): a new worker gets partitions from the others, which
release their extras after their delivered messages are journalled and acknowledged.

Per table one durable pull consumer (filter `railbird.*.<venue>.<table>.>`, explicit acks,
at most `max_ack_pending` unacknowledged), fetched by one task: the table's messages reach
the inbox in stream order. nats-server 2.9 has one filter per consumer; 2.10's
multi-filter consumers would allow one consumer per partition.

Taking a table over: its consumer's acknowledged floor is where the previous owner's journal
ends. Ticks are paused (`connected` cleared), the stream's messages of the table after what
this worker's own journal already holds and up to the floor go to the inbox as `adopted`
input (the daemon runs and keeps them but journals no records: they are the previous
owner's), the consumer is created afresh at floor + 1 (what the previous owner had been
delivered but not acknowledged comes at once, not after `ack_wait`), its backlog is read,
and then ticks resume (`caught_up`). Each table's last stream sequence is written into the
journal's `meta` in the commit of the inputs (`before_commit`), so a restarted worker knows
where its journal is in the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import math
import queue
import threading
import time

from railbird.cluster import subjects
from rbproto import codec

log = logging.getLogger("railbird.cluster")

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
US = datetime.timedelta(microseconds=1)
FETCH = 256
META_PREFIX = "cluster.seq."
HOST_PERIOD_S = 1


def wall_us() -> int:
    """The cluster's time axis: wall-clock µs, as the stream stamps its messages."""
    return time.time_ns() // 1000


def stream_us(msg) -> int:
    """The stream's timestamp of a consumer's message in µs, from the nanoseconds in its
    acknowledgement subject ($JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ns>.
    <pending>, or with domain and account before the stream), truncated like `raw_us`:
    nats-py's own `metadata.timestamp` goes through a float and can be a µs off."""
    tokens = msg.reply.split(".")
    return int(tokens[7] if len(tokens) == 9 else tokens[9]) // 1000


def raw_us(m) -> int:
    """The same for a message read with get_msg: its RFC 3339 time, which nats-py cuts to
    µs (truncated, as `stream_us`)."""
    return (m.time - EPOCH) // US


class _Table:
    def __init__(self, venue: str, table: str, partition: int):
        self.key = (venue, table)
        self.partition = partition
        self.consumer = subjects.consumer_name(venue, table)
        self.filter = subjects.table_subject(venue, table)
        self.task: asyncio.Task | None = None
        self.unacked: set = set()  # mids in the daemon's hands


class ClusterIngest:
    def __init__(self, cfg, inbox: queue.Queue):
        self.cfg = cfg
        self.cc = cfg.cluster
        self.venue = cfg.venue
        self.inbox = inbox
        self.worker = self.cc.worker
        self.connected = threading.Event()
        self.connects = 0
        self.sync_answered = 0
        self.session_takeovers = 0
        self.sessions_lost = 0
        self.retained_ignored = 0
        self.retained_unknown = 0  # counted by the single host's MQTT ingest only
        self.expect_session = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = False
        self._closed = False
        self._mid = 0
        self._msgs: dict = {}  # mid -> (msg, table key, stream seq)
        self.positions: dict = {}  # table key -> last stream seq this journal holds
        tables = sorted(cfg.subscribe or cfg.table)
        self.parts: dict = {}  # partition -> [_Table]
        for t in tables:
            p = subjects.partition(self.venue, t, self.cc.partitions)
            self.parts.setdefault(p, []).append(_Table(self.venue, t, p))
        self.owned: dict = {}  # partition -> lease revision
        self._renewed: dict = {}  # partition -> monotonic time of the last renewal
        self._paused = 0  # takeovers under way (ticks wait)
        self._releasing: set = set()  # partitions being handed over
        self._tasks: set = set()
        self.takeovers = 0
        self.adopted = 0
        self.takeover_s: list = []
        self.host_seq = 0
        self.nc = None
        self.js = None
        self.kv = None

    # -- the daemon's side ------------------------------------------------------------------
    now = staticmethod(wall_us)

    def load_positions(self, journal) -> None:
        rows = journal.db.execute(
            "SELECT key, value FROM meta WHERE key LIKE ?", (META_PREFIX + "%",)
        ).fetchall()
        for key, value in rows:
            venue, _, table = key[len(META_PREFIX) :].partition("/")
            self.positions[(venue, table)] = int(value)

    def before_commit(self, journal, items) -> None:
        """Daemon thread, inside the batch's transaction: each table's newest stream seq."""
        new = {}
        for item in items:
            if item[0] in ("mqtt", "tick_in"):
                entry = self._msgs.get(item[4])
                if entry is not None:
                    new[entry[1]] = max(new.get(entry[1], 0), entry[2])
            elif item[0] == "adopted":
                key = tuple(item[2].split("/")[2:4])
                new[key] = max(new.get(key, 0), item[4])
        for key, seq in new.items():
            if seq > self.positions.get(key, 0):
                self.positions[key] = seq
                journal.db.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    (f"{META_PREFIX}{key[0]}/{key[1]}", str(seq)),
                )

    def ack(self, mid: int, qos: int) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._ack, mid)

    def ack_all(self, acks: list[tuple[int, int]]) -> None:
        """A committed batch's acknowledgements, (mid, qos) each."""
        for mid, qos in acks:
            self.ack(mid, qos)

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False):
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._publish, subjects.subject(topic), payload)

    def request_tick(self, keys) -> None:
        """Daemon thread: tick these tables, through the stream (`tick_in` comes back)."""
        payload = json.dumps({"v": 1, "by": self.worker}).encode()
        for venue, table in keys:
            # a table this worker no longer serves (handed over, or known only from its
            # journal) stays in its pipeline, stale: its owner ticks it
            if self._serving((venue, table)):
                self.publish(subjects.tick_topic(venue, table), payload)

    def _serving(self, key) -> bool:
        return any(
            t.key == key and t.task is not None
            for p in list(self.owned)  # other threads ask too: a copy, taken atomically
            for t in self.parts.get(p, ())
        )

    def heartbeat(self, retain: bool = False) -> None:
        if self.connected.is_set() and self.loop is not None:
            msg = {
                "v": 1,
                "venue": self.venue,
                "state": "online",
                "period_s": HOST_PERIOD_S,
                "seq": self.host_seq,
            }
            self.host_seq += 1
            topic = codec.topic(self.venue, None, "host")
            self.publish(topic, codec.encode("host", msg))

    def stats(self) -> dict:
        owned = list(self.owned)  # the main thread asks: a copy, taken atomically
        tables = sorted(t.key[1] for p in owned for t in self.parts.get(p, ()))
        return {
            "cluster_worker": self.worker,
            "cluster_tables": tables,
            "cluster_partitions": sorted(owned),
            "cluster_takeovers": self.takeovers,
            "cluster_takeovers_pending": self._paused,
            "cluster_adopted": self.adopted,
            "cluster_unacked": len(self._msgs),
            "cluster_takeover_s": [round(x, 3) for x in self.takeover_s[-5:]],
        }

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="railbird-cluster", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Hand every partition over (what the daemon holds journalled and acknowledged
        first), leave, and close the connection."""
        if self.loop is not None and self._thread is not None and self._thread.is_alive():
            fut = asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop)
            try:
                fut.result(20)
            except Exception as e:  # noqa: BLE001 - stopping anyway; the leases expire
                log.warning("cluster: shutdown incomplete: %r", e)
            self._closed = True
            self._thread.join(10)
        self._stop = True

    # -- the NATS side (its own thread and loop) ---------------------------------------------
    def _main(self) -> None:
        self.loop = asyncio.new_event_loop()
        try:
            self.loop.run_until_complete(self._run())
        except Exception:
            log.exception("cluster ingest stopped")
        finally:
            self.connected.clear()

    async def _run(self) -> None:
        import nats

        async def disconnected():
            log.warning("cluster: NATS connection lost; reconnecting")

        async def errored(e):
            # nats-py logs every failed reconnect with a traceback: one line, debug level
            log.debug("cluster: NATS: %s: %s", type(e).__name__, e)

        async def reconnected():
            self.connects += 1
            log.info("cluster: reconnected to %s", self.nc.connected_url.netloc)

        self.nc = await nats.connect(
            servers=list(self.cc.nats),
            user=self.cc.user or None,
            password=self.cc.password or None,
            name=f"railbird-{self.worker}",
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.25,
            connect_timeout=2,
            disconnected_cb=disconnected,
            error_cb=errored,
            reconnected_cb=reconnected,
        )
        self.connects += 1
        self.js = self.nc.jetstream(timeout=2)  # and again (`_retry`): a lost server costs one
        await self._setup()
        await self.nc.subscribe(subjects.sync_req_subject(self.venue), cb=self._on_sync)
        self.connected.set()
        self.inbox.put(("caught_up", wall_us()))
        renew = asyncio.ensure_future(self._loop(self._renew, self.cc.lease_s / 4))
        # workers started together see each other before the first share is taken
        await asyncio.sleep(self.cc.lease_s / 2)
        await self._loop(self._balance, self.cc.lease_s / 2)
        while not self._closed:  # `_shutdown` hands the partitions over
            await asyncio.sleep(0.05)
        renew.cancel()

    async def _loop(self, step, period: float) -> None:
        while not self._stop:
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - a NATS hiccup: next round
                log.warning("cluster: %s failed: %s: %s", step.__name__, type(e).__name__, e)
            await asyncio.sleep(period)

    def _spawn(self, coro) -> asyncio.Task:
        """A background task, kept referenced until it ends (the loop holds tasks weakly)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _retry(self, what, fn, *args, tries=60, **kw):
        """JetStream API calls while a cluster elects leaders (a start, a server lost).
        A definite answer (not found, already exists) is raised at once."""
        from nats.js.errors import BadRequestError, NotFoundError

        for i in range(tries):
            try:
                return await fn(*args, **kw)
            except (NotFoundError, BadRequestError):
                raise
            except Exception as e:  # retried, then raised
                if i == tries - 1:
                    raise
                log.debug("cluster: %s: %s, retrying", what, e)
                await asyncio.sleep(0.5)

    async def _setup(self) -> None:
        from nats.js.api import StorageType, StreamConfig
        from nats.js.errors import NotFoundError

        try:
            await self._retry("stream info", self.js.stream_info, subjects.STREAM, tries=2)
        except NotFoundError:
            pass
        except Exception:  # noqa: BLE001 - created below (or its error says why)
            pass
        else:
            self.kv = await self._kv()
            return
        cfg = StreamConfig(
            name=subjects.STREAM,
            subjects=subjects.stream_subjects(self.venue),
            num_replicas=self.cc.replicas,
            storage=StorageType.FILE,
        )
        try:
            await self._retry("add stream", self.js.add_stream, cfg)
        except Exception as e:  # noqa: BLE001 - another worker made it first
            log.info("cluster: stream not created here (%s)", e)
        self.kv = await self._kv()

    async def _kv(self):
        from nats.js.api import KeyValueConfig

        async def make():
            try:
                return await self.js.key_value(subjects.LEASES)
            except Exception:  # noqa: BLE001 - not there yet: create it
                return await self.js.create_key_value(
                    KeyValueConfig(
                        bucket=subjects.LEASES,
                        ttl=self.cc.lease_s,
                        history=1,
                        replicas=self.cc.replicas,
                    )
                )

        return await self._retry("lease bucket", make)

    # -- leases ------------------------------------------------------------------------------
    async def _renew(self) -> None:
        """This worker's presence and every lease it holds; a lease whose key changed or
        vanished is lost, and one not renewed for 3/4 of its time is given up (fenced)
        before another worker can take it."""
        from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

        kv = self.kv
        me = self.worker.encode()
        # the presence key's failure must not skip the fencing below: a worker cut off from
        # NATS times out here first, and would go on consuming tables it can no longer hold
        try:
            try:
                entry = await kv.get(f"w.{self.worker}")
                await kv.update(f"w.{self.worker}", me, last=entry.revision)
            except KeyNotFoundError:
                await kv.create(f"w.{self.worker}", me)
        except Exception as e:  # noqa: BLE001 - NATS unreachable for now: the leases decide
            log.warning(
                "cluster: presence of %s not renewed: %s: %s", self.worker, type(e).__name__, e
            )
        for p, rev in list(self.owned.items()):
            now = time.monotonic()
            try:
                self.owned[p] = await kv.update(f"p.{p}", me, last=rev)
                self._renewed[p] = now
            except (KeyWrongLastSequenceError, KeyNotFoundError) as e:
                log.error("cluster: lease of partition %d lost (%s)", p, e)
                await self._drop(p)
            except Exception as e:  # noqa: BLE001 - NATS unreachable for now
                if now - self._renewed.get(p, now) > self.cc.lease_s * 0.75:
                    log.error("cluster: lease of partition %d not renewed in time (%s)", p, e)
                    await self._drop(p)

    async def _balance(self) -> None:
        """Hold ceil(partitions with tables / live workers): take free ones, release extras."""
        kv = self.kv
        # the live workers' keys from the bucket's stream info: kv.keys() would create a
        # consumer each round, and consumer churn slows the whole cluster's meta layer
        info = await self.js.stream_info(
            f"KV_{subjects.LEASES}", subjects_filter=f"$KV.{subjects.LEASES}.w.>"
        )
        workers = list((info.state.subjects or {}).keys())
        live = max(1, len(workers))
        target = math.ceil(len(self.parts) / live)
        held = [p for p in self.owned if p not in self._releasing]
        if len(held) < target:
            for p in sorted(self.parts):
                if p in self.owned or len(self.owned) >= target:
                    continue
                try:
                    rev = await kv.create(f"p.{p}", self.worker.encode())
                except Exception:  # noqa: BLE001 - held by another worker
                    continue
                self.owned[p] = rev
                self._renewed[p] = time.monotonic()
                log.info("cluster: %s holds partition %d (%d worker(s))", self.worker, p, live)
                self._spawn(self._take(p))
        elif len(held) > target and not self._paused:
            for p in sorted(held, reverse=True)[: len(held) - target]:
                self._spawn(self._release(p))

    async def _drop(self, p: int) -> None:
        """Stop consuming partition p's tables at once (lease lost: another may own it)."""
        self.owned.pop(p, None)
        for t in self.parts.get(p, ()):
            if t.task is not None:
                t.task.cancel()
                t.task = None

    async def _release(self, p: int) -> None:
        """Hand partition p over: stop fetching, wait for what the daemon holds to be
        journalled and acknowledged, then delete the lease for another worker to take."""
        if p in self._releasing:
            return
        self._releasing.add(p)
        try:
            for t in self.parts.get(p, ()):  # no more fetching; the lease is still renewed
                if t.task is not None:
                    t.task.cancel()
                    t.task = None
            deadline = time.monotonic() + 10
            while any(t.unacked for t in self.parts.get(p, ())) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await self.nc.flush(2)
            rev = self.owned.pop(p, None)
            if rev is not None:
                await self.kv.delete(f"p.{p}", last=rev)
        except Exception as e:  # noqa: BLE001 - it expires after lease_s anyway
            self.owned.pop(p, None)
            log.info("cluster: lease %d not deleted (%s); it expires", p, e)
        finally:
            self._releasing.discard(p)
        log.info("cluster: %s released partition %d", self.worker, p)

    async def _shutdown(self) -> None:
        self._stop = True  # no more leases taken, no more fetching
        try:
            await asyncio.gather(*(self._release(p) for p in list(self.owned)))
            with contextlib.suppress(Exception):  # else it expires after lease_s
                await self.kv.delete(f"w.{self.worker}")
            await asyncio.wait_for(self.nc.drain(), 5)
        finally:
            self._closed = True

    # -- taking tables over ------------------------------------------------------------------
    async def _take(self, p: int) -> None:
        t0 = time.monotonic()
        self._paused += 1
        self.connected.clear()
        await self._put(("disconnected", wall_us()))
        try:
            for t in self.parts.get(p, ()):
                while p in self.owned and not self._stop:
                    try:
                        await self._take_table(t)
                        break
                    except asyncio.CancelledError:
                        raise
                    except Exception as e:  # noqa: BLE001 - a JetStream API timeout under load
                        log.warning("cluster: taking %s/%s over: %r; again", *t.key, e)
                        await asyncio.sleep(0.5)
        finally:
            self._paused -= 1
            if self._paused == 0:
                await self._put(("caught_up", wall_us()))
                self.connected.set()
        self.takeovers += 1
        self.takeover_s.append(time.monotonic() - t0)
        log.info(
            "cluster: partition %d served by %s after %.2f s", p, self.worker, self.takeover_s[-1]
        )

    async def _take_table(self, t: _Table) -> None:
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
        from nats.js.errors import NotFoundError

        t0 = time.monotonic()
        floor = 0
        try:
            info = await self._retry(
                "consumer info", self.js.consumer_info, subjects.STREAM, t.consumer, tries=20
            )
            floor = info.ack_floor.stream_seq or 0
        except NotFoundError:
            pass
        mine = self.positions.get(t.key, 0)
        t1 = time.monotonic()
        if floor > mine:
            await self._adopt(t, mine, floor)
        t2 = time.monotonic()
        start = max(floor, self.positions.get(t.key, 0)) + 1
        with contextlib.suppress(NotFoundError):  # the table's first owner
            await self._retry(
                "delete consumer", self.js.delete_consumer, subjects.STREAM, t.consumer
            )
        cfg = ConsumerConfig(
            durable_name=t.consumer,
            filter_subject=t.filter,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=start,
            max_ack_pending=self.cc.max_ack_pending,
            ack_wait=30,
        )
        await self._retry("add consumer", self.js.add_consumer, subjects.STREAM, cfg, tries=20)
        psub = await self.js.pull_subscribe_bind(durable=t.consumer, stream=subjects.STREAM)
        t3 = time.monotonic()
        # the backlog (published while the table had no owner) before ticks resume: until
        # a message says nothing more is pending (not until a quiet moment: the table's
        # own feeds and the node's time-sync requests are in the stream too)
        while await self._fetch(t, psub, timeout=0.2):
            pass
        log.info(
            "cluster: %s/%s: adopted up to %d, consuming from %d in %.2f s (position %.2f, "
            "adopt %.2f, consumer %.2f, backlog %.2f)",
            *t.key,
            floor,
            start,
            time.monotonic() - t0,
            t1 - t0,
            t2 - t1,
            t3 - t2,
            time.monotonic() - t3,
        )
        if t.partition in self.owned:  # not lost meanwhile
            t.task = asyncio.ensure_future(self._consume(t, psub))

    async def _adopt(self, t: _Table, after: int, upto: int) -> None:
        """The table's messages in (after, upto] from the stream, as `adopted` input: in
        batches through an ephemeral consumer (in memory, one replica, no acks); should it
        fail, one by one (the next message of the table's subjects, no consumer)."""
        seq = after
        try:
            seq = await self._adopt_batches(t, seq, upto)
        except Exception as e:  # noqa: BLE001 - the slow way below
            log.warning("cluster: adopting %s/%s in batches: %r; one by one", *t.key, e)
        await self._adopt_each(t, seq, upto)

    async def _adopt_batches(self, t: _Table, seq: int, upto: int) -> int:
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        cfg = ConsumerConfig(
            ack_policy=AckPolicy.NONE,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=seq + 1,
            inactive_threshold=10,
            mem_storage=True,
            num_replicas=1,
        )
        sub = await self._retry(
            "adopt", self.js.pull_subscribe, t.filter, stream=subjects.STREAM, config=cfg, tries=5
        )
        try:
            misses = 0
            while seq < upto:
                try:
                    msgs = await sub.fetch(FETCH, timeout=1)
                except Exception:  # a timeout: nothing more, or a slow server
                    misses += 1
                    if misses == 3:
                        raise
                    continue
                for m in msgs:
                    n = m.metadata.sequence.stream
                    if n > upto:
                        return upto
                    await self._adopt_one(subjects.topic(m.subject), m.data, stream_us(m), n)
                    seq = n
            return seq
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _adopt_each(self, t: _Table, seq: int, upto: int) -> None:
        from nats.js.errors import NotFoundError

        while seq < upto:
            try:
                m = await self._retry(
                    "adopt",
                    self.js.get_msg,
                    subjects.STREAM,
                    seq=seq + 1,
                    subject=t.filter,
                    next=True,
                    tries=20,
                )
            except NotFoundError:
                break  # nothing after seq: the floor was a message no longer kept
            if m.seq > upto:
                break
            seq = m.seq
            await self._adopt_one(subjects.topic(m.subject), m.data, raw_us(m), seq)

    async def _adopt_one(self, tpc: str, data: bytes, rx: int, seq: int) -> None:
        if subjects.host_input(tpc):
            await self._put(("adopted", rx, tpc, data, seq))
            self.adopted += 1

    async def _fetch(self, t: _Table, psub, timeout: float) -> int:
        """One fetch into the inbox -> how many messages the consumer still had pending
        after it (0: none, or nothing came)."""
        from nats.errors import TimeoutError as NatsTimeout

        try:
            msgs = await psub.fetch(FETCH, timeout=timeout)
        except NatsTimeout:
            return 0
        for m in msgs:
            if not subjects.host_input(subjects.topic(m.subject)):
                await self._ack_send(m)  # a feed or an answer to a node: not input
                continue
            self._mid += 1
            mid = self._mid
            self._msgs[mid] = (m, t.key, m.metadata.sequence.stream)
            t.unacked.add(mid)
            tpc = subjects.topic(m.subject)
            if tpc.endswith("/tick"):
                await self._put(("tick_in", stream_us(m), *t.key, mid, 1))
            else:
                await self._put(("mqtt", stream_us(m), tpc, m.data, mid, 1))
        return msgs[-1].metadata.num_pending if msgs else 0

    async def _consume(self, t: _Table, psub) -> None:
        while not self._stop:
            try:
                await self._fetch(t, psub, timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - a server lost: nats-py reconnects
                log.debug("cluster: fetch %s/%s: %s", *t.key, e)
                await asyncio.sleep(0.2)

    async def _put(self, item) -> None:
        """Into the daemon's bounded inbox without blocking this loop (acks must go on)."""
        while True:
            try:
                self.inbox.put_nowait(item)
                return
            except queue.Full:
                await asyncio.sleep(0.005)

    def _ack(self, mid: int) -> None:
        entry = self._msgs.get(mid)
        if entry is not None:
            self._spawn(self._ack_confirmed(mid, entry))

    async def _ack_confirmed(self, mid: int, entry) -> None:
        """Acknowledge and wait for the server's confirmation, again until it comes: an
        acknowledgement lost with a server would leave the consumer's floor behind this
        journal, and a worker taking the table over would journal those messages again.
        Until confirmed the message counts as in flight (`cluster_unacked`)."""
        msg, key, _seq = entry
        for _ in range(30):
            try:
                await msg.ack_sync(timeout=2)
                break
            except Exception as e:  # noqa: BLE001 - a server lost; nats-py reconnects
                if "already acknowledged" in str(e).lower():
                    break
                log.debug("cluster: ack of %s/%s: %r; again", *key, e)
                await asyncio.sleep(0.2)
        else:
            log.error("cluster: ack of %s/%s never confirmed; it may be journalled twice", *key)
        self._msgs.pop(mid, None)
        for p in self.parts.values():
            for t in p:
                if t.key == key:
                    t.unacked.discard(mid)

    async def _ack_send(self, msg) -> None:
        try:
            await msg.ack()
        except Exception as e:  # noqa: BLE001 - redelivered later, and acknowledged again
            log.debug("cluster: ack failed: %s", e)

    def _publish(self, subj: str, payload: bytes) -> None:
        self._spawn(self._pub(subj, payload))

    async def _pub(self, subj: str, payload: bytes) -> None:
        try:
            await self.nc.publish(subj, payload)
        except Exception as e:  # noqa: BLE001 - a feed message lost while reconnecting
            log.debug("cluster: publish %s failed: %s", subj, e)

    async def _on_sync(self, msg) -> None:
        rx = wall_us()
        tpc = subjects.topic(msg.subject)
        try:
            _kind, venue, table, node, req = codec.decode_message(tpc, msg.data)
        except codec.ProtocolError:
            return
        if not self._serving((venue, table)):
            return  # another worker's table: it answers
        resp = {"v": 1, "id": req["id"], "t1": req["t1"], "t2": rx, "t3": wall_us()}
        await self.nc.publish(
            subjects.subject(codec.topic(venue, table, "sync_resp", node)),
            codec.encode("sync_resp", resp),
        )
        self.sync_answered += 1
