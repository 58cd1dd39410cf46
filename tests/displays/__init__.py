"""Tests of the displays: the serial scoreboard (frames, a pty link, the firmware under
CPython and in real MicroPython, end to end), the MQTT feeds with Home Assistant discovery,
and the web scoreboard in a real Chromium. May import `railbird` (outputs, scoreboard link,
daemon, config), `rbproto`, the scoreboard firmware and `rbnode` (made importable by
tests/conftest.py), and `harness`.
"""
