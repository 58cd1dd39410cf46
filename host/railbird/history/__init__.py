"""Match history and statistics kept by the host (docs/history.md). Lives here: `fold` (pure:
the journal's `state` and `shot` records, in order, folded into matches and pocket drops),
`store` (the history tables in the journal, kept up to date in the daemon's transactions and
caught up from the derived records whenever they fall behind), `period` (business days and
hours in local time), `paging` (pages of a long history: the byte cap and
the cursor), `export` (table, CSV and JSON) and `chart` (server-rendered SVG bar
charts). May import only the standard library and `railbird.tableorder` (tables listed in
natural order): the daemon, the outputs and the commands
import it, never the other way round.
"""
