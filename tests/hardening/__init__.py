"""Regression tests of the hardening work (issue 13): one file per fault that an attack and
fault probe found (session takeover, node confinement, retained junk, a full disk, numbers
past 64 bits, a reused boot counter, tracebacks instead of errors), each on real parts: a
private mosquitto, `railbird run` as a subprocess, real SQLite on a small real filesystem.
May import `railbird`, `rbproto`, `rbnode.simnode` and `harness`.
"""
