"""One registry per vocabulary (issue 21): the games' facts live on the rules classes
(railbird.rules.vocabulary reads them off engine.GAMES) and the pockets and rails in
rbproto.codec. Every copy that must remain (rbproto and the firmware cannot import
railbird; the schemas and games.js are generated files) equals the registry, and no new
literal list of the games or the pockets appears outside the places listed here."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from railbird.outputs.web import gamesjs
from railbird.rules import options, state
from railbird.rules.engine import GAMES
from railbird.rules.vocabulary import registry
from rbproto import codec

REPO = Path(__file__).resolve().parents[2]
NAMES = tuple(GAMES)
STATIC = REPO / "host/railbird/outputs/web/static"


def test_codec_copies_equal_the_registry():
    assert codec.GAMES == NAMES  # rbproto runs on MicroPython too: its own copy
    assert state.POCKETS == codec.POCKETS  # the rules engine imports the standard library only
    assert set(options.ALL_GAMES) == set(NAMES)


def test_schemas_enumerate_the_registry():
    """Every enum of a game or a pocket in the generated schemas is the registry's."""
    seen = {"game": 0, "pocket": 0, "rail": 0}

    def walk(node):
        if isinstance(node, dict):
            enum = node.get("enum")
            if isinstance(enum, list) and set(enum) & set(NAMES):
                assert enum == list(NAMES)
                seen["game"] += 1
            if isinstance(enum, list) and set(enum) & set(codec.POCKETS):
                assert enum == list(codec.POCKETS)
                seen["pocket"] += 1
            if isinstance(enum, list) and "LH" in enum:
                assert enum == list(codec.RAILS)
                seen["rail"] += 1
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for path in sorted((REPO / "protocol/schemas").glob("*.schema.json")):
        walk(json.loads(path.read_text()))
    assert all(seen.values()), seen


def test_games_js_is_the_registry():
    assert (STATIC / "games.js").read_text() == gamesjs.games_js()
    for page in ("overlay", "referee", "table", "venue"):
        html = (STATIC / f"{page}.html").read_text()
        assert html.index("/static/games.js") < html.index(
            f"/static/{'referee' if page == 'referee' else 'common'}.js"
        )


def test_page_pocket_tables_name_the_registry_pockets():
    """The pages keep pocket labels and a button layout: the same six pockets."""
    common = (STATIC / "common.js").read_text()
    labels = re.search(r"POCKETS: \{([^}]*)\}", common).group(1)
    assert set(re.findall(r"(\w\w): \"", labels)) == set(codec.POCKETS)
    referee = (STATIC / "referee.js").read_text()
    layout = re.search(r"const POCKETS = \[([^\]]*)\]", referee).group(1)
    assert sorted(re.findall(r'"(\w+)"', layout)) == sorted(codec.POCKETS)


def test_firmware_scoreboard_codes():
    """firmware/scoreboard cannot import railbird: its race games are the rack games' codes."""
    tree = ast.parse((REPO / "firmware/scoreboard/layout.py").read_text())
    race = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "RACE_GAMES"
    )
    facts = registry()["games"]
    assert set(race) == {f["code"] for f in facts.values() if f["unit"] == "racks"}


# Files allowed to spell out a vocabulary, each checked above (or a test's own data).
GAME_LIST_OK = {
    "protocol/rbproto/codec.py",
    "protocol/schemas/make_schemas.py",
    "host/railbird/rules/options.py",
}
POCKET_LIST_OK = {
    "protocol/rbproto/codec.py",
    "protocol/schemas/make_schemas.py",
    "host/railbird/rules/state.py",
    "tools/sensing_corpus/sensors.py",  # a standalone tool, checked below
    "tools/sensing_corpus/physics.py",
    "protocol/vectors/make_vectors.py",  # the vectors' own data, checked by the codec tests
    "host/railbird/outputs/web/static/referee.js",  # the pocket buttons' layout, checked above
}


def _sources():
    for top in ("host", "protocol", "firmware", "tools"):
        for path in sorted((REPO / top).rglob("*")):
            if path.suffix in (".py", ".js") and "node_modules" not in path.parts:
                yield path.relative_to(REPO).as_posix(), path.read_text(errors="replace")


def _literal_lists(text: str):
    """The string items of each literal [...] / (...) in a source, roughly."""
    for m in re.finditer(r"[\[(]([^\[\]()]*)[\])]", text):
        yield re.findall(r"[\"']([^\"']+)[\"']", m.group(1))


def test_no_new_literal_list_of_games_or_pockets():
    bad = []
    for rel, text in _sources():
        if rel.endswith("static/games.js"):
            continue
        for items in _literal_lists(text):
            if rel not in GAME_LIST_OK and len(set(items) & set(NAMES)) >= 3:
                bad.append(f"{rel}: games {items}")
            if rel not in POCKET_LIST_OK and len(set(items) & set(codec.POCKETS)) >= 4:
                bad.append(f"{rel}: pockets {items}")
    assert not bad, "use the registry (railbird.rules.vocabulary, rbproto.codec):\n" + "\n".join(
        bad
    )


def test_standalone_tool_copy():
    """tools/sensing_corpus runs without the repository's packages: its copies are these."""
    for rel in ("tools/sensing_corpus/sensors.py", "tools/sensing_corpus/physics.py"):
        text = (REPO / rel).read_text()
        assert repr(codec.POCKETS).replace("'", '"') in text, rel
