"""Tests of the match history (docs/history.md): the fold of state and shot records into
matches and pocket drops against hand-computed expectations, the history tables through
restarts, rollbacks and retention, `railbird history`, and a night at a venue end to end
(`railbird run`, simulated tables, a restart, the CSV and the web page in Chromium). May
import `railbird`, `harness` and the shared fixtures of `tests/conftest.py`.
"""
