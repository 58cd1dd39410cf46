"""protocol/REFEREE.md: every worked example is run verbatim through `railbird referee`
and must give the documented output; every named option is documented."""

import json
import re
from pathlib import Path

import pytest

from railbird.commands.referee import process_line
from railbird.rules import OPTIONS

DOC = Path(__file__).resolve().parents[2] / "protocol" / "REFEREE.md"
BLOCK = re.compile(r"```jsonl (transcript|expected) (\S+)\n(.*?)```", re.S)


def blocks():
    found = {}
    for kind, game, body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        found.setdefault(game, {})[kind] = body.strip().splitlines()
    return found


def test_referee_doc_has_an_example_for_every_game():
    assert set(blocks()) == {"10-ball", "14.1", "9-ball", "8-ball"}


@pytest.mark.parametrize("game", ["10-ball", "14.1", "9-ball", "8-ball"])
def test_referee_doc_worked_example_runs_verbatim(game):
    example = blocks()[game]
    transcript, expected = example["transcript"], example["expected"]
    assert len(transcript) == len(expected)
    ref = None
    for line, want_text in zip(transcript, expected, strict=True):
        ref, got = process_line(ref, line)
        want = json.loads(want_text)
        if "error" in want:
            assert got == want, line
            continue
        assert {k: got[k] for k in want} == want, line


def test_referee_doc_lists_every_option():
    text = DOC.read_text(encoding="utf-8")
    for name in OPTIONS:
        assert f"`{name}`" in text
