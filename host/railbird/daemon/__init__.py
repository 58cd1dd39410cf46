"""The host daemon's I/O shell around `railbird.core`. Lives here: `ingest` (the MQTT client:
subscribe, time-sync answers, manual acks), `ingestproc` (that client in a child process of
`railbird run`, so its Python work is off the worker's interpreter lock), `journal` (the
SQLite input journal), `journalerror` (`JournalError`, a file that cannot be a journal),
`migrations` (the journal's schema version and the steps between versions), `sealing`
(referee tokens removed from journals written before input was sealed), `snapshots` (the
pipeline's state in the journal, for a fast restart), `retention` (old raw inputs exported,
then deleted), `worker` (the `Daemon`: worker thread, journal transaction, acks, ticks,
outputs, rebuild at start), `replay` (the one mapping of a journal input to a pipeline call:
rebuild, restarts, offline replay, benchmarks, cluster), `ticks` (each table's tick
deadline), `faults` (the write path's health and backoff), `gcpolicy` (garbage collection
kept out of scoring), `ratelog` (log lines that senders control, at a bounded rate),
`offline` (`railbird replay` and `railbird assemble`) and `answer` (the answers to referee
consoles).
May import `railbird.core`, `railbird.config`, `railbird.history` (the match history it
keeps in the journal), `rbproto`, paho-mqtt and the standard library; never
`railbird.outputs` (outputs are handed in by `railbird.commands.run` and called through
`railbird.outputs.base.Output`).
"""
