"""The test schedule (tests/harness/schedule.py) names files that exist, once each: a
renamed or deleted file would silently fall back to collection order and bring back the
long tail the schedule is there to avoid."""

from __future__ import annotations

from pathlib import Path

from harness.schedule import HEAVY_FILES, file_rank

REPO = Path(__file__).resolve().parents[2]


def test_every_scheduled_file_exists_and_is_listed_once():
    paths = [path for path, _ in HEAVY_FILES]
    missing = [p for p in paths if not (REPO / p).is_file()]
    assert not missing, f"tests/harness/schedule.py lists files that do not exist: {missing}"
    assert len(set(paths)) == len(paths), "a file is listed twice"


def test_the_longest_file_is_handed_out_first():
    rank = file_rank()
    longest = max(HEAVY_FILES, key=lambda entry: entry[1])[0]
    assert rank[longest] == 0
    assert sorted(rank.values()) == list(range(len(HEAVY_FILES)))
