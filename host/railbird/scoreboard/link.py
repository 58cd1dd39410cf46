"""One serial scoreboard: a worker thread that keeps the board showing the latest screen.

Stop-and-wait: one frame in flight; an ACK with its sequence number completes it; a NAK or
`ack_timeout` resends it (same sequence number) up to `retries` times. Only the newest
screen matters, so a screen that arrives while another is queued replaces it. When the port
disappears (USB unplug) the thread closes it, retries opening it every `reopen_interval`
and, once it is back (or whenever the board sends HELLO after a reboot), sends the full
screen and the announcement still running. Nothing on the line can raise out of the thread:
noise is counted in `stats`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

import serial

from rbproto import sbframe

log = logging.getLogger("railbird.scoreboard")


class ScoreboardLink:
    def __init__(
        self,
        port: str,
        baudrate: int = 115200,
        ack_timeout: float = 0.25,
        retries: int = 4,
        reopen_interval: float = 0.5,
        ping_interval: float = 2.0,
        serial_factory=None,
        name: str | None = None,
    ):
        self.port = port
        self.baudrate = baudrate
        self.ack_timeout = ack_timeout
        self.retries = retries
        self.reopen_interval = reopen_interval
        self.ping_interval = ping_interval
        self.serial_factory = serial_factory or (
            lambda url, baud: serial.serial_for_url(
                url, baudrate=baud, timeout=0.02, write_timeout=1.0
            )
        )
        self.name = name or port
        self.stats = dict.fromkeys(
            (
                "opens",
                "open_failures",
                "disconnects",
                "frames_sent",
                "retransmits",
                "acks",
                "naks",
                "timeouts",
                "gave_up",
                "hellos",
                "garbage_bytes",
                "bad_frames",
                "stale_acks",
                "announce_dropped",
                "screens_sent",
            ),
            0,
        )
        self.board_info: dict = {}
        self.connected = False  # the port is open
        self.responsive = False  # the board acknowledged our last frame
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._screen: dict | None = None
        self._screen_dirty = False
        self._ann: tuple[dict, float] | None = None  # (fields, host monotonic end)
        self._ann_queue: deque = deque(maxlen=4)
        self._ser = None
        self._parser = sbframe.Parser()
        self._seq = 0
        self._inflight = None  # [seq, kind, payload, sent_at, tries]
        self._need_full = True
        self._last_tx = 0.0
        self._backoff_until = 0.0
        self._query = False
        self._thread: threading.Thread | None = None

    # -- API (any thread) --------------------------------------------------------------
    def start(self) -> ScoreboardLink:
        self._thread = threading.Thread(
            target=self._run, name=f"scoreboard:{self.name}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(3)
        self._close()

    def set_screen(self, fields: dict) -> None:
        """The full screen (SCREEN frame fields); replaces any screen not yet sent."""
        fields = {k: str(v) for k, v in fields.items() if v is not None}
        with self._lock:
            if fields != self._screen:
                self._screen = fields
                self._screen_dirty = True
        self._wake.set()

    def announce(self, row2: str, row3: str = "", ms: int = 4000) -> None:
        fields = {"t": row2[:16], "u": row3[:16] or None, "d": int(ms)}
        with self._lock:
            if len(self._ann_queue) == self._ann_queue.maxlen:
                self.stats["announce_dropped"] += 1
            self._ann_queue.append(fields)
        self._wake.set()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """True once everything queued has been acknowledged (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                idle = (
                    self._inflight is None
                    and not self._screen_dirty
                    and not self._ann_queue
                    and not self._need_full
                    and self.responsive
                )
            if idle:
                return True
            time.sleep(0.01)
        return False

    # -- worker -------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self._ser is None and not self._open():
                    self._stop.wait(self.reopen_interval)
                    continue
                self._step()
            except (serial.SerialException, OSError) as e:
                log.warning("scoreboard %s: port lost: %s", self.name, e)
                self.stats["disconnects"] += 1
                self._close()
            except Exception:  # never let a scoreboard take the daemon down
                log.exception("scoreboard %s: unexpected error", self.name)
                self._close()
                self._stop.wait(self.reopen_interval)

    def _open(self) -> bool:
        try:
            self._ser = self.serial_factory(self.port, self.baudrate)
        except (serial.SerialException, OSError, ValueError) as e:
            self.stats["open_failures"] += 1
            if self.stats["open_failures"] in (1, 10) or self.stats["open_failures"] % 100 == 0:
                log.info("scoreboard %s: cannot open: %s", self.name, e)
            return False
        self.stats["opens"] += 1
        self.connected = True
        self._parser = sbframe.Parser()
        self._inflight = None
        self._need_full = True
        self._query = True  # first ask the board who it is (it answers HELLO)
        log.info("scoreboard %s: port open", self.name)
        return True

    def _close(self) -> None:
        ser, self._ser = self._ser, None
        self.connected = False
        self.responsive = False
        self._inflight = None
        self._need_full = True
        if ser is not None:
            try:
                ser.close()
            except Exception:  # the port is being dropped anyway: note why, go on
                log.debug("scoreboard %s: close failed", self.name, exc_info=True)

    def _step(self) -> None:
        ser = self._ser
        n = ser.in_waiting
        data = ser.read(n or 1)
        if data:
            before_g, before_b = self._parser.garbage, self._parser.bad
            for seq, kind, payload in self._parser.feed(data):
                self._on_frame(seq, kind, payload)
            self.stats["garbage_bytes"] += self._parser.garbage - before_g
            self.stats["bad_frames"] += self._parser.bad - before_b
        now = time.monotonic()
        inf = self._inflight
        if inf is not None:
            if now - inf[3] >= self.ack_timeout:
                self.stats["timeouts"] += 1
                self._retransmit(now)
            return
        frame = self._next_frame(now)
        if frame is not None:
            self._transmit(*frame, now=now)

    def _on_frame(self, seq, kind, payload) -> None:
        inf = self._inflight
        if kind == sbframe.HELLO:
            self.stats["hellos"] += 1
            try:
                self.board_info = sbframe.unpack(payload)
            except ValueError:
                self.board_info = {}
            log.info("scoreboard %s: board hello %s", self.name, self.board_info)
            with self._lock:
                self._need_full = True
                self._backoff_until = 0.0
            if inf is not None and inf[1] == sbframe.QUERY and inf[0] == seq:
                self._inflight = None
                self.responsive = True
            return
        if kind == sbframe.ACK:
            if inf is not None and inf[0] == seq:
                self.stats["acks"] += 1
                self._inflight = None
                self.responsive = True
            else:
                self.stats["stale_acks"] += 1
            return
        if kind == sbframe.NAK or kind is None:
            if kind is None:
                return  # a corrupt frame from the board: its ACK, if any, will time out
            self.stats["naks"] += 1
            if inf is not None:
                self._retransmit(time.monotonic())

    def _retransmit(self, now) -> None:
        inf = self._inflight
        if inf[4] >= self.retries:
            self.stats["gave_up"] += 1
            self.responsive = False
            self._inflight = None
            with self._lock:
                self._need_full = True  # whatever it shows now, bring it up to date later
            self._backoff_until = now + self.ping_interval
            return
        self.stats["retransmits"] += 1
        inf[4] += 1
        inf[3] = now
        self._write(sbframe.encode(inf[0], inf[1], inf[2]))

    def _next_frame(self, now):
        if now < self._backoff_until:
            self._wake.wait(0.02)
            return None  # the board stopped answering: one attempt per ping interval
        if self._query:
            self._query = False
            return (sbframe.QUERY, "")
        with self._lock:
            if (self._need_full or self._screen_dirty) and self._screen is not None:
                self._screen_dirty = False
                if self._need_full:
                    self._need_full = False
                    # after the screen, the announcement that is still running
                    if self._ann is not None and self._ann[1] > now and not self._ann_queue:
                        left = int((self._ann[1] - now) * 1000)
                        f = dict(self._ann[0], d=left)
                        self._ann_queue.append(f)
                self.stats["screens_sent"] += 1
                return (sbframe.SCREEN, sbframe.pack(self._screen))
            if self._need_full and self._screen is None:
                self._need_full = False
            if self._ann_queue:
                f = self._ann_queue.popleft()
                self._ann = (f, now + int(f["d"]) / 1000.0)
                return (sbframe.ANNOUNCE, sbframe.pack(f))
        if now - self._last_tx >= self.ping_interval:
            return (sbframe.PING, "")
        self._wake.wait(0.02)
        self._wake.clear()
        return None

    def _transmit(self, kind, payload, now) -> None:
        self._seq = (self._seq + 1) & 0xFF
        self._inflight = [self._seq, kind, payload, now, 0]
        self._write(sbframe.encode(self._seq, kind, payload))

    def _write(self, data: bytes) -> None:
        self._last_tx = time.monotonic()
        self.stats["frames_sent"] += 1
        self._ser.write(data)
