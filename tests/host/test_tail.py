"""`railbird tail` prints an empty retained message as the topic being cleared, not as a
rejected message: the host clears `inplay` when its shot closes (protocol/SPEC.md), and a
fresh-clone run under load printed "REJECTED .../inplay: bad json: empty payload" for it."""

from __future__ import annotations

from railbird.commands.tail import format_line


def test_an_empty_retained_message_is_a_cleared_topic():
    line = format_line("railbird/v1/club/t1/inplay", b"")
    assert line.endswith(" club/t1 inplay cleared"), line
    assert "REJECTED" not in line


def test_an_empty_payload_on_a_foreign_topic_is_still_rejected():
    line = format_line("railbird/v1/club/t1/nonsense/x/y", b"")
    assert "REJECTED railbird/v1/club/t1/nonsense/x/y: bad topic" in line, line
    assert "REJECTED" in format_line("railbird/v1/club/t1/inplay", b"{")
