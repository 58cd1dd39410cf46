"""Retention of the journal's raw inputs: exported, then deleted, once a snapshot covers them
and they are older than `journal_keep_inputs_days` (docs/host.md "Journal and restart").

`run` cuts at the oldest snapshot taken before the age limit that is newer than the last cut
(railbird.daemon.snapshots keeps one a day for this), so the journal keeps that snapshot (the
base) and every input after it: a restart and a replay start from the base at the earliest.
Before anything is deleted the base is loaded once (a snapshot that does not load must not
replace the inputs it covers) and the inputs up to it are written to
`<export_dir>/inputs-<first id>-<last id>.jsonl.gz` (gzip JSON Lines, one input per line:
`id`, `source`, `rx`, `wall`, `topic`, `venue`, `table`, `status`, `reason` and the payload
as `payload` (text), `payload_bytes` (bytes that are UTF-8, as text) or `payload_b64`), made
durable (fsync, atomic rename) before the one transaction that deletes the inputs and
records the cut. A crash between the two repeats the export under the same name.

Derived records (events, shots, states, ...) are kept: they are the venue's history, and the
outputs' restore reads the last day of them. One cut per call; the daemon calls it at most
every `CHECK_EVERY_S` while idle.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import os
import time
from pathlib import Path
from typing import Any, TypedDict

from railbird import private
from railbird.config import Config
from railbird.daemon import snapshots
from railbird.daemon.journal import Journal

log = logging.getLogger("railbird.retention")

CHECK_EVERY_S = 3600.0
DAY_S = 86_400

# An `inputs` row as `_export` selects it: id, source, rx, wall, topic, payload, venue, tbl,
# status, reason
InputRow = tuple[
    int,
    str,
    int | None,
    float,
    str | None,
    bytes | str | None,
    str | None,
    str | None,
    str | None,
    str | None,
]


class Cut(TypedDict):
    """One cut (`run`): the inputs deleted, the snapshot's input id, the export file."""

    deleted: int
    upto: int
    file: str


def export_dir(cfg: Config, journal: Journal) -> Path:
    configured = cfg.journal_export_dir
    return Path(configured) if configured else Path(journal.path + ".exports")


def due(journal: Journal, keep_days: int, now: float) -> int | None:
    """The input id to cut at (the snapshot), or None: nothing is old enough."""
    if not keep_days or keep_days <= 0:
        return None
    cut: int | None = journal.db.execute(
        "SELECT MIN(input_id) FROM snapshots WHERE input_id > ? AND wall < ?",
        (snapshots.base(journal), now - keep_days * DAY_S),
    ).fetchone()[0]
    return cut


def run(cfg: Config, journal: Journal, now: float | None = None) -> Cut | None:
    """One cut if one is due: -> {"deleted", "upto", "file"} or None."""
    now = time.time() if now is None else now
    cut = due(journal, cfg.journal_keep_inputs_days, now)
    if cut is None:
        return None
    snapshots.load(cfg, journal, cut)  # raises: nothing is deleted
    first = snapshots.base(journal)
    path = _export(journal, first, cut, export_dir(cfg, journal))
    journal.begin()
    try:
        n = journal.db.execute("DELETE FROM inputs WHERE id > ? AND id <= ?", (first, cut)).rowcount
        journal.db.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", (snapshots.BASE_KEY, str(cut))
        )
        journal.db.execute("DELETE FROM snapshots WHERE input_id < ?", (cut,))
        journal.commit()
    except BaseException:
        journal.rollback()
        raise
    log.info("retention: %d input(s) up to id %d exported to %s and deleted", n, cut, path)
    return {"deleted": n, "upto": cut, "file": str(path)}


def _line(row: InputRow) -> str:
    iid, source, rx, wall, topic, payload, venue, tbl, status, reason = row
    d: dict[str, object] = {"id": iid, "source": source, "rx": rx, "wall": wall, "topic": topic}
    if isinstance(payload, str):
        d["payload"] = payload
    elif payload is not None:
        payload = bytes(payload)
        try:
            d["payload_bytes"] = payload.decode("utf-8")
        except UnicodeDecodeError:
            d["payload_b64"] = base64.b64encode(payload).decode("ascii")
    d.update(venue=venue, table=tbl, status=status, reason=reason)
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)


def _export(journal: Journal, first: int, upto: int, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"inputs-{first + 1:012d}-{upto:012d}.jsonl.gz"
    tmp = path.with_name(path.name + ".tmp")
    rows = journal.db.execute(
        "SELECT id, source, rx, wall, topic, payload, venue, tbl, status, reason FROM inputs"
        " WHERE id > ? AND id <= ? ORDER BY id",
        (first, upto),
    )
    with private.open_private(tmp, "wb") as f:  # the journal's inputs: 0600 like the journal
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as gz:
            for row in rows:
                gz.write((_line(row) + "\n").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def read_export(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The inputs of an export file, each as the journal held it (`payload` as str or
    bytes, as stored)."""
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if "payload_bytes" in d:
                d["payload"] = d.pop("payload_bytes").encode("utf-8")
            elif "payload_b64" in d:
                d["payload"] = base64.b64decode(d.pop("payload_b64"))
            out.append(d)
    return out
