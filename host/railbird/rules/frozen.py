"""`replace` for the rules' frozen values, seven times faster than `dataclasses.replace`.

Every rule step returns a new `State` (36 fields) by `replace`, a dozen or more per shot;
`dataclasses.replace` walks every field's metadata and calls `__init__` again, 14 µs a
call, and was the largest single cost of the rules (a third of the time of
tests/host/test_match_control.py's property run). For a frozen dataclass whose fields are
all set by `__init__` and that has no `__post_init__`, a copy of the instance's `__dict__`
with the changes is the same value in 2 µs. Any other class, and any name that is not a
field (which `dataclasses.replace` refuses with its own TypeError), goes the standard way.

To mypy this is `dataclasses.replace` itself, so its plugin still checks every keyword
against the class's fields and their types.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import replace as replace
else:
    _PLAIN: dict[type, frozenset[str] | None] = {}

    def _plain_fields(cls: type) -> frozenset[str] | None:
        """The field names of `cls` when a `__dict__` copy makes a faithful replacement."""
        try:
            return _PLAIN[cls]
        except KeyError:
            pass
        names = None
        fs = dataclasses.fields(cls)
        if (
            not hasattr(cls, "__post_init__")
            and not hasattr(cls, "__slots__")
            and all(f.init for f in fs)
            and not any(
                isinstance(v, dataclasses.InitVar)
                for v in getattr(cls, "__annotations__", {}).values()
            )
        ):
            names = frozenset(f.name for f in fs)
        _PLAIN[cls] = names
        return names

    def replace(obj: Any, /, **changes: Any) -> Any:
        cls = type(obj)
        names = _plain_fields(cls)
        if names is None or not changes.keys() <= names:
            return dataclasses.replace(obj, **changes)
        new = object.__new__(cls)
        d = new.__dict__
        d.update(obj.__dict__)
        d.update(changes)
        return new
