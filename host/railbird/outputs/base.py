"""The `Output` interface every display implements; see the package docstring."""

from __future__ import annotations

from railbird.core.health import Report
from railbird.core.records import ShotRecord, StateRecord


class Output:
    """Base class; override what you need. All methods are called from the daemon thread."""

    name = "output"

    def start(self) -> None:
        """Open ports, connect, start threads."""

    def stop(self) -> None:
        """Release everything; called once at shutdown."""

    def begin_batch(self) -> None:
        """The records of one batch of inputs (or a tick) follow, up to `end_batch`: an
        output may keep what it shows of a table and send only the newest."""

    def end_batch(self) -> None:
        """The records since `begin_batch` were all handed over."""

    def on_shot(self, venue: str, table: str, shot: dict) -> None:
        """An assembled shot: the `shot` message of protocol/SPEC.md (without `v`)."""

    def on_state(
        self, venue: str, table: str, game: str, state: dict, fen: str, announcements: list[dict]
    ) -> None:
        """The table's game state after an input (the state object of protocol/REFEREE.md),
        its one-line form, and the announcements of that input ({"text", "rule", "level"})."""

    def on_inplay(self, venue: str, table: str, inplay: dict) -> None:
        """The shot still in play, PROVISIONAL: `{"shot", "start", "pocketed": [{"pocket",
        "ball"?: 0 for the cue ball, "t"}], "provisional": true}`, sent as soon as a pocketed
        ball is released (and with an empty list when a shot opens at a strike), before the
        shot closes. Show it as provisional; the shot's `on_shot` and `on_state` that follow
        when it closes replace it (docs/displays.md "In play")."""

    def on_node(self, venue: str, table: str, node: str, status: dict) -> None:
        """A node's latest `status` (or `birth`) message."""

    def on_sensors(self, venue: str, table: str, report: Report) -> None:
        """The table's sensor health (railbird.core.health.Report: ok, suspect channels and
        what each changes, or unknown), at start-up and whenever it changes: after a shot's
        close, never with every shot (docs/shots.md "Sensor health")."""

    def restore(
        self, venue: str, table: str, history: list[ShotRecord | StateRecord], nodes: dict
    ) -> None:
        """Called once per table at start-up, after `start` and the journal replay, instead
        of re-sending everything: `history` is the table's recent `ShotRecord`s and
        `StateRecord`s (railbird.core.records) in journal order (each with `wall`, the
        wall-clock time it was journalled: enough for today's pocket counts; the first one
        is the state before that window, or the configured match, with `wall` None),
        `nodes` the latest status per node. Show the table as it is now, without
        re-announcing anything. The default shows the last state with no announcements and
        the nodes' status; outputs that count shots override it."""
        last = next((r for r in reversed(history) if isinstance(r, StateRecord)), None)
        if last is not None:
            self.on_state(venue, table, last.game, last.state, last.fen, [])
        for node, status in sorted(nodes.items()):
            self.on_node(venue, table, node, status)
