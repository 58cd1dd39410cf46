"""Outputs of the host daemon: everything that shows a table's game to people.

The daemon calls every configured output with the same three events. An output must never
raise into the daemon (a broken scoreboard must not stop scoring): it logs and counts its
own failures.
"""

from __future__ import annotations


class Output:
    """Base class; override what you need. All methods are called from the daemon thread."""

    name = "output"

    def start(self) -> None:
        """Open ports, connect, start threads."""

    def stop(self) -> None:
        """Release everything; called once at shutdown."""

    def on_shot(self, venue: str, table: str, shot: dict) -> None:
        """An assembled shot: the `shot` message of protocol/SPEC.md (without `v`)."""

    def on_state(self, venue: str, table: str, game: str, state: dict, fen: str,
                 announcements: list[dict]) -> None:
        """The table's game state after an input (the state object of protocol/REFEREE.md),
        its one-line form, and the announcements of that input ({"text", "rule", "level"})."""

    def on_node(self, venue: str, table: str, node: str, status: dict) -> None:
        """A node's latest `status` (or `birth`) message."""
