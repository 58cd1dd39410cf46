"""Tables are listed in one natural order everywhere (issue 22): t2 before t10. The key is
defined once in Python (railbird.tableorder.natural_key) and once in JavaScript
(RB.naturalCompare in outputs/web/static/common.js); both must sort the same lists alike."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from railbird.tableorder import natural_key, natural_sorted, pair_key

REPO = Path(__file__).resolve().parents[2]
COMMON_JS = REPO / "host" / "railbird" / "outputs" / "web" / "static" / "common.js"

EDGES = ["t10", "t2", "t1", "t01", "t", "t1a", "bar", "t9", "a10b2", "a10b10", "", "t007",
         "table-3", "table-12", "pool2-t4", "pool10-t1", "t1-node10", "t1-node9", "00", "0",
         "x99999999999999999999", "x100000000000000000000", "snooker", "t2b", "t2a"]  # fmt: skip


def _random_names(rng: random.Random, n: int) -> list[str]:
    alphabet = "ab-t0123456789"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))) for _ in range(n)]


def js_sorted(lists: list[list[str]]) -> list[list[str]]:
    """Each list sorted by the pages' own RB.naturalSort, in node."""
    if not shutil.which("node"):
        pytest.fail("node is missing (the MicroPython tests need it too)")
    script = (
        "const fs = require('fs'); globalThis.RB_VOCAB = { games: {} };"
        f"eval(fs.readFileSync({json.dumps(str(COMMON_JS))}, 'utf8') + ';globalThis.RB = RB;');"
        "const lists = JSON.parse(fs.readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(lists.map((l) => RB.naturalSort(l))));"
    )
    out = subprocess.run(
        ["node", "-e", script], input=json.dumps(lists), capture_output=True, text=True,
        timeout=30, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def test_two_comes_before_ten():
    names = [f"t{i}" for i in range(1, 61)]
    assert natural_sorted(sorted(names)) == names  # the plain sort's t1, t10, t11, ... undone
    assert natural_sorted(["t10", "t2", "t1"]) == ["t1", "t2", "t10"]
    assert natural_sorted(["table-12", "table-3"]) == ["table-3", "table-12"]


def test_the_order_is_total_and_deterministic():
    # equal values, different spellings: still one order, by the whole name
    assert natural_sorted(["t01", "t1", "t001"]) == ["t1", "t01", "t001"]
    assert natural_key("t1") != natural_key("t01")
    assert sorted([("club", "t10"), ("club", "t9"), ("bar", "t1")], key=pair_key) == [
        ("bar", "t1"),
        ("club", "t9"),
        ("club", "t10"),
    ]


def test_python_and_javascript_agree():
    rng = random.Random(22)
    lists = [EDGES, [f"t{i}" for i in range(60, 0, -1)]]
    lists += [_random_names(rng, 40) for _ in range(50)]
    for names in lists:
        rng.shuffle(names)
    want = [natural_sorted(names) for names in lists]
    assert js_sorted(lists) == want


SHUFFLED = ["t10", "t2", "t1", "t9", "t11", "t3"]
NATURAL = ["t1", "t2", "t3", "t9", "t10", "t11"]


def test_the_web_api_and_the_feeds_list_tables_in_natural_order():
    from railbird.outputs.tables import Venues

    v = Venues()
    for t in SHUFFLED:
        v.table("club", t)
    v.table("bar10", "t1")
    v.table("bar2", "t1")
    assert [t.table for t in v.venue_tables("club")] == NATURAL
    assert v.venues() == ["bar2", "bar10", "club"]


def test_the_terminal_board_and_the_node_plan_list_tables_in_natural_order():
    from railbird.commands.nodes import _plan
    from railbird.fleet.view import Fleet
    from railbird.termboard import TermBoard

    board = TermBoard(dict.fromkeys(SHUFFLED, "9-ball"))
    text = board.render(400, color=False)
    assert sorted(SHUFFLED, key=lambda t: text.index(f" {t} ")) == NATURAL
    plan = _plan(Fleet("club"), {t: [f"{t}-n10", f"{t}-n2"] for t in SHUFFLED}, None, None)
    assert list(plan) == NATURAL
    assert plan["t1"] == ["t1-n2", "t1-n10"]
