"""Output: the serial LED scoreboard of one table (protocol/SCOREBOARD.md).

    SerialScoreboardOutput(port="/dev/serial/by-id/usb-...", venue="bar", table="t1")

Give the port by a stable path (/dev/serial/by-id/...) so a replug into another USB socket
finds the same board. on_state never blocks: it hands the newest screen to the link thread.
While a shot clock runs (the state's `shot_clock`, docs/displays.md "Shot clock") a small
thread renders the screen again as the seconds change: the board counts nothing itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from railbird.outputs.base import Output
from railbird.scoreboard.link import ScoreboardLink
from railbird.scoreboard.screens import board_announcement, screen_fields

log = logging.getLogger("railbird.scoreboard")
INPLAY_MS = 6000  # about a shot's quiet time: the shot's own ruling follows when it closes
CLOCK_POLL_S = 0.1  # how often the shot clock's seconds are looked at (a frame only on change)


def monotonic_us() -> int:
    """Table time now: the host's CLOCK_MONOTONIC in µs, the axis the daemon's ticks and the
    shot clock's deadlines are on (railbird.daemon.ingest.now_us)."""
    return time.monotonic_ns() // 1000


class SerialScoreboardOutput(Output):
    name = "serial-scoreboard"

    def __init__(
        self,
        port: str,
        venue: str,
        table: str,
        baudrate: int = 115200,
        announce: bool = True,
        now: Callable[[], int] = monotonic_us,
        **link_options,
    ):
        self.venue = venue
        self.table = table
        self.announce = announce
        self.game: str | None = None
        self.link = ScoreboardLink(port, baudrate=baudrate, name=f"{venue}/{table}", **link_options)
        self.errors = 0
        self.now = now
        self._shown: tuple[str, dict, str | None] | None = None  # (game, state, fen) shown
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self) -> None:
        self.link.start()
        self._ticker = threading.Thread(target=self._tick, name="scoreboard-clock", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        self.link.stop()

    def _tick(self) -> None:
        """The shot clock's seconds: the screen again while a count runs (the link sends a
        frame only when the fields changed)."""
        while not self._stop.wait(CLOCK_POLL_S):
            shown = self._shown
            if shown is None or (shown[1].get("shot_clock") or {}).get("status") != "running":
                continue
            try:
                game, state, fen = shown
                self.link.set_screen(screen_fields(game, state, fen, now_us=self.now()))
            except Exception:  # a bad state must not stop the clock thread
                self.errors += 1
                log.exception("scoreboard %s/%s: cannot render the clock", self.venue, self.table)

    @property
    def stats(self) -> dict:
        return dict(self.link.stats, errors=self.errors)

    def on_inplay(self, venue, table, inplay) -> None:
        """A pocketed ball at once, as an ANNOUNCE marked provisional (protocol/SCOREBOARD.md
        "In play"): `DOWN   2` over `FR  PROV` (the last ball's pocket), in 14.1 `2PT PROV`
        (the points the object balls would score). The ruling replaces it when the shot
        closes; a shot just opened with nothing down shows nothing."""
        if venue != self.venue or table != self.table or not self.announce:
            return
        down = inplay.get("pocketed") or []
        if not down:
            return
        obj = sum(1 for p in down if p.get("ball") != 0)
        if self.game == "14.1":
            # "2PT PROV", not "+2  PROV": seven segments have no '+', and the board drew it
            # as '-', minus two points while the player was scoring them
            row3 = (f"{obj}PT PROV" if obj < 10 else f"{obj}PTPROV") if obj else "CUE PROV"
        else:
            row3 = f"{down[-1].get('pocket') or '?'!s:<4}PROV"
        self.link.announce(f"DOWN {len(down):>3}", row3, INPLAY_MS)

    def on_state(self, venue, table, game, state, fen, announcements) -> None:
        if venue != self.venue or table != self.table:
            return
        self.game = game
        try:
            self._shown = (game, state, fen)
            self.link.set_screen(screen_fields(game, state, fen, now_us=self.now()))
            if self.announce:
                ann = board_announcement(announcements, state)
                if ann is not None:
                    self.link.announce(*ann)
        except Exception:  # a bad state must not stop scoring
            self.errors += 1
            log.exception("scoreboard %s/%s: cannot render state", venue, table)
