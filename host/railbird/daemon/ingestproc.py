"""The MQTT ingest in a process of its own: `Ingest`'s interface to the daemon, its client in
a child process.

Why (issue 21, item 11): the host is one Python process, and everything in it takes turns
at one interpreter lock. paho-mqtt is pure Python, so its network thread (reading and
parsing each PUBLISH, building each PUBACK) took that lock from the worker. In a child process
it runs on the other core, and the daemon's process spent about a fifth less CPU per message
end to end (docs/performance.md, 4 December); the worker is left the pipeline, the journal
and the outputs.

What stays the same: the child runs the very `Ingest` (session, QoS 1, manual ack, last
will, retained junk, time-sync answers from its network thread, back-pressure). A message
is acknowledged only when the daemon says its batch is committed (`ack_all`, one pipe
message per batch), so a crash of either process loses nothing: the broker sends what was
not acknowledged again. The child exits at once when the daemon's end of the pipe closes
(a daemon killed: no DISCONNECT, so the broker publishes the will, as it did for the
one-process host); a child that dies is started again, the daemon told `disconnected` and
then `connected`, as for a lost link.

The pipe carries pickled tuples, child to daemon: ("items", [inbox item, ...], status) and
("status", status); daemon to child: ("ack", [(mid, qos), ...]), ("publish", topic,
payload, qos, retain), ("heartbeat", retain), ("stop",). `status` is the child's counters
and link state, which the daemon's `stats()` and `health()` read as attributes here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from railbird.childenv import child_env
from railbird.config import BrokerConfig
from railbird.daemon.ingest import COUNTERS, Ingest, now_us

log = logging.getLogger("railbird.daemon.ingestproc")

FORWARD_MAX = 256  # inbox items to one pipe message (a backlog arrives in few writes)
STATUS_PERIOD_S = 0.2  # the child's link state and counters reach the daemon this often
RESTART_DELAY_S = 1.0  # a child that died is started again after this long
START_TIMEOUT_S = 60.0  # for a child's first word (an import on a slow SD card is slow)
INBOX_MAX = 20_000  # the child's own queue, bounded as the daemon's is (back-pressure)


def _status(ing: Ingest) -> tuple[bool, str, tuple[int, ...]]:
    return ing.connected.is_set(), ing.connect_error, tuple(getattr(ing, c) for c in COUNTERS)


def child_main(conn: Connection) -> None:
    """The child: the real `Ingest` on a queue of its own, a thread forwarding that queue to
    the daemon, and this thread carrying out the daemon's commands until the pipe closes.
    The first message is (broker config, venue, tables, knows, expect_session, log level)."""
    # The daemon decides when this ends (its `stop`, or its end of the pipe closing): a
    # Ctrl-C in a terminal or systemd's SIGTERM to the unit's every process must not end the
    # child first, or the daemon's last committed batch would go unacknowledged and the will
    # would say `offline` before the daemon's own goodbye
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        init = pickle.loads(conn.recv_bytes())
    except (EOFError, OSError):
        os._exit(0)
    bcfg, venue, tables, knows, expect_session, log_level = init
    # the same lines as `railbird run` (commands/run.py), on the stderr the two share
    logging.basicConfig(level=log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    inbox: queue.Queue[tuple[object, ...]] = queue.Queue(INBOX_MAX)
    ing = Ingest(bcfg, venue, tables, inbox, knows)
    ing.expect_session = expect_session
    send_lock = threading.Lock()

    def send(msg: tuple[object, ...]) -> None:
        data = pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)
        with send_lock:
            conn.send_bytes(data)

    def forward() -> None:
        last = None
        while True:
            try:
                items = [inbox.get(timeout=STATUS_PERIOD_S)]
            except queue.Empty:
                st = _status(ing)
                if st != last:
                    send(("status", st))
                    last = st
                continue
            while len(items) < FORWARD_MAX:
                try:
                    items.append(inbox.get_nowait())
                except queue.Empty:
                    break
            last = _status(ing)
            send(("items", items, last))

    def gone() -> None:
        # the daemon is gone (killed, or the pipe broken): leave at once, without a
        # DISCONNECT, so the broker keeps the session and publishes the will
        os._exit(0)

    ing.start()
    send(("status", _status(ing)))  # started: what `ProcessIngest.start` waits for
    threading.Thread(target=_guarded(forward, gone), name="ingest-forward", daemon=True).start()
    while True:
        try:
            cmd = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            gone()
        op = cmd[0]
        if op == "ack":
            for mid, qos in cmd[1]:
                ing.ack(mid, qos)
        elif op == "publish":
            ing.publish(cmd[1], cmd[2], qos=cmd[3], retain=cmd[4])
        elif op == "heartbeat":
            ing.heartbeat(retain=cmd[1])
        elif op == "stop":
            ing.stop()
            # the daemon may have stopped listening first: nothing is owed to it then
            with contextlib.suppress(BrokenPipeError, OSError):
                send(("status", _status(ing)))
            os._exit(0)


def _guarded(fn: Callable[[], None], on_error: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except (BrokenPipeError, EOFError, OSError):
            on_error()

    return run


def factory(cfg: Any) -> Callable[[queue.Queue[tuple[object, ...]]], Any] | None:
    """`Daemon(ingest=...)` for `railbird run` and the benchmark that measures it: the ingest
    in a child process when the config says so (`broker.ingest_process`, the default), else
    None (the daemon's own thread)."""
    if not cfg.broker.ingest_process:
        return None

    def build(inbox: queue.Queue[tuple[object, ...]]) -> ProcessIngest:
        return ProcessIngest(cfg.broker, cfg.venue, cfg.subscribe, inbox, cfg.knows)

    return build


class ProcessIngest:
    """`Ingest` for the daemon (railbird.daemon.worker), its MQTT client in a child process
    (`child_main`). `inbox`: the daemon's queue, which gets the child's items in order."""

    def __init__(
        self,
        bcfg: BrokerConfig,
        venue: str,
        tables: list[str],
        inbox: queue.Queue[tuple[object, ...]],
        knows: Callable[[str, str | None, str | None], bool] | None = None,
    ) -> None:
        self.bcfg = bcfg
        self.venue = venue
        self.tables = list(tables)
        self.inbox = inbox
        self.knows = knows
        self.connected = threading.Event()
        self.expect_session = False
        self.connect_error = ""
        self.restarts = 0  # children that died and were started again
        for c in COUNTERS:
            setattr(self, c, 0)
        self._base = dict.fromkeys(COUNTERS, 0)  # the counts of children that died
        self._conn: Connection | None = None
        self._proc: Any = None
        self._send_lock = threading.Lock()
        self._stopping = False
        self._reader: threading.Thread | None = None

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        self._stopping = False
        self._spawn()

    def _spawn(self) -> None:
        # a plain child (`python -m railbird.daemon.ingestproc FD`), not multiprocessing's
        # spawn, which would import the caller's main module again, nor a fork, which would
        # copy the locks of the daemon's other threads
        mine, theirs = socket.socketpair()
        proc = subprocess.Popen(
            [sys.executable, "-m", "railbird.daemon.ingestproc", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env=child_env(),
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        conn = Connection(mine.detach())
        init = (
            self.bcfg,
            self.venue,
            self.tables,
            self.knows,
            self.expect_session,
            logging.getLogger("railbird").getEffectiveLevel(),
        )
        conn.send_bytes(pickle.dumps(init, pickle.HIGHEST_PROTOCOL))
        # its first word says it built its client and started connecting; a child that
        # cannot (a TLS file it cannot read, say) ends here, and so does the daemon's start
        # the first time, with the child's traceback above it in the log
        try:
            if not conn.poll(START_TIMEOUT_S):
                raise EOFError(f"no word in {START_TIMEOUT_S:.0f} s")
            self._take_status(pickle.loads(conn.recv_bytes())[1])
        except (EOFError, OSError) as e:
            conn.close()
            proc.kill()
            proc.wait()
            raise RuntimeError(f"the MQTT ingest process did not start: {e}") from e
        self._conn, self._proc = conn, proc
        self._reader = threading.Thread(
            target=self._read, args=(conn,), name="ingest-reader", daemon=True
        )
        self._reader.start()

    def stop(self) -> None:
        self._stopping = True
        self._send(("stop",))
        proc = self._proc
        if proc is not None:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(1)
        if self._reader is not None:
            self._reader.join(2)
        if self._conn is not None:
            self._conn.close()
        self.connected.clear()

    # -- the child's side, read here ----------------------------------------------------------
    def _read(self, conn: Connection) -> None:
        put = self.inbox.put
        while True:
            try:
                msg = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                break
            if msg[0] == "items":
                for item in msg[1]:
                    put(item)
                self._take_status(msg[2])
            else:
                self._take_status(msg[1])
        if self._stopping:
            return
        # the child died: a lost link for the daemon, and a new child
        self.connected.clear()
        self.restarts += 1
        self.expect_session = True  # the broker holds the session the dead child had
        for c in COUNTERS:
            self._base[c] = getattr(self, c)
        log.error("the MQTT ingest process ended (exit %s); starting it again", self._exitcode())
        self.inbox.put(("disconnected", now_us()))
        while not self._stopping:
            time.sleep(RESTART_DELAY_S)
            try:
                self._spawn()
                return
            except RuntimeError as e:
                log.error("%s; trying again in %.0f s", e, RESTART_DELAY_S)

    def _exitcode(self) -> object:
        proc = self._proc
        if proc is None:
            return None
        try:
            return proc.wait(1)
        except subprocess.TimeoutExpired:
            return "still running"

    def _take_status(self, st: tuple[bool, str, tuple[int, ...]]) -> None:
        up, self.connect_error, counts = st
        for c, n in zip(COUNTERS, counts, strict=True):
            setattr(self, c, self._base[c] + n)
        if up:
            self.connected.set()
        else:
            self.connected.clear()

    def stats(self) -> dict[str, Any]:
        """For the daemon's stats: the child's pid and how often it was started again."""
        proc = self._proc
        return {"ingest_pid": None if proc is None else proc.pid, "ingest_restarts": self.restarts}

    # -- the daemon's calls -------------------------------------------------------------------
    def _send(self, msg: tuple[object, ...]) -> None:
        conn = self._conn
        if conn is None:
            return
        data = pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)
        try:
            with self._send_lock:
                conn.send_bytes(data)
        except (BrokenPipeError, OSError) as e:
            # the child is gone: what it did not acknowledge the broker sends again to the
            # next one (the reader starts it)
            log.debug("ingest command not sent: %s", e)

    def ack(self, mid: int, qos: int) -> None:
        if qos > 0:
            self._send(("ack", [(mid, qos)]))

    def ack_all(self, acks: list[tuple[int, int]]) -> None:
        """A committed batch's acknowledgements, in one message to the child."""
        if acks:
            self._send(("ack", acks))

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> None:
        self._send(("publish", topic, payload, qos, retain))

    def heartbeat(self, retain: bool = False) -> None:
        self._send(("heartbeat", retain))


if __name__ == "__main__":
    child_main(Connection(int(sys.argv[1])))
