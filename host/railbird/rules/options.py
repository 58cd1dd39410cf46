"""Named rule options.

The seed text (read as the WPA text it translates) is the default edition. An option
switches to a literal Thai reading (`thai_*`), a later WPA edition (`wpa2016_*`,
`wpa2025_*`) or the BCA general rules the third seed comes from (`bca_*`). Every option
is listed in protocol/REFEREE.md; nothing changes silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import BadInput

ALL_GAMES = ("10-ball", "14.1", "9-ball", "8-ball")


@dataclass(frozen=True)
class OptionSpec:
    name: str
    default: object
    games: tuple[str, ...]
    doc: str


_SPECS = (
    OptionSpec(
        "thai_foul_names",
        False,
        ALL_GAMES,
        "Rulings name fouls as the Thai text does ('changing the cue ball', 'stuck ball', "
        "'long stroke') instead of the WPA names.",
    ),
    OptionSpec(
        "thai_9_3_count_cue_ball",
        False,
        ("10-ball",),
        "9.3.2 read literally: the cue ball counts toward the four balls driven to a rail.",
    ),
    OptionSpec(
        "thai_4_3_any_ball",
        False,
        ("14.1",),
        "4.3.2 read literally: any ball pocketed on the opening break meets the break "
        "requirement, not only a called ball.",
    ),
    OptionSpec(
        "thai_4_8_c_apex",
        False,
        ("14.1",),
        "4.8.3 read literally: an interfering 15th ball goes to the apex of the rack, "
        "not to the head spot.",
    ),
    OptionSpec(
        "thai_4_11_fifteen",
        False,
        ("14.1",),
        "4.11 read literally: the third consecutive foul costs 15 points in all, not 1 + 15.",
    ),
    OptionSpec(
        "thai_4_11_count_from_one",
        False,
        ("14.1",),
        "4.11 read literally: after the third foul the count restarts at 1, not 0.",
    ),
    OptionSpec(
        "wpa2016_ten_last_ball",
        False,
        ("10-ball",),
        "WPA 2016+ 9.8: a called 10 pocketed while other balls remain (judged at the "
        "start of the shot) is spotted and the shooter continues; only a last-ball 10 wins.",
    ),
    OptionSpec(
        "wpa2025_no_safety_call",
        False,
        ("10-ball",),
        "WPA 2025: ten-ball has no safety call; a 'call safety' input is refused.",
    ),
    OptionSpec(
        "bca_jump_miscue_foul",
        False,
        ALL_GAMES,
        "General 26 (BCA): a miscue on a jump shot is a foul. WPA default: a miscue is "
        "not a foul in itself.",
    ),
    OptionSpec(
        "bca_34_same_breaker",
        False,
        ("14.1",),
        "General 34 read literally in 14.1: after outside interference that cannot be "
        "restored, all 15 balls are re-racked and the last opening breaker breaks again. "
        "WPA default (1.9): handled as a stalemate, a new lag (4.12).",
    ),
    OptionSpec(
        "referee",
        False,
        ALL_GAMES,
        "Not an edition: a referee is at the table. A ruling that depends on a sensed fact "
        "the sensors cannot decide waits for the referee's check (awaiting "
        "'referee_check'); without one the fair default is applied and marked provisional "
        "(§3b). Also the `match` field `referee`.",
    ),
    OptionSpec(
        "hanging_ball_us",
        5_000_000,
        ALL_GAMES,
        "General 30: a ball that hung on the lip longer than this many microseconds and "
        "then dropped is restored to the lip (seed: more than 5 s).",
    ),
)

OPTIONS: dict[str, OptionSpec] = {s.name: s for s in _SPECS}
# How a match form groups the yes/no options (REFEREE.md §5): a later WPA edition, a
# literal reading of the Thai seed text, or the BCA general rules; `referee` is not a rule
# (the form that starts the match sets it).
KINDS = (("wpa", "edition"), ("thai", "reading"), ("bca", "bca"))


def form_options(game: str) -> list[dict[str, str]]:
    """The yes/no options a match of `game` may be started with, for a match form:
    [{"name", "kind" ("edition", "reading" or "bca"), "doc"}], editions first."""
    out = []
    for spec in _SPECS:
        if game not in spec.games or spec.default is not False or spec.name == "referee":
            continue
        kind = next(k for prefix, k in KINDS if spec.name.startswith(prefix))
        out.append({"name": spec.name, "kind": kind, "doc": spec.doc})
    return sorted(out, key=lambda o: o["kind"] != "edition")


def parse_options(raw: object, game: str) -> tuple[tuple[str, object], ...]:
    """`raw` is a list of option names (each set to true) or a dict name -> value.
    Returns the canonical form: sorted (name, value) pairs that differ from the default."""
    if raw is None:
        return ()
    if isinstance(raw, list):
        items = []
        for name in raw:
            if not isinstance(name, str):
                raise BadInput("options: a list of option names is expected")
            items.append((name, True))
    elif isinstance(raw, dict):
        items = list(raw.items())
    else:
        raise BadInput("options must be a list of names or an object name -> value")
    out = {}
    for name, value in items:
        spec = OPTIONS.get(name)
        if spec is None:
            raise BadInput(f"unknown option {name!r} (see protocol/REFEREE.md)")
        if game not in spec.games:
            raise BadInput(f"option {name} does not apply to {game}")
        if type(value) is not type(spec.default):
            raise BadInput(f"option {name} takes a {type(spec.default).__name__}")
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise BadInput(f"option {name} must not be negative")
        if value != spec.default:
            out[name] = value
    return tuple(sorted(out.items()))


def option_value(options: tuple[tuple[str, object], ...], name: str) -> object:
    for key, value in options:
        if key == name:
            return value
    return OPTIONS[name].default
