"""Tests of the host daemon: clock model, timeline, shots, pipeline, referee facts, per-node
watermarks, the journal, crash and restart, offline replay and assembly, and `railbird run`
with its outputs on a real broker. May import `railbird` (core, daemon, outputs, config),
`rbproto`, `rbnode.simnode` for a real node, `harness` and `scripts` (sensor streams here).
"""
