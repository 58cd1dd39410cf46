"""A request as the routes see it and the reply they give: plain data, no server library, so
the routes (pages.py, desk.py) are functions the aiohttp glue in server.py calls, on the
event loop or in a worker thread."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Req:
    method: str
    parts: list[str]  # the path's segments, percent-decoded
    headers: Mapping[str, str]  # case-insensitive (aiohttp's CIMultiDictProxy)
    addr: str  # the client's IP address
    body: bytes = b""
    too_large: bool = False  # the body was over the limit and not read
    query: Mapping[str, str] = field(default_factory=dict)  # the URL's query, decoded


@dataclass
class Reply:
    status: int
    body: bytes = b""
    ctype: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)


def json_reply(status: int, obj, headers=()) -> Reply:
    return Reply(status, json.dumps(obj).encode(), "application/json", list(headers))


HTML = "text/html; charset=utf-8"
