"""The wire contract's one implementation, shared by host and firmware: codec (protocol v1,
protocol/SPEC.md), signing (what the venue key signs, its check, the order of firmware
versions: SPEC.md "Signed commands") and sbframe (serial scoreboard frames,
protocol/SCOREBOARD.md). Common MicroPython/CPython subset: may import only what both have
(json, hashlib), never railbird or rbnode."""
