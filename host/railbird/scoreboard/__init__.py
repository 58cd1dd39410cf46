"""Host side of the serial LED scoreboard (protocol/SCOREBOARD.md).

- the frame codec is `rbproto.sbframe` (protocol/rbproto/sbframe.py), shared with the firmware
- `link.ScoreboardLink`: a thread owning one serial port: stop-and-wait with ACK/NAK and
  retries, reconnects after an unplug, full resend when the board says HELLO
- `screens`: game state (protocol/REFEREE.md) -> SCREEN fields and ANNOUNCE texts
"""
