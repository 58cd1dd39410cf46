"""Tests of running an event at the venue (`railbird.events`: the event service, its
journal tables, the static export; the director's page and the tables' screens:
docs/events.md "Running an event"). They import the package under test, the web output,
the simulator and the harness (brokers, the host process, Chromium)."""
