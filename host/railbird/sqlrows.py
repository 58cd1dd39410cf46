"""Many rows into a SQLite table in a few statements (`insert_rows`): multi-row INSERTs of
256, 64, 16, 4 and 1 rows, the largest that fit first, so that every statement is one of a
few (kept compiled by the connection's statement cache) and n rows take about log2(n)
steps. The journal's hot path (railbird.daemon.journal) and the match history
(railbird.history.store) write their rows this way: `executemany` steps SQLite once per
row and lets go of the GIL each time, and the worker then waits behind the MQTT threads
to have it back (docs/performance.md, "Reading them"). Imports nothing of railbird."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence

CHUNKS = (256, 64, 16, 4, 1)
MAX_COLUMNS = 32_766 // CHUNKS[0]  # SQLite's limit of parameters to a statement


@functools.cache
def _statement(insert: str, columns: int, rows: int) -> str:
    one = "(" + ",".join("?" * columns) + ")"
    return f"{insert} VALUES " + ",".join([one] * rows)


def insert_rows(
    db: sqlite3.Connection, insert: str, columns: int, values: Sequence[object]
) -> None:
    """`insert`: the statement up to VALUES ("INSERT OR IGNORE INTO t (a, b)"); `values`:
    the rows' values one row after the other, `columns` to a row."""
    assert columns <= MAX_COLUMNS and len(values) % columns == 0
    rows = len(values) // columns
    done = 0
    for size in CHUNKS:
        while rows - done >= size:
            db.execute(
                _statement(insert, columns, size), values[done * columns : (done + size) * columns]
            )
            done += size
