"""A robot installer for calibration tests: acts on the PHYSICAL channels of a simulated
node (SimNode's hardware), whatever the node's current config calls them."""

from __future__ import annotations

import random

CUE_RETURNS = {"HL": 1500, "HR": 1400, "SL": 1100, "SR": 1000, "FL": 600, "FR": 650}
# how long after the cue detector the cue ball reaches the colour station (beside it on
# the return, hardware/colour.md), and between two rolls of one ball past the station
STATION_AFTER_CUE_US = 40_000
ROLL_GAP_US = 400_000


class SimInstaller:
    """`wiring`: pocket -> beam channel and rail -> rail channel as actually wired.
    Each calibration Step makes the matching physical stimulus on `sn.hw`. On a node with
    a colour station (SimNode(colour=3)) the balls roll past it: at the colour step the
    ball asked for, step.count times, and at the cue step the cue ball after the cue
    detector. `colour_rgb`: the table's true colours (simcolour.table_colours; None: the
    nominal ones), what calibration is to learn."""

    def __init__(
        self,
        sn,
        pockets,
        rails,
        *,
        knock_amps=(1500, 1800, 1650),
        crosstalk=0.12,
        noise_amps=(40, 55, 35),
        drop_durs=(28000, 36000),
        cue_ok=True,
        cue_returns=None,
        seed=7,
        skip=(),
        colour_rgb=None,
    ):
        self.sn = sn
        self.pockets, self.rails = dict(pockets), dict(rails)
        self.knock_amps, self.crosstalk = knock_amps, crosstalk
        self.noise_amps, self.drop_durs = noise_amps, drop_durs
        self.cue_ok, self.skip = cue_ok, set(skip)
        # how long the cue ball takes from each pocket to the detector (ms): a small table's
        # return, quicker than a 9 ft table's so the tests stay short
        self.cue_returns = dict(cue_returns or CUE_RETURNS)
        self.cue_delays = {}  # pocket -> the delays (µs) actually played
        self.colour_rgb = colour_rgb
        self.rng = random.Random(seed)
        self.steps = []

    def __call__(self, step):
        self.steps.append((step.kind, step.target))
        if step.target in self.skip:
            return
        getattr(self, "_" + step.kind)(step)

    def _sched(self, fn):
        return self.sn.call(fn)

    def _quiet(self, step):
        hw = self.sn.hw

        def do():
            t = hw.now_us + 5000
            for i, a in enumerate(self.noise_amps):
                hw.schedule_rail(i % 6, t + i * 70000, a)

        self._sched(do)

    def _pocket(self, step):
        hw, ch = self.sn.hw, self.pockets[step.target]

        def do():
            t = hw.now_us + 2000
            for i in range(step.count):
                hw.schedule_drop(ch, t + i * 200000, self.drop_durs[i % len(self.drop_durs)])

        self._sched(do)

    def _rail(self, step):
        hw, ch = self.sn.hw, self.rails[step.target]
        neighbours = [(ch + 1) % 6, (ch + 5) % 6]

        def do():
            t = hw.now_us + 2000
            for i in range(step.count):
                amp = self.knock_amps[i % len(self.knock_amps)]
                at = t + i * 250000
                hw.schedule_rail(ch, at, amp)
                for n in neighbours:
                    hw.schedule_rail(n, at + 300, int(amp * self.crosstalk))

        self._sched(do)

    def _cue(self, step):
        hw = self.sn.hw
        station = hw.colour_sensors() > 0
        beam = self.pockets[step.target]
        expect = self.cue_returns[step.target] * 1000
        delays = [round(expect * self.rng.uniform(0.97, 1.03)) for _ in range(step.count)]
        self.cue_delays[step.target] = delays

        def do():
            t = hw.now_us + 2000
            for d in delays:
                hw.schedule_drop(beam, t, 30000)  # the cue ball drops ...
                if self.cue_ok:  # ... and reaches the return, d later
                    hw.schedule_drop(0, t + d, 30000, kind="cue")
                if station:  # ... and rolls on past the colour station
                    self.sn.balls([0], at_us=t + d + STATION_AFTER_CUE_US, rgb=self.colour_rgb)
                t += d + 300_000  # the installer fetches it and drops it again

        self._sched(do)

    def _colour(self, step):
        """The ball asked for (step.target, its number) rolled past the station step.count
        times, one at a time: the installer fetches it between rolls."""
        ball = int(step.target)

        def do():
            t = self.sn.now_us + 2000
            for i in range(step.count):
                self.sn.balls([ball], at_us=t + i * ROLL_GAP_US, rgb=self.colour_rgb)

        self._sched(do)
