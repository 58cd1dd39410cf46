"""Outputs of the host daemon: everything that shows a table's game to people. May import
`railbird.config`, `railbird.scoreboard`, `railbird.rules` (pure: the foul catalogue the
referee app lists), `railbird.history` (the history pages read its tables in the journal)
`railbird.tableorder` (every list of tables in natural order), `railbird.events` (the
event service the web output feeds and shows, and the competition core's errors) and
`rbproto`; never the
daemon or the core (outputs see only the records the daemon hands
them).

The daemon calls every configured output with the same events (`base.Output`). An output
must never raise into the daemon (a broken scoreboard must not stop scoring): it logs and
counts its own failures.

Lives here: `base` (the interface), `tables` (per-venue view shared by the displays),
`mqtt_feeds` (MQTT display feeds, Home Assistant discovery), `summaries` (the venue summary
split per table, at a bounded rate, for the feeds), `serial_scoreboard`, `web/`
(web scoreboard and referee app), `factory` (builds the outputs from `[outputs]`).
This `__init__` imports nothing, so `web` can import `base` without an import circle.
"""
