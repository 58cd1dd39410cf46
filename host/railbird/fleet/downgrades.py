"""The journal of forced downgrades (`railbird nodes update --force-downgrade`): one JSON
line per node sent back to an older firmware version, written and flushed to disk before
the command goes out: who (the login that ran the rollout, or the one behind sudo), when
(UTC), the node, from and to, the update id and the node's boot it was bound to.

Nodes only move forward in version unless the owner forces it (rbnode.trust on the node,
railbird.fleet.rollout on the host), so this file lists every way back a venue took.
"""

from __future__ import annotations

import getpass
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

DEFAULT = Path("/var/lib/railbird/downgrades.jsonl")


def who() -> str:
    """The person behind the command: sudo's caller, else this login."""
    try:
        return os.environ.get("SUDO_USER") or getpass.getuser()
    except (KeyError, OSError):  # no such user in the password database (a container)
        return f"uid {os.getuid()}"


@dataclass(frozen=True)
class Downgrade:
    at: str  # UTC, ISO 8601
    who: str
    venue: str
    table: str
    node: str
    from_version: str
    to_version: str
    update: str
    boot: int

    @classmethod
    def now(cls, venue, table, node, old, new, update, boot) -> Downgrade:
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return cls(at, who(), venue, table, node, old, new, update, boot)


class Journal:
    """Appends to `path` (made with its folder; mode 0640): `journal(Downgrade)`."""

    def __init__(self, path: Path = DEFAULT):
        self.path = path

    def __call__(self, d: Downgrade) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(d), sort_keys=True) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> list[Downgrade]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        return [Downgrade(**json.loads(x)) for x in text.splitlines() if x.strip()]
