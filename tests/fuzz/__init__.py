"""Fuzz targets (issue 13): hypothesis-generated interleavings of good node messages with bad
ones fed to the ingest path (the deterministic `Pipeline` in process, and a few examples end to
end through a private mosquitto into `railbird run`), and random HTTP requests against every
route of the web server of a running `railbird run`. A small, seeded number of examples runs
in `make test`; `make fuzz` runs the same targets with many more (RAILBIRD_FUZZ_SCALE).
May import `railbird`, `rbproto`, `harness` and `tests.host.scripts`.
"""
