"""Names as the registry keeps them (railbird.competition.players.clean_name), over any text
hypothesis can make: a kept name is trimmed, NFC, 1 to 64 characters, without a control
character, and the rules engine takes it as a player of a match; a refused one is refused
with an `InvalidName`, never another exception."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from railbird import rules
from railbird.competition.errors import InvalidName
from railbird.competition.players import clean_name, folded


@settings(max_examples=100)
@given(st.text(max_size=80))
def test_a_kept_name_is_clean_and_a_match_accepts_it(text):
    try:
        name = clean_name(text)
    except InvalidName:
        stripped = unicodedata.normalize("NFC", text).strip()
        bad = [c for c in stripped if unicodedata.category(c) in ("Cc", "Zl", "Zp")]
        assert (
            not stripped
            or len(stripped) > 64
            or bad
            or any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in stripped)
        )
        return
    assert name == name.strip() and 1 <= len(name) <= 64
    assert unicodedata.is_normalized("NFC", name)
    assert not any(unicodedata.category(c) == "Cc" for c in name)
    other = "someone else" if folded(name) != "someone else" else "another"
    state = rules.new_match({"game": "9-ball", "players": [name, other], "race_to": 3})
    assert state.players[0] == name


@given(st.text(min_size=1, max_size=10), st.sampled_from("\x00\x07\x1b\n\r\x7f\x85"))
def test_a_control_character_anywhere_is_refused(text, control):
    for s in ("A" + control + text + "B", "A" + text + control + "B"):
        with pytest.raises(InvalidName, match="control characters"):
            clean_name(s)
