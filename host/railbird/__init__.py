"""Railbird: sensor-driven refereeing and scoring for pool tables, host side. Lives here: one
subpackage per part of the host (`core`, the deterministic pipeline; `daemon`, its I/O shell;
`rules`; `outputs`; `scoreboard`; `sim`; `hardware`; `commands`) and top-level modules with
one job each (`config`, `cli`, `broker`, ...). May import the standard library, paho-mqtt,
pyserial and `rbproto`; its units import each other only along the arrows of
docs/architecture.md, "Layout" (tests/codebase/test_import_graph.py checks it).
"""

__version__ = "0.1.0"
