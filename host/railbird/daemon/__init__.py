"""The host daemon's I/O shell around `railbird.core`. Lives here: `ingest` (the MQTT client:
subscribe, time-sync answers, manual acks), `journal` (the SQLite input journal), `worker`
(the `Daemon`: worker thread, journal transaction, acks, ticks, outputs, rebuild at start),
`ticks` (each table's tick deadline), `faults` (the write path's health and backoff),
`offline` (`railbird replay` and `railbird assemble`) and the answers to referee consoles.
May import `railbird.core`, `railbird.config`, `railbird.history` (the match history it
keeps in the journal), `rbproto`, paho-mqtt and the standard library; never
`railbird.outputs` (outputs are handed in by `railbird.commands.run` and called through
`railbird.outputs.base.Output`).
"""
