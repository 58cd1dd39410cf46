"""Host side of the serial LED scoreboard (protocol/SCOREBOARD.md). May import `rbproto`,
pyserial and the standard library, no other part of `railbird` (the serial output in
`railbird.outputs` drives it).

- the frame codec is `rbproto.sbframe` (protocol/rbproto/sbframe.py), shared with the firmware
- `link.ScoreboardLink`: a thread owning one serial port: stop-and-wait with ACK/NAK and
  retries, reconnects after an unplug, full resend when the board says HELLO
- `screens`: game state (protocol/REFEREE.md) -> SCREEN fields and ANNOUNCE texts
"""
