"""Competition: players and tournaments as pure values (docs/events.md). Lives here:
`errors` (`CompetitionError` and its kinds), `players` (a player's typed record and the one
validation of names, nicknames, ratings and external ids), `spec` (an event's settings:
format, game and rules edition from `railbird.rules`, races per round, seeding, the draw's
RNG seed; entrants), `layout` (the matches each format needs for n entrants and where each
seat comes from: round robin rounds, the winners' and losers' brackets, the grand final
and its reset), `tournament` (the tournament: create, draw, the playable matches, start,
record a result, with every match's state derived from the layout, the draw and the log),
`standings` (places and records from the results), `ratings` (ratings per rack fitted
over all rack results, 100 points = 2:1 odds), `handicap` (the director's chart of rating
gaps to races) and `jsonform` (the tournament to and
from JSON for storage, and a read-only view for pages and exports). May import only the
standard library and `railbird.rules` (the games, options, break orders and the name
rules): no I/O, no clock, no other part of `railbird`, so the host, its pages and its
tests run the same code and a stored tournament replays to the same state.
"""
