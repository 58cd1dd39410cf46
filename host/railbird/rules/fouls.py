"""The foul catalogue: WPA section 6, the general items 21-42 of the third seed, and the
reading of referee-declared fouls. A game lists which 6.x fouls it has (9.10, 4.9, ...);
each foul is cited by the game's own list number (e.g. 9.10.3 for 6.3 in ten-ball)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .errors import BadInput


class FoulList(Protocol):
    """What these functions read of a game's rules object (general.GeneralRules)."""

    name: str
    std_fouls: tuple[str, ...]
    std_foul_prefix: str
    rule_serious: str


STANDARD, BREAKING, SERIOUS = 1, 2, 3

WPA_NAMES = {
    "6.1": "cue ball scratch or off the table",
    "6.2": "wrong ball first",
    "6.3": "no rail after contact",
    "6.4": "no foot on the floor",
    "6.5": "ball driven off the table",
    "6.6": "touched ball",
    "6.7": "double hit / frozen balls",
    "6.8": "push shot",
    "6.9": "balls still moving",
    "6.10": "bad cue ball placement",
    "6.11": "bad play from behind the head string",
    "6.12": "cue stick on the table",
    "6.13": "playing out of turn",
    "6.15": "slow play",
    "6.16": "unsportsmanlike conduct",
}
# The Thai names, where the translator notes they differ (TN to 9.10 and 4.9).
THAI_NAMES = {
    "6.1": "changing the cue ball, or shooting the cue ball off the table",
    "6.4": "shooting with both feet not touching the floor",
    "6.6": "stuck ball",
    "6.7": "striking the cue ball twice",
    "6.8": "long stroke",
    "6.11": "illegal shooting from the kitchen",
    "6.13": "shooting out of inning",
}

# General items of seed 3 that a referee may declare, and what they are.
# kind: "standard" (standard foul), "miscue" (general 26), "intentional" (general 28),
# "unsportsmanlike" (6.16), "kitchen" (general 38 = 6.11 second paragraph).
GENERAL_FOULS = {
    21: ("touched a ball while placing the cue ball in hand", "standard"),
    22: ("double hit", "standard"),
    23: ("push shot (long stroke)", "standard"),
    24: ("dropped equipment touched a ball", "standard"),
    25: ("illegal (scooped) jump shot", "standard"),
    26: ("miscue on a jump shot", "miscue"),
    27: ("ball shot off the table", "standard"),
    28: ("intentional foul (cue ball struck other than with the tip)", "intentional"),
    37: ("frozen ball: no ball pocketed or driven to a rail", "standard"),
    38: ("cue ball in hand in the kitchen did not leave the kitchen first", "kitchen"),
    39: ("cue tip touched the cue ball in hand on a forward stroke", "standard"),
    40: ("interference with the opponent's play", "standard"),
    41: ("use of a measuring device", "unsportsmanlike"),
    42: ("illegal marking of the table", "unsportsmanlike"),
}

# General items that are a section-6 foul under another number (seed 3 repeats them): the
# referee app offers each foul once, by the game's own list number (9.10.7, not general
# 22); the engine still accepts either number when declared.
SAME_AS_WPA = {22: "6.7", 23: "6.8"}


@dataclass(frozen=True)
class Foul:
    rule: str  # the rule cited in the ruling, e.g. "9.10.1", "4.10", "general 21"
    name: str
    grade: int = STANDARD
    kitchen: bool = False  # 14.1: incoming player has cue ball in hand in the kitchen
    unsportsmanlike: bool = False  # 6.16: the normal penalty is that of a serious foul
    intentional: bool = False  # general 28


def foul_name(wpa: str, thai: bool) -> str:
    if thai and wpa in THAI_NAMES:
        return THAI_NAMES[wpa]
    return WPA_NAMES[wpa]


