"""What the host keeps about the people at its events, in the journal's SQLite database next
to the match history (docs/events.md, "Players"). Lives here: `players` (the players
registry: add, rename, edit, merge duplicates, search by prefix, each player's aliases,
a tournament's entrants) and `ratings` (the ratings the host keeps: the fit of
`railbird.competition.ratings` over the match history's rack results, refitted when a match
ends, and each rated match with both players' ratings after it) and `exchange` (players and
results out as JSON and CSV, players in: every row checked, none imported on an error).
May import the standard library (sqlite3), `railbird.competition` (the player's typed
record, the one validation of names, the rating fit), `railbird.history.store` (the
matches the ratings are fitted over) and `railbird.rules` (which games score racks); the
daemon (the ratings), the commands and, later, the web pages import it,
never the other way round. Tournaments will be stored here too (issue 25).
"""
