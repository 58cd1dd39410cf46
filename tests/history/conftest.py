"""A fixed local time zone for the history tests: the business days and hours they expect
are those of Berlin (UTC+1 in winter), whatever the machine's zone."""

from __future__ import annotations

import os
import time

import pytest

TZ = "Europe/Berlin"


@pytest.fixture(autouse=True)
def berlin_time():
    saved = os.environ.get("TZ")
    os.environ["TZ"] = TZ
    time.tzset()
    yield TZ
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()
