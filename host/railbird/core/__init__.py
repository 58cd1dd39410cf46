"""The host's deterministic core: messages in, records out, no I/O. Lives here: `clockmodel`
(node time -> table time), `timeline` (dedup, reorder window), `shots` (timeline -> shots),
`game` (shot -> rules input, referee facts), `pipeline` (all of it per table), `records`
(the pipeline's output as typed records, and the enums of record kinds, input sources and
outcomes), `fastcodec`
(the host's shortcut through the shared codec for event batches), `lifecycle` (the match
control of a table), `railballs` (the estimate of object balls that reached a rail),
`breakmodel` (a break's confidences from its rail events, and what they decide) with its
fit `breakfit` (written by `make train-breaks`),
`health` (each sensor channel's health from its activity over the last shots),
`refauth` (the referee token checked once and sealed), `revision` (a state's revision, and
the refusal of input made against another), `shotclock` (a table's shot clock: a
pure state machine over given table times), and `snapshot` (a pipeline's state as
JSON data and back). May import only `railbird.rules`, `rbproto` and the standard library
without I/O (no sockets, threads, files or SQLite), so the daemon, `railbird replay` and
`railbird assemble` give the same records (tests/codebase/test_import_graph.py).
"""
