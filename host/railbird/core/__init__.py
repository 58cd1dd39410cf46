"""Host daemon internals: the deterministic pipeline (`pipeline`) and per-table games
(`game`). The thin I/O layers around them are `railbird.daemon.ingest`, `railbird.daemon.journal` and
`railbird.daemon`."""
