"""Waiting for what another thread or process does: poll a condition rather than sleep a
fixed time (fast when it is quick, patient on a loaded machine).

    v = wait_for(lambda: sink.last(topic), "the state feed")   # AssertionError on timeout
    assert poll(lambda: out.stats["published"] >= n), out.stats  # falsy on timeout
"""

from __future__ import annotations

import asyncio
import time


def poll(cond, timeout: float = 30.0, interval: float = 0.02):
    """The first true value of `cond()` within `timeout` s; after that, its last value (a
    false one), for the caller to assert with a message of its own. The default is
    generous: a message over a real broker took over 10 s beside two `yes` and make test's
    three workers (tests/displays/test_feeds_ha.py, issue 21's loaded runs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(interval)
    return cond()


def wait_for(cond, what="the condition", timeout: float = 30.0, interval: float = 0.02):
    """The first true value of `cond()` within `timeout` s, or AssertionError naming `what`
    (a string, or a callable that builds the message when the wait fails)."""
    v = poll(cond, timeout, interval)
    if v:
        return v
    raise AssertionError(
        f"timed out after {timeout} s waiting for {what() if callable(what) else what}"
    )


async def until(cond, timeout: float = 10.0, interval: float = 0.01) -> None:
    """`wait_for` inside an event loop: awaits instead of blocking it."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s")
        await asyncio.sleep(interval)
