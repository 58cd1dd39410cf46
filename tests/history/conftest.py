"""Fixtures of the history tests: a fixed local time zone (the business days and hours they
expect are those of Berlin, UTC+1 in winter, whatever the machine's zone) and the journal of
a short night at the club."""

from __future__ import annotations

import os
import time

import pytest

from tests.history.nights import Night, at, tenball_race

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


@pytest.fixture
def journal(tmp_path):
    """t1: Ann v Bob from 20:00 (drops: FR Ann, FL Bob, SL the cue ball on Bob's break, HL
    Ann, HR Bob, all in the 20:00 hour); t2, a table without a game: HL HL at 23:30, SR at
    01:15 (the same business day), FR FL at 07:00 the next day."""
    path = tmp_path / "journal.sqlite"
    night = Night(path)
    tenball_race(night, "t1", at("2026-11-27 20:00"))
    night.table("t2", None)
    night.shot("t2", at("2026-11-27 23:30"), ["HL", "HL"])
    night.shot("t2", at("2026-11-28 01:15"), ["SR"])
    night.shot("t2", at("2026-11-28 07:00"), ["FR", "FL"])
    night.close()
    return path
