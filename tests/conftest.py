"""Shared fixtures: a private mosquitto per test, real MicroPython, and venue keys."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from railbird.broker import PrivateBroker

# Property tests: no per-example time limit (this suite runs on a loaded 2-core machine, and
# speed is measured by `make bench`, not by tests). Under CI the examples are derived from
# the test itself, so a run is reproducible; locally they are random and keep exploring.
settings.register_profile("railbird", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", parent=settings.get_profile("railbird"), derandomize=True, print_blob=True
)
settings.load_profile("ci" if os.environ.get("CI") else "railbird")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
# The firmware runs under CPython in many tests (SimNode, the sensing path): make its
# packages importable once, here, as `rbnode` and the scoreboard modules.
if str(REPO / "firmware") not in sys.path:
    sys.path.insert(0, str(REPO / "firmware"))

from harness import micropython as mp_harness  # noqa: E402 - needs tests/ on sys.path (above)
from harness.schedule import file_rank, order_items  # noqa: E402 - needs tests/ on sys.path


def pytest_collection_modifyitems(config, items):
    """The longest files first, so no worker is left alone with them at the end
    (harness/schedule.py says why and where the figures come from)."""
    order_items(items, file_rank())


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


@pytest.fixture(scope="session")
def venue_keys(tmp_path_factory):
    """(venue, other): two real venue keys (railbird.venuekey.Signer, RSA-3072 by openssl),
    the venue's and another one (a self-made set's signer), made once per test process:
    each costs openssl about 0.4 s."""
    from railbird import venuekey

    d = tmp_path_factory.mktemp("venue-keys")
    out = []
    for name in ("venue", "other"):
        venuekey.make(d / f"{name}.pem")
        out.append(venuekey.Signer(d / f"{name}.pem"))
    return tuple(out)
