"""Transcript helpers for the rules tests."""

from railbird.rules import GAMES as RULES_GAMES, Referee

GAMES = tuple(RULES_GAMES)  # the registry (tests/codebase/test_vocabulary.py)


def rack_size(game: str) -> int:
    """The object balls of a full rack of `game`."""
    return 15 if game in ("14.1", "8-ball") else (10 if game == "10-ball" else 9)


def match(game="10-ball", *, lag="Ann", breaker=None, options=None, **fields):
    m = {"type": "match", "game": game, "players": ["Ann", "Bob"]}
    if game == "14.1":
        m["target"] = fields.pop("target", 100)
    else:
        m["race_to"] = fields.pop("race_to", 3)
    if options is not None:
        m["options"] = options
    m.update(fields)
    r = Referee(m)
    if lag:
        r.feed({"type": "lag", "winner": lag, **({"breaker": breaker} if breaker else {})})
    return r


def shot(*pots, **facts):
    """shot("3FL", "0SR", "?FR", first_contact=1) -> a shot input."""
    pocketed = []
    for p in pots:
        ball, pocket = p[:-2], p[-2:]
        pocketed.append(
            {"pocket": pocket} if ball == "?" else {"ball": int(ball), "pocket": pocket}
        )
    return {"type": "shot", "pocketed": pocketed, **facts}


def call(ball, pocket):
    return {"type": "call", "ball": ball, "pocket": pocket}


SAFETY = {"type": "call", "safety": True}
PUSH = {"type": "push_out"}
MISS = {"type": "shot", "pocketed": []}


def opt(choice):
    return {"type": "option", "choice": choice}


def feed(r, *inputs):
    out = None
    for inp in inputs:
        out = r.feed(inp)
    return out


def rules_of(out):
    return [x["rule"] for x in out["rulings"]]
