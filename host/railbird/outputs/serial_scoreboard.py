"""Output: the serial LED scoreboard of one table (protocol/SCOREBOARD.md).

    SerialScoreboardOutput(port="/dev/serial/by-id/usb-...", venue="bar", table="t1")

Give the port by a stable path (/dev/serial/by-id/...) so a replug into another USB socket
finds the same board. on_state never blocks: it hands the newest screen to the link thread.
"""

from __future__ import annotations

import logging

from railbird.outputs.base import Output
from railbird.scoreboard.link import ScoreboardLink
from railbird.scoreboard.screens import board_announcement, screen_fields

log = logging.getLogger("railbird.scoreboard")


class SerialScoreboardOutput(Output):
    name = "serial-scoreboard"

    def __init__(
        self,
        port: str,
        venue: str,
        table: str,
        baudrate: int = 115200,
        announce: bool = True,
        **link_options,
    ):
        self.venue = venue
        self.table = table
        self.announce = announce
        self.link = ScoreboardLink(port, baudrate=baudrate, name=f"{venue}/{table}", **link_options)
        self.errors = 0

    def start(self) -> None:
        self.link.start()

    def stop(self) -> None:
        self.link.stop()

    @property
    def stats(self) -> dict:
        return dict(self.link.stats, errors=self.errors)

    def on_state(self, venue, table, game, state, fen, announcements) -> None:
        if venue != self.venue or table != self.table:
            return
        try:
            self.link.set_screen(screen_fields(game, state, fen))
            if self.announce:
                ann = board_announcement(announcements, state)
                if ann is not None:
                    self.link.announce(*ann)
        except Exception:  # a bad state must not stop scoring
            self.errors += 1
            log.exception("scoreboard %s/%s: cannot render state", venue, table)
