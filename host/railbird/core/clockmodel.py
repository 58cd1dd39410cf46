"""Per-node clock model: node time (µs since the node booted) -> table time (host µs).

Built from the four-timestamp exchange of protocol/SPEC.md §"Time sync". Each `sync_result`
gives offset = ((t2 - t1) + (t3 - t4)) / 2 (host - node) and delay = (t4 - t1) - (t3 - t2).
A sample with a small delay bounds the offset tightly (error <= delay / 2), so the model keeps
the last `keep` samples of a boot, uses those whose delay is within `slack_us` of the smallest
(min-delay filtering) and fits offset + drift by least squares over node time. Drift is only
fitted once the used samples span `min_span_us`, and is clamped to +-`max_drift_ppm`.

Without any sample for a boot the model falls back to a provisional offset from arrival
times (`observe_arrival`): something the node stamped at node time t arrived at host time
rx, so offset <= rx - t. Each observation is only an upper bound (the first `events`
message after an offline boot is the oldest batch of the backlog, too large by its age), so
the model keeps the tightest one seen: the newest event of each `events` batch and
`status.uptime_us` (node time at publish) are observations. One absurd stamp (a glitch far
ahead) would give a bound far too tight, and every later event of the boot would map far
into the past, below zero even; no arrival time can prove it wrong, but the node's own clock
can: it runs forward, so a later message stamped well behind the glitch refutes it. An event
stamp that tightens the bound by more than `CORROBORATE_US` is therefore a suspect: it maps
nothing until the next message (of the same boot) is stamped at or after it (less
`CORROBORATE_US`: a node sends a drop after rail hits stamped later), which confirms it;
one stamped earlier refutes it and the bound goes back to what it was. A genuine drop (the
backlog of an offline boot, oldest batch first) so takes effect one message later; a single
glitch moves nothing. `status.uptime_us`, the node's clock read as it publishes, is never a
suspect (a status published amid a backlog is legitimately ahead of the batches after it),
but it may refute one. Provisional table times are never below 0 (the host's clock starts
there). A provisional mapping is also
clamped to the arrival time of the message carrying the event (an event cannot have
happened after it arrived), so it never puts an event in the future nor pushes a table's
reorder watermark ahead of host time. With no arrival time known (offline tools fed bare
node times) the offset is 0. Such events are marked `synced=False`.

Plausibility (`latest`): whatever the model says, an event happened before it arrived. A
synced mapping may be wrong by the fit's uncertainty ((smallest delay + slack) / 2), by a
drift error that grows with the distance from the samples (at most 2 x MAX_DRIFT_PPM), and
by `FUTURE_SLACK_US` more; a table time later than its arrival plus that is not an event
but a broken stamp, which the pipeline quarantines rather than letting it drag the table's
watermark into the future.
All arithmetic is integer or exact-rational-free float on small numbers; the result is an int.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

KEEP = 32
SLACK_US = 2000
MIN_SPAN_US = 10_000_000
MAX_DRIFT_PPM = 500.0
# An arrival bound this much tighter than the current one is a suspect until the next message.
CORROBORATE_US = 1_000_000
# Beyond the model's own error bound: node clock resolution, scheduling on either side.
FUTURE_SLACK_US = 100_000
FUTURE_DRIFT = 2 * MAX_DRIFT_PPM * 1e-6  # `latest`: µs allowed per µs away from the samples

# One exchange: (node time at its middle, offset host - node, round-trip delay).
Sample = tuple[int, float, int]


@dataclass
class BootClock:
    """Clock model of one boot of one node."""

    keep: int = KEEP
    slack_us: int = SLACK_US
    min_span_us: int = MIN_SPAN_US
    samples: list[Sample] = field(default_factory=list)  # (t_node_mid, offset, delay)
    fallback: int | None = None
    suspect: tuple[int, int | None] | None = (
        None  # (t_node, fallback before it): a drop not yet confirmed
    )
    # fitted: offset at t_ref and drift (µs per µs)
    t_ref: int = 0
    offset: float = 0.0
    drift: float = 0.0
    synced: bool = False

    def add_sample(self, t1: int, t2: int, t3: int, t4: int) -> bool:
        if t4 < t1 or t3 < t2:
            return False  # a clock ran backwards: the exchange is broken
        # A slightly negative delay is what a coarse node clock gives for an exchange faster
        # than its resolution (the simulated node steps in 1 ms); it is still a good sample.
        delay = max(0, (t4 - t1) - (t3 - t2))
        off = ((t2 - t1) + (t3 - t4)) / 2.0
        self.samples.append((t1 + (t4 - t1) // 2, off, delay))
        if len(self.samples) > self.keep:
            del self.samples[0]
        self._fit()
        return True

    def _fit(self) -> None:
        dmin = min(s[2] for s in self.samples)
        used = [s for s in self.samples if s[2] <= dmin + self.slack_us]
        n = len(used)
        mx = sum(s[0] for s in used) / n
        my = sum(s[1] for s in used) / n
        span = max(s[0] for s in used) - min(s[0] for s in used)
        drift = 0.0
        if n >= 2 and span >= self.min_span_us:
            sxx = sum((s[0] - mx) ** 2 for s in used)
            sxy = sum((s[0] - mx) * (s[1] - my) for s in used)
            drift = sxy / sxx if sxx else 0.0
            lim = MAX_DRIFT_PPM * 1e-6
            drift = max(-lim, min(lim, drift))
        self.t_ref = int(mx)
        self.offset = my
        self.drift = drift
        self.synced = True

    def observe_arrival(self, t_node: int, rx: int | None, stamp: bool = True) -> None:
        """Something the node stamped at node time `t_node` arrived at host time `rx`: the
        offset is at most rx - t_node. Keep the tightest (smallest) bound, a much tighter
        event `stamp` only once the next message confirms it (module docstring)."""
        if rx is None:
            return
        bound = rx - t_node
        suspect, self.suspect = self.suspect, None
        if suspect is not None and t_node < suspect[0] - CORROBORATE_US:
            # the node's clock reads well behind the suspect stamp: that was a glitch
            before = suspect[1]
            self.fallback = bound if before is None or bound < before else before
            return
        if self.fallback is None or bound < self.fallback - CORROBORATE_US:
            if stamp:
                self.suspect = (t_node, self.fallback)
            self.fallback = bound
        elif bound < self.fallback:
            self.fallback = bound

    def _provisional(self) -> int:
        """The offset provisional mappings use: not a suspect's (module docstring)."""
        if self.suspect is not None and self.suspect[1] is not None:
            return self.suspect[1]
        return self.fallback or 0

    def to_table(self, t_node: int, rx: int | None = None) -> int:
        """Table time of node time `t_node`; `rx`, the arrival time of the message that
        carried it, caps a provisional (unsynced) mapping."""
        if self.synced:
            return t_node + round(self.offset + self.drift * (t_node - self.t_ref))
        t = t_node + self._provisional()
        if rx is not None and t > rx:
            t = rx
        return t if t > 0 else 0

    def to_table_many(self, ts: list[int], rx: int | None = None) -> list[int]:
        """`[to_table(t, rx) for t in ts]` (the times of one message), the model read once."""
        if self.synced:
            offset, drift, t_ref = self.offset, self.drift, self.t_ref
            return [t + round(offset + drift * (t - t_ref)) for t in ts]
        provisional = self._provisional()
        out = []
        for t in ts:
            t += provisional
            if rx is not None and t > rx:
                t = rx
            out.append(t if t > 0 else 0)
        return out

    def latest(self, t_node: int, rx: int | None) -> int | None:
        """The latest plausible table time of something stamped `t_node` that arrived at
        `rx` (None: no arrival time, no bound). Unsynced mappings are capped at `rx`."""
        if rx is None:
            return None
        if not self.synced:
            return rx
        return rx + self._future_allowed_us() + int(FUTURE_DRIFT * abs(t_node - self.t_ref))

    def latest_many(self, ts: list[int], rx: int | None) -> list[int | None]:
        """`[latest(t, rx) for t in ts]` (the times of one message), the model read once."""
        if rx is None:
            return [None] * len(ts)
        if not self.synced:
            return [rx] * len(ts)
        base, t_ref = rx + self._future_allowed_us(), self.t_ref
        return [base + int(FUTURE_DRIFT * abs(t - t_ref)) for t in ts]

    def _future_allowed_us(self) -> int:
        """How far past its arrival a synced stamp may map at the samples: the fit's own
        bound, (smallest delay + slack) / 2, and FUTURE_SLACK_US (`latest`)."""
        return (min(s[2] for s in self.samples) + self.slack_us) // 2 + FUTURE_SLACK_US

    def uncertainty_us(self) -> int | None:
        """How far this model's table times may be off, as measured (None: not synced): the
        fit's own bound, (smallest delay + slack) / 2, plus the largest distance of a sample
        it used from the fitted line. Sizes the reorder window between a table's nodes
        (railbird.core.pipeline `cross_window`)."""
        if not self.synced:
            return None
        dmin = min(s[2] for s in self.samples)
        lim = dmin + self.slack_us
        resid = 0.0
        for tn, off, delay in self.samples:
            if delay <= lim:
                r = abs(off - self.offset - self.drift * (tn - self.t_ref))
                if r > resid:
                    resid = r
        return lim // 2 + int(resid)

    def describe(self) -> dict[str, int | float | bool]:
        if not self.synced:
            return {"synced": False, "offset_us": self._provisional(), "samples": 0}
        used_delay = min(s[2] for s in self.samples)
        return {
            "synced": True,
            "offset_us": round(self.offset),
            "drift_ppm": round(self.drift * 1e6, 3),
            "samples": len(self.samples),
            "uncertainty_us": used_delay // 2,
        }


class ClockModels:
    """All boots of all nodes of one daemon: (node, boot) -> BootClock. The pipeline keeps
    only each node's recent boots (`forget`)."""

    def __init__(self) -> None:
        self._clocks: dict[tuple[str, int], BootClock] = {}

    def get(self, node: str, boot: int) -> BootClock:
        c = self._clocks.get((node, boot))
        if c is None:
            c = self._clocks[(node, boot)] = BootClock()
        return c

    def forget(self, node: str, boot: int) -> None:
        self._clocks.pop((node, boot), None)

    def add_sync(self, node: str, boot: int, msg: Mapping[str, int]) -> bool:
        return self.get(node, boot).add_sample(msg["t1"], msg["t2"], msg["t3"], msg["t4"])

    def describe(self) -> dict[str, dict[str, int | float | bool]]:
        return {f"{n}/{b}": c.describe() for (n, b), c in sorted(self._clocks.items())}
