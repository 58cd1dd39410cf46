"""Business days and times for people, in the host's local time zone (`TZ`).

A business day starts at `day_start_hour` local time (`[outputs] day_start_hour`, default
06:00), as the displays' pocket counts do (railbird.outputs.tables): a night that runs past
midnight is one day. A period `--from A --to B` is the business days A to B, both included.
"""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta


class PeriodError(ValueError):
    pass


FIRST_YEAR, LAST_YEAR = 1970, 9998  # a period's days, with room around them for arithmetic


def parse_day(text: str, what: str) -> date:
    try:
        day = date.fromisoformat(text)
    except (TypeError, ValueError):
        raise PeriodError(f"{what} {text!r}: not a date (YYYY-MM-DD)") from None
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise PeriodError(f"{what} {text!r}: give a year from {FIRST_YEAR} to {LAST_YEAR}")
    return day


def day_start(day: date, day_start_hour: int) -> float:
    """The wall-clock time the business day `day` begins."""
    local = datetime(day.year, day.month, day.day, int(day_start_hour))
    try:
        return time.mktime(local.timetuple())
    except (OverflowError, ValueError):
        raise PeriodError(f"{day}: out of the range of dates this host can keep") from None


def bounds(first: date | None, last: date | None, day_start_hour: int):
    """[since, until) in wall-clock seconds for the business days first..last (None: open)."""
    if first is not None and last is not None and last < first:
        raise PeriodError(f"--to {last} is before --from {first}")
    since = None if first is None else day_start(first, day_start_hour)
    until = None if last is None else day_start(last + timedelta(days=1), day_start_hour)
    return since, until


def business_day(wall: float, day_start_hour: int) -> str:
    return (datetime.fromtimestamp(wall) - timedelta(hours=int(day_start_hour))).date().isoformat()


def iso(wall: float | None) -> str:
    """Local time with its UTC offset, to the second: 2026-11-27T21:04:05+01:00."""
    if wall is None:
        return ""
    return datetime.fromtimestamp(wall).astimezone().isoformat(timespec="seconds")


def clock(wall: float | None) -> str:
    """Local date and time to the minute, for tables on a screen."""
    if wall is None:
        return ""
    return datetime.fromtimestamp(wall).strftime("%Y-%m-%d %H:%M")


def hours(day_start_hour: int) -> list[str]:
    """The 24 hours of a business day in order ("06" .. "23", "00" .. "05")."""
    return [f"{(int(day_start_hour) + i) % 24:02d}" for i in range(24)]


def days(first: date, last: date) -> list[str]:
    out, d = [], first
    while d <= last:
        out.append(d.isoformat())
        d += timedelta(days=1)
    return out
