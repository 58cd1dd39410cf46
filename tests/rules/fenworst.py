"""The longest state lines a real match makes (tests/rules/test_fen_worst_case.py): every
option the line writes set away from its default, long names, a late rack with scores,
runs, warnings and fouls in a row, and a break (or a shot) held for the referee's check or
ruled provisionally. Built through the rules' public API only."""

from railbird.rules import OPTIONS
from rulehelp import MISS, call, feed, match, shot

# Long but real: the rules put no bound on a name (the config asks only for two different,
# non-blank ones), so these are the longest a scoreboard is fed in practice: two given
# names and a double surname, and a Thai full name (the seed rules are Thai).
LONG_NAMES = ["Maximiliano Hernandez-Castillo", "Bartholomew Vanderberg-Smythe"]
THAI_NAMES = ["สมศักดิ์ ศรีสวัสดิ์วงศ์", "ประเสริฐ เจริญรุ่งเรืองกิจ"]
HANGING_US = 12_500_000


def every_option(game: str) -> dict:
    """Every option of `game` but `referee` (a match field) away from its default."""
    out = {}
    for name, spec in OPTIONS.items():
        if game in spec.games and name != "referee":
            out[name] = HANGING_US if name == "hanging_ball_us" else not spec.default
    return out


def held_break(lo: int, hi: int, est: int, **facts) -> dict:
    """A break the rail sensors put at `lo`-`hi` balls to a rail, the cue ball unsure."""
    return {
        "type": "shot",
        "pocketed": [],
        "object_balls_to_rail": est,
        "object_balls_to_rail_range": [lo, hi],
        "rail_after_contact": True,
        "uncertain": ["cue_ball_to_rail", "object_balls_to_rail"],
        **facts,
    }


def straight_pool(referee: bool, names=LONG_NAMES, *, options=None, rebreak=None):
    """14.1 to 150: a 61-ball run, a 45-ball run, an intentional foul (general 28
    warning) each, then the second player's third foul in a row (4.11: -15, re-rack, he
    breaks again) and a re-break the sensors cannot rule (4.3.2): held or provisional.
    `options` (default: every one) and `rebreak` (default: nothing pocketed) vary it."""
    r = match(
        "14.1",
        options=every_option("14.1") if options is None else options,
        referee=referee,
        players=names,
        lag=names[0],
        target=150,
        break_order="trailing",
    )
    feed(r, call(1, "FL"), shot("1FL", object_balls_to_rail=3, cue_ball_to_rail=True))
    _run(r, 60)
    feed(r, MISS)
    _run(r, 45)
    feed(r, shot(fouls=["general 28"]), shot(fouls=["general 28"]))
    feed(r, shot(fouls=["6.6"]), MISS, shot(fouls=["6.6"]))
    out = feed(r, call(15, "HL"), rebreak or held_break(0, 3, 2))
    return r, out


def _run(r, n: int) -> None:
    """`n` called balls in a row, the lowest on the table each time."""
    for _ in range(n):
        if r.state.awaiting == "rerack":
            feed(r, {"type": "rerack"})
        b = min(set(r.state.on_table) | set(r.state.to_spot))
        feed(r, call(b, "FL"), shot(f"{b}FL"))


def rack_game(game: str, referee: bool, names=LONG_NAMES):
    """A race to 11 at 10-9 after both players' intentional fouls in the first rack
    (general 28 warnings), the last rack's break one the sensors cannot rule: held or
    provisional."""
    r = match(
        game,
        options=every_option(game),
        referee=referee,
        players=names,
        lag=names[0],
        race_to=11,
        break_order="loser",
    )
    feed(r, shot("1FL", object_balls_to_rail=4))
    feed(r, shot(fouls=["general 28"]), shot(fouls=["general 28"]))
    for rack in range(19):
        _win_rack(r, game, rack % 2, open_break=rack > 0)
    out = feed(r, held_break(2, 9, 5))
    return r, out


def _win_rack(r, game: str, winner: int, *, open_break: bool) -> None:
    """The rack goes to player `winner`: a legal break (unless played), then he clears
    the table, or in 8-ball his opponent pockets the 8 uncalled."""
    if open_break:
        feed(r, shot("1FL", object_balls_to_rail=4))
    loses = game == "8-ball"  # an 8 pocketed without a call loses the rack (3.10)
    if (r.state.at_table == winner) == loses:
        feed(r, MISS)
    low = min(r.state.on_table)
    if game == "8-ball":
        feed(r, shot("8SR", first_contact=low))
    elif game == "9-ball":  # the table cleared on one shot, the 9 with it (2.8)
        feed(r, shot(*[f"{b}SR" for b in r.state.on_table], first_contact=low))
    else:  # every ball but the 10, then the 10 alone (wpa2016_ten_last_ball)
        feed(r, call(low, "SR"), shot(*[f"{b}SR" for b in r.state.on_table if b != 10]))
        feed(r, call(10, "SR"), shot("10SR"))
