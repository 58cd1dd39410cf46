"""Tests of `railbird.competition` (players, tournaments, standings: docs/events.md) and of
the players registry the host keeps (`railbird.registry`, `railbird players`). They import
the package under test, hypothesis and the shared fixtures of tests/conftest.py."""