def listed_foul(game: FoulList, wpa: str, thai: bool, *, paragraph2: bool = False) -> Foul:
    """The standard foul `wpa` (e.g. "6.1") as the game lists it, cited by list number."""
    if wpa == "6.16":
        return Foul(game.rule_serious, foul_name("6.16", thai), SERIOUS, unsportsmanlike=True)
    if wpa not in game.std_fouls:
        raise BadInput(f"{wpa} is not a foul in {game.name} (see {game.std_foul_prefix})")
    rule = f"{game.std_foul_prefix}.{game.std_fouls.index(wpa) + 1}"
    name = foul_name(wpa, thai) + f" ({wpa}{' second paragraph' if paragraph2 else ''})"
    # 4.9 / 6.1, 6.11 paragraph 2: the incoming player has the cue ball behind the head string.
    kitchen = wpa == "6.1" or paragraph2
    return Foul(rule, name, STANDARD, kitchen=kitchen)


def declared_foul(game: FoulList, text: str, thai: bool) -> Foul | None:
    """A foul the referee declared by rule number. None means "no foul" (general 26 under
    WPA). Accepted: "6.N", "6.11.2", the game's list numbers ("9.10.4", "4.9.10"),
    "general N"."""
    if text.startswith("general "):
        try:
            n = int(text.split()[1])
        except (ValueError, IndexError):
            raise BadInput(f"unknown rule {text!r}") from None
        if n not in GENERAL_FOULS:
            raise BadInput(f"general {n} is not a foul the referee declares")
        name, kind = GENERAL_FOULS[n]
        rule = f"general {n}"
        if kind == "miscue":
            return None
        if kind == "intentional":
            return Foul(rule, name, STANDARD, intentional=True)
        if kind == "unsportsmanlike":
            return Foul(rule, name, SERIOUS, unsportsmanlike=True)
        return Foul(rule, name, STANDARD, kitchen=(kind == "kitchen"))
    if text == "6.11.2":
        return listed_foul(game, "6.11", thai, paragraph2=True)
    if text in WPA_NAMES:
        return listed_foul(game, text, thai)
    prefix = game.std_foul_prefix + "."
    if text.startswith(prefix):
        rest = text[len(prefix) :]
        if rest.isdigit() and 1 <= int(rest) <= len(game.std_fouls):
            return listed_foul(game, game.std_fouls[int(rest) - 1], thai)
    if text in ("6.14", game.rule_serious):
        raise BadInput(f"{text} (three fouls) is counted by the engine, not declared")
    raise BadInput(f"unknown foul rule {text!r} for {game.name}")


def declarable(
    game: FoulList, thai: bool = False, *, every_code: bool = False
) -> list[dict[str, str]]:
    """The fouls a referee may declare in `game` (a rules object of `engine.GAMES`), as the
    referee app lists them: `declare` is what goes in a shot's `fouls`, `rule` the number
    the ruling cites, `name` the foul's name. Built with `declared_foul`, so the list and
    the rulings cannot disagree. Left out: 6.14 (counted, never declared), general 26,
    which is no foul under the WPA text, and a general item that repeats a foul the game
    lists (`SAME_AS_WPA`: one entry per foul), unless `every_code` (every number the
    engine accepts, for the FEN's codes)."""
    out = []
    codes = list(game.std_fouls)
    if "6.11" in codes:
        codes.insert(codes.index("6.11") + 1, "6.11.2")
    codes.append("6.16")
    codes += [
        f"general {n}"
        for n in GENERAL_FOULS
        if every_code or SAME_AS_WPA.get(n) not in game.std_fouls
    ]
    for code in codes:
        foul = declared_foul(game, code, thai)
        if foul is None:
            continue
        if code.startswith("general "):
            name = foul.name
        elif code == "6.11.2":
            name = foul_name("6.11", thai) + " (second paragraph)"
        else:
            name = foul_name(code, thai)
        grade = "serious" if foul.grade == SERIOUS else "standard"
        out.append({"declare": code, "rule": foul.rule, "name": name, "grade": grade})
    return out
