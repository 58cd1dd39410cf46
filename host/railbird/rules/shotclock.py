"""The shot clock's settings: the optional `shot_clock` object of a `match` input
(protocol/REFEREE.md §9b). The clock itself runs in the host (`railbird.core.shotclock`):
the rules only check the settings' form, so a bad number is refused with the match.

Every number is the event's to set; `WPA` is the World Pool-Billiard Association's
tournament shot clock as its member federations publish it: 35 s a shot, a warning at
10 s, one 25 s extension per player per rack, 60 s (no extension) for the first shot after
a legal break and the second shot of a new 14.1 rack, running out a standard foul (6.15,
slow play: the event may name another).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import BadInput
from .frozen import replace
from .inputs import JsonObject, get_bool, get_int, get_str

SECONDS_MAX = 600  # ten minutes: past any code's limit, and a typo in µs is refused


@dataclass(frozen=True, slots=True)
class ShotClockSettings:
    shot_s: int  # the time for a shot
    warning_s: int  # the warning is called when this much is left (0: none)
    extension_s: int  # one extension adds this much (0: no extensions)
    extensions: int  # extensions per player per rack
    first_shot_s: int  # the first shot after a legal break, the 2nd of a new 14.1 rack
    first_shot_extension: bool  # whether that long shot may be extended (WPA: no)
    foul: str  # the foul proposed to the referee when time runs out (a declared foul)

    def as_dict(self) -> JsonObject:
        return {
            "shot_s": self.shot_s,
            "warning_s": self.warning_s,
            "extension_s": self.extension_s,
            "extensions": self.extensions,
            "first_shot_s": self.first_shot_s,
            "first_shot_extension": self.first_shot_extension,
            "foul": self.foul,
        }


WPA = ShotClockSettings(
    shot_s=35,
    warning_s=10,
    extension_s=25,
    extensions=1,
    first_shot_s=60,
    first_shot_extension=False,
    foul="6.15",
)
PRESETS = {"wpa": WPA}
FIELDS = ("preset", *WPA.as_dict())


def parse_shot_clock(obj: object) -> ShotClockSettings | None:
    """The `shot_clock` of a match: absent, null or false is no clock (the default), true or
    `{"preset": "wpa"}` the WPA numbers, and any field given replaces the preset's."""
    try:
        return _parse(obj)
    except BadInput as e:
        if str(e).startswith("shot_clock"):
            raise
        raise BadInput(f"shot_clock {e}") from None


def _parse(obj: object) -> ShotClockSettings | None:
    if obj is None or obj is False:
        return None
    if obj is True:
        return WPA
    if not isinstance(obj, dict):
        raise BadInput("shot_clock must be an object, true or false")
    extra = set(obj) - set(FIELDS)
    if extra:
        raise BadInput(f"unknown shot_clock field(s): {', '.join(sorted(map(str, extra)))}")
    name = get_str(obj, "preset", default="wpa")
    base = PRESETS.get(name)
    if base is None:
        raise BadInput(f"shot_clock preset must be one of {', '.join(PRESETS)}")
    s = replace(
        base,
        shot_s=get_int(obj, "shot_s", 1, SECONDS_MAX, default=base.shot_s),
        extension_s=get_int(obj, "extension_s", 0, SECONDS_MAX, default=base.extension_s),
        extensions=get_int(obj, "extensions", 0, 20, default=base.extensions),
        first_shot_s=get_int(obj, "first_shot_s", 1, SECONDS_MAX, default=base.first_shot_s),
        first_shot_extension=get_bool(
            obj, "first_shot_extension", default=base.first_shot_extension
        ),
        foul=get_str(obj, "foul", default=base.foul),
    )
    warning = get_int(obj, "warning_s", 0, SECONDS_MAX, default=base.warning_s)
    if warning >= min(s.shot_s, s.first_shot_s):
        raise BadInput("shot_clock warning_s must be shorter than shot_s and first_shot_s")
    return replace(s, warning_s=warning)
