"""Host side of the serial LED scoreboard (protocol/SCOREBOARD.md).

- `sbframe`: the frame codec (shared byte-for-byte with firmware/scoreboard/sbframe.py)
- `link.ScoreboardLink`: a thread owning one serial port: stop-and-wait with ACK/NAK and
  retries, reconnects after an unplug, full resend when the board says HELLO
- `screens`: game state (protocol/REFEREE.md) -> SCREEN fields and ANNOUNCE texts
"""
