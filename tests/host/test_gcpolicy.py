"""The daemon process's garbage collection (railbird.daemon.gcpolicy): what lives is frozen
out of the collector's walks once a minute, and thawed and collected once an hour, so no
cyclic garbage is kept for longer than that."""

import gc
import weakref

from railbird.daemon.gcpolicy import FREEZE_EVERY_S, THAW_EVERY_S, GcPolicy


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


def test_freezes_each_minute_and_collects_what_a_freeze_kept_within_the_hour():
    now = [1000.0]
    policy = GcPolicy(clock=lambda: now[0])
    gc.collect()
    try:
        policy.step()
        assert policy.freezes == 0  # not before a minute has gone by

        alive = Node()
        ref = weakref.ref(alive)
        now[0] += FREEZE_EVERY_S
        policy.step()
        assert policy.freezes == 1 and gc.get_freeze_count() > 0

        del alive  # garbage now, but frozen: a full collection does not walk it
        gc.collect()
        assert ref() is not None

        now[0] += THAW_EVERY_S - FREEZE_EVERY_S
        policy.step()  # the hourly thaw: collected, then the living frozen again
        assert policy.thaws == 1
        assert ref() is None
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()  # the test process's own objects back to normal


def test_the_start_collects_once_and_freezes_at_once():
    """What the daemon's start built is frozen when it is up, not a minute later (the first
    minute after a restart is when every referee signs in again), and garbage the start left
    is collected first, not frozen."""
    now = [1000.0]
    policy = GcPolicy(clock=lambda: now[0])
    gc.unfreeze()
    try:
        garbage = Node()
        ref = weakref.ref(garbage)
        del garbage
        alive = Node()
        now[0] += 5.0
        policy.start()
        assert ref() is None  # collected, not frozen
        assert gc.get_freeze_count() > 0 and policy.frozen_at == now[0]
        assert alive.me is alive
        now[0] += FREEZE_EVERY_S - 1
        policy.step()
        assert policy.freezes == 0  # the next freeze a minute after the start's
    finally:
        gc.unfreeze()
