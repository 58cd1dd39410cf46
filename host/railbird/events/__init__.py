"""Running an event at the venue (issue 25): the shell around the pure tournament core
(`railbird.competition`). May import `railbird.competition`, `railbird.registry` (the
entrants are registry players), `railbird.history.export` (the CSV neutraliser) and
`railbird.private`; never the daemon, the core or the
outputs (the web server holds an `EventDesk` and feeds it the tables' states).

- `store`: the events' tables in the journal (created where missing): each event's drawn
  form and the log of every change made to it, so a replay rebuilds it;
- `desk`: `EventDesk`, the event service: matches called to free tables (by itself as tables
  come free, or by the director), the result taken from the table's state when the match
  ends, the next match called; what each table's screens show (`call_for`);
- `export`: the static export (HTML and JSON) of the bracket, standings, results and live
  scores, written to a temporary file and renamed (`railbird event export`);
- `exchange`: the stored events out as JSON (each event whole, to load elsewhere) or CSV
  (one row per match, through the history's `csv_cell`), and into another journal from
  the JSON, checked through the core, all or nothing (`railbird export|import tournaments`).

docs/events.md "Running an event".
"""
