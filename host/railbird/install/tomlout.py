"""TOML out: the host config as `railbird setup` writes it (Python reads TOML but has no
writer, and the few value types of a host config need no dependency).

`dumps(d)` handles what a host config holds: strings, integers, booleans, lists of those,
tables and lists of tables (`[[outputs.serial]]`); `tomllib.loads(dumps(d)) == d`. An
empty table is written as its header, since some mean something (`[outputs.web]` turns the
web server on).
"""

from __future__ import annotations

import json
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string (ASCII, \uXXXX escapes) is a TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}: {v!r}")


def _is_tables(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dumps(d: dict, header: str = "") -> str:
    """`d` as a TOML document; `header` (lines without `#`) goes first as comments."""
    out = [f"# {line}".rstrip() for line in header.splitlines()]
    if out:
        out.append("")
    _section(d, [], out, top=True)
    return "\n".join(out).rstrip("\n") + "\n"


def _section(d: dict, path: list, out: list, top: bool = False, array: bool = False) -> None:
    plain = {k: v for k, v in d.items() if not isinstance(v, dict) and not _is_tables(v)}
    tables = {k: v for k, v in d.items() if isinstance(v, dict)}
    arrays = {k: v for k, v in d.items() if _is_tables(v)}
    header = not top and bool(array or plain or not (tables or arrays))
    if header:
        name = ".".join(key(p) for p in path)
        out.append(f"[[{name}]]" if array else f"[{name}]")
    if header or plain:
        out.extend(f"{key(k)} = {value(v)}" for k, v in plain.items())
        out.append("")
    for k, v in tables.items():
        _section(v, [*path, k], out)
    for k, v in arrays.items():
        for item in v:
            _section(item, [*path, k], out, array=True)
