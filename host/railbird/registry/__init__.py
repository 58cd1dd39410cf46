"""What the host keeps about the people at its events, in the journal's SQLite database next
to the match history (docs/events.md, "Players"). Lives here: `players` (the players
registry: add, rename, edit, merge duplicates, search by prefix, each player's aliases,
a tournament's entrants).
May import the standard library (sqlite3) and `railbird.competition` (the player's typed
record and the one validation of names); the commands and, later, the web pages import it,
never the other way round. Tournaments will be stored here too (issue 25).
"""
