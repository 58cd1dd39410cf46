"""Pages of a long history (docs/history.md "History pages"): a page holds at most
PAGE_BYTES, and the cursor of the next one names the last match shown (keyset paging:
`store.matches_page`), so a page is found without reading those before it and a match never
shows twice when new ones are added meanwhile.

A cursor is opaque to its users: the key (start, table, id) of the page's last match as
JSON, in URL-safe base64 without padding. A cursor that does not decode to such a key is a
`CursorError` (the web answers 400), never a query.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Iterable

PAGE_BYTES = 1 << 20  # a page of the history, HTML or JSON, at most (issue 23, 4)
MAX_CURSOR = 512  # characters: a real one is under 100


class CursorError(ValueError):
    pass


PageKey = tuple[float, str, int]  # a match's place in the order: (start, table, id)


def encode(key: PageKey) -> str:
    start, table, mid = key
    text = json.dumps([start, table, mid], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(cursor: str) -> PageKey:
    if len(cursor) > MAX_CURSOR:
        raise CursorError("cursor: too long (use the `next` of the page before)")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        start, table, mid = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise CursorError("cursor: not one this server gave (use the `next` of a page)") from None
    if (
        isinstance(start, bool)
        or not isinstance(start, int | float)
        or not math.isfinite(start)
        or not isinstance(table, str)
        or isinstance(mid, bool)
        or not isinstance(mid, int)
    ):
        raise CursorError("cursor: not one this server gave (use the `next` of a page)")
    return float(start), table, mid


def fit(sizes: Iterable[int], budget: int) -> int:
    """How many of the items (their sizes, in order) go on a page with `budget` bytes left:
    as many as fit, and the first always (one match is a few hundred bytes: a page without
    any would never end)."""
    n = used = 0
    for size in sizes:
        if n and used + size > budget:
            break
        used += size
        n += 1
    return n
