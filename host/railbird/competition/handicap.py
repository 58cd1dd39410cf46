"""The director's handicap chart: rating differences to races (docs/events.md, "Handicapped
races"). A chart is bands, each from a rating gap up: `0:5-5 50:5-4 100:5-3 150:6-3` says a
gap of 100 to 149 points is a race of 5 for the stronger player against 3 for the weaker.
The bands start at 0, rise, and a wider gap never gives the weaker player a longer race or
the stronger a shorter lead. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from .errors import InvalidName

MAX_RACE = 99  # as the referee app's stepper
MAX_BANDS = 32
_BAND = re.compile(r"(\d{1,4}):(\d{1,2})-(\d{1,2})")


@dataclass(frozen=True, slots=True)
class Band:
    gap: int  # from this rating difference up (to the next band's)
    stronger: int  # racks the higher-rated player needs
    weaker: int  # racks the lower-rated player needs


@dataclass(frozen=True, slots=True)
class Chart:
    bands: tuple[Band, ...]

    def races(self, ra: float, rb: float) -> tuple[int, int]:
        """The races of players rated `ra` and `rb`, in that order."""
        gap = abs(ra - rb)
        band = self.bands[0]
        for b in self.bands:
            if gap >= b.gap:
                band = b
        return (band.stronger, band.weaker) if ra >= rb else (band.weaker, band.stronger)

    def text(self) -> str:
        return " ".join(f"{b.gap}:{b.stronger}-{b.weaker}" for b in self.bands)


def parse(text: str) -> Chart:
    """`0:5-5 50:5-4 100:5-3` (spaces or commas between bands) -> a Chart, or
    `InvalidName` saying what is wrong."""
    items = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if not items:
        raise InvalidName("a chart has at least one band, e.g. 0:5-5 50:5-4 100:5-3")
    if len(items) > MAX_BANDS:
        raise InvalidName(f"a chart has at most {MAX_BANDS} bands")
    bands = []
    for t in items:
        m = _BAND.fullmatch(t)
        if m is None:
            raise InvalidName(f"{t!r}: a band is GAP:STRONGER-WEAKER, e.g. 100:5-3")
        gap, strong, weak = (int(x) for x in m.groups())
        if not 1 <= weak <= strong <= MAX_RACE:
            raise InvalidName(f"{t}: races from 1 to {MAX_RACE}, the stronger's no shorter")
        bands.append(Band(gap, strong, weak))
    if bands[0].gap != 0:
        raise InvalidName("the first band starts at a gap of 0")
    for a, b in itertools.pairwise(bands):
        if b.gap <= a.gap:
            raise InvalidName(f"the bands' gaps rise ({a.gap} then {b.gap})")
        if b.weaker > a.weaker or b.stronger - b.weaker < a.stronger - a.weaker:
            raise InvalidName(
                f"a wider gap gives the weaker player no longer race and the stronger no "
                f"smaller lead ({a.gap}:{a.stronger}-{a.weaker} then {b.gap}:{b.stronger}-"
                f"{b.weaker})"
            )
    return Chart(tuple(bands))
