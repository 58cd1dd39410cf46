"""The one order in which tables are listed anywhere a person reads them: natural order, so
`t2` comes before `t10` (a plain string sort gives t1, t10, t2). Boards, feeds, history and
the command line all sort with `natural_key`; the web pages use its JavaScript twin,
`RB.naturalKey` in outputs/web/static/common.js, and tests/host/test_table_order.py holds the
two to the same order.

A name is split into runs of digits and runs of anything else. Text runs compare by code
point (table ids are lowercase slugs: docs/architecture.md, "Identifiers"), digit runs by
their value, then by their length (`t1` before `t01`), and two names still equal so far by
their whole text, so the order is total and the same on every run.

The internal orders that must stay as they are (the pipeline's, the journal's, the golden
corpus's) do not use it: they are not for reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RUNS = re.compile(r"(\d+)")

# even places: a text run; odd places: a digit run as (value, length)
Key = tuple[tuple[str | tuple[int, int], ...], str]


def natural_key(name: str) -> Key:
    """The sort key of a table name: `sorted(names, key=natural_key)`."""
    name = str(name)
    # re.split with one group alternates text, digits, text, ... (a text run may be ""), so
    # two keys have a text run, or a digit run, at the same place and compare run by run
    runs = tuple((int(run), len(run)) if i % 2 else run for i, run in enumerate(_RUNS.split(name)))
    return runs, name


def natural_sorted(names: Iterable[str]) -> list[str]:
    """`names` in natural order."""
    return sorted(names, key=natural_key)


def pair_key(key: tuple[str, str]) -> tuple[Key, Key]:
    """The sort key of a (venue, table) pair: venues, then their tables, in natural order."""
    venue, table = key
    return natural_key(venue), natural_key(table)
