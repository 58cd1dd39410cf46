"""The five screens' latency benchmark (railbird.bench.screens, `make bench`): how it
matches a screen's changes to the drops, and one short run in which every screen — the
referee's phone, the table page, the venue board, the overlay in a real Chromium and the
LED board on a pty — shows every ball in play. Behaviour only: the latency is the bench's
to print, never asserted here."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from railbird.bench import screens
from railbird.bench.screens import GROUP, shown_times


def test_a_change_before_the_drop_or_with_too_few_balls_is_not_its_showing():
    published = [10.0, 10.1]
    changes = [(9.0, 8), (10.05, 0), (10.06, 1), (10.3, 2)]
    assert shown_times(published, changes) == [10.06, 10.3]


def test_one_update_with_two_balls_shows_both():
    assert shown_times([1.0, 1.1], [(1.2, 2)]) == [1.2, 1.2]


def test_a_ball_never_shown_ends_the_list():
    assert shown_times([1.0, 1.1, 1.2], [(1.05, 1)]) == [1.05]


@given(st.lists(st.floats(0.0, 0.2), min_size=1, max_size=3 * GROUP))
def test_a_screen_that_shows_each_ball_at_once_is_matched_ball_for_ball(delays):
    """Shots of GROUP balls, 1 s apart; the screen counts up within a shot and clears
    between shots: every drop is matched to its own showing."""
    published = [j // GROUP + (j % GROUP) * 0.01 for j in range(len(delays))]
    changes = []
    for j, (p, d) in enumerate(zip(published, delays, strict=True)):
        changes.append((p + 0.005 + d, j % GROUP + 1))
        if j % GROUP == GROUP - 1:
            changes.append((p + 0.5, 0))
    changes.sort()
    shown = shown_times(published, changes)
    assert len(shown) == len(published)
    assert all(w >= p for p, w in zip(published, shown, strict=True))


@pytest.mark.browser
@pytest.mark.broker
@pytest.mark.slow
def test_every_screen_shows_every_ball_in_play(tmp_path):
    r = screens.bench_screens(GROUP, str(tmp_path))
    assert set(r["screens"]) == {"phone", "table page", "venue board", "overlay", "LED board"}
    assert all(n == 0 for n in r["missed"].values()), r["missed"]
    assert all(p is not None and p["n"] >= GROUP for p in r["screens"].values()), r
    assert len(screens.lines(r)) == 6


@pytest.mark.broker
@pytest.mark.slow
def test_the_web_stream_bench_sees_every_drop(tmp_path):
    """railbird.bench.inplay read the stream with `Host: bench`, which the web server's
    Host allow-list refuses: `make bench` printed "no drop reached the web stream" for a
    host that was fine. Every drop must reach it."""
    from railbird.bench import inplay

    r = inplay.bench_inplay(inplay.GROUP, str(tmp_path))
    assert r["inplay"] is not None and r["missed"] == 0, r
