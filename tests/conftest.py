"""Shared fixtures: a private mosquitto per test and real MicroPython."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from harness import micropython as mp_harness  # noqa: E402

from railbird.broker import PrivateBroker  # noqa: E402


@pytest.fixture
def broker(tmp_path):
    """A private mosquitto with the project's config (auth, ACL, persistence) on a free
    port. Users: railbird-host/host-secret, railbird-referee/referee-secret,
    railbird-display/display-secret; add nodes with `broker.add_user(node_id, pw)`."""
    b = PrivateBroker(tmp_path / "broker")
    b.start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture
def micropython():
    """Run files in real MicroPython: `micropython(main, paths=[...])` -> MPResult."""
    reason = mp_harness.available()
    if reason:
        pytest.fail(f"real MicroPython unavailable: {reason}")
    return mp_harness.run
