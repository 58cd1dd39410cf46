"""The wire contract's one implementation, shared by host and firmware: codec (protocol v1,
protocol/SPEC.md) and sbframe (serial scoreboard frames, protocol/SCOREBOARD.md). Common
MicroPython/CPython subset: may import only what both have (json), never railbird or
rbnode."""
