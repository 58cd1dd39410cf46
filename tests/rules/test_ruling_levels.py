"""Ruling levels (issue 22 item 5): a ruling has level "foul" only when it states that a
foul was committed, so the referee app paints red and the scoreboard flashes FOUL only
then. A "no foul" (10-ball 9.7, the opponent's option), a warning on two fouls (6.14) or
the miscue note of general 26 mention fouls without one being committed: "info".

What "states a foul was committed" means here: the ruling that names who fouled and what
("Foul by Ann: ..." / "Foul on the break by Ann: ..."), one per foul (general 29: several
fouls on one shot are one). The penalties and consequences that follow it (points lost,
ball in hand, loss of the rack) are "info": the foul is flagged once, by its statement.

Checked two ways: every ruling the engine's source can write (each `Ruling(...)` and
`foul_ruling(...)` in railbird/rules, read from the source), and the rulings of played
inputs as the host hands them to the displays (railbird.core.game: the `level` field)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from railbird.core.game import Game
from railbird.rules.state import foul_ruling, ruling_level
from rulehelp import MISS, call, shot

RULES = Path(__file__).resolve().parents[2] / "host" / "railbird" / "rules"
NAME = "Ann"  # what a formatted value of a template is rendered as

# The test's own reading of "a foul was committed", written from the sentence, not from
# the engine's code: "Foul [on the break] by <player>: <what>".
STATEMENT = re.compile(r"^Foul (?:on the break )?by [^:]+: \S")


RULE_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*|general \d+|match)$")


def states_a_foul(text: str) -> bool:
    return bool(STATEMENT.match(text))


def template(node: ast.expr) -> str:
    """The text a ruling's text argument gives, each formatted value rendered as NAME."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else NAME for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return template(node.left) + template(node.right)
    return NAME  # a variable: a caller's text, which is checked where it is written


def ruling_sites():
    """(where, function, text) of every ruling the engine's source constructs."""
    out = []
    for path in sorted(RULES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func.id if isinstance(node.func, ast.Name) else ""
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else fn
            if fn == "Ruling" and len(node.args) >= 2:
                out.append((f"{path.name}:{node.lineno}", fn, template(node.args[1])))
            elif fn == "foul_ruling" and len(node.args) == 3:
                on_break = any(
                    k.arg == "on_break" and isinstance(k.value, ast.Constant) and k.value.value
                    for k in node.keywords
                )
                r = foul_ruling("9.10.1", NAME, template(node.args[2]), on_break=on_break)
                out.append((f"{path.name}:{node.lineno}", fn, r.text))
            elif any(isinstance(a, ast.Name) and a.id == "R" for a in node.args):
                # a helper that writes the ruling (pass_turn, offer_option, end_rack, spot,
                # penalize...): its text arguments are the ruling's words ("why")
                after = node.args[
                    [isinstance(a, ast.Name) and a.id == "R" for a in node.args].index(True) + 1 :
                ]
                for a in after:
                    text = template(a) if isinstance(a, ast.Constant | ast.JoinedStr) else ""
                    if text and not RULE_NUMBER.match(text):
                        out.append((f"{path.name}:{node.lineno}", fn, text))
    return out


SITES = ruling_sites()


def test_the_sites_are_found():
    texts = [t for _, _, t in SITES]
    assert len(SITES) > 80
    assert sum(1 for _, fn, _ in SITES if fn == "foul_ruling") >= 5  # each game's resolve
    # the rulings that mention fouls without one: 9.7, the 6.14 warning, general 26
    assert any(t.startswith("Wrongly pocketed ball(s)") and "no foul" in t for t in texts)
    assert any(t.startswith("Warning: Ann is on two fouls") for t in texts)
    assert any(t.startswith("Miscue on a jump shot: not a foul") for t in texts)


@pytest.mark.parametrize(("where", "fn", "text"), SITES, ids=[s[0] for s in SITES])
def test_every_ruling_the_engine_writes_has_the_level_of_what_it_states(where, fn, text):
    want = "foul" if states_a_foul(text) else "info"
    assert ruling_level({"text": text, "rule": "x"}) == want, (where, text)


def test_only_foul_ruling_words_a_committed_foul():
    """No other text of the engine begins like a foul's statement (a caller's `why` or
    `text` included), so nothing else is flagged, and no foul statement bypasses it."""
    for path in sorted(RULES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr | ast.Constant) and path.name != "state.py":
                text = template(node)
                assert not states_a_foul(text) and not text.startswith("Foul "), (
                    path.name,
                    node.lineno,
                    text,
                )


# -- as the host hands them on (railbird.core.game) ---------------------------------------------
def play(game, *inputs):
    goal = {"target": 50} if game == "14.1" else {"race_to": 3}
    g = Game({"type": "match", "game": game, "players": ["Ann", "Bob"], **goal})
    out = []
    for inp in ({"type": "lag", "winner": "Ann", "breaker": "Ann"}, *inputs):
        ok, res = g.feed(inp)
        assert ok, (inp, res)
        out.append(res["announcements"])
    return out


def levels(anns):
    return [(a["level"], a["text"]) for a in anns]


def check(all_anns):
    for anns in all_anns:
        for a in anns:
            assert a["level"] == ("foul" if states_a_foul(a["text"]) else "info"), a
        assert sum(1 for a in anns if a["level"] == "foul") <= 1, anns  # general 29


def test_wrong_pocket_in_ten_ball_is_no_foul():
    out = play("10-ball", MISS, call(1, "FR"), shot("2SL"))
    check(out)
    assert any(a["rule"] == "9.7" for a in out[-1])
    assert all(a["level"] == "info" for a in out[-1]), levels(out[-1])


def test_a_legal_miss_that_ends_in_the_two_foul_warning_is_no_foul():
    # Bob fouls twice, Ann's misses are legal: the last one brings Bob back on two fouls
    out = play("10-ball", MISS, shot("0SL"), MISS, shot("0SL"), MISS)
    check(out)
    assert any(a["rule"] == "6.14" for a in out[-1]), out[-1]
    assert all(a["level"] == "info" for a in out[-1]), levels(out[-1])


@pytest.mark.parametrize(
    ("game", "inputs"),
    [
        ("10-ball", [MISS, shot("0SL")]),
        ("9-ball", [MISS, shot("0SL")]),
        ("8-ball", [shot("0SL", object_balls_to_rail=1)]),
        ("8-ball", [shot(off_table=[5], object_balls_to_rail=4)]),
        ("14.1", [shot(object_balls_to_rail=1)]),
        ("14.1", [call(1, "FL"), shot("0SL", "1FL")]),
    ],
)
def test_a_foul_is_flagged_once_by_its_statement(game, inputs):
    out = play(game, *inputs)
    check(out)
    fouls = [a for a in out[-1] if a["level"] == "foul"]
    assert len(fouls) == 1 and fouls[0]["text"].startswith("Foul "), levels(out[-1])
