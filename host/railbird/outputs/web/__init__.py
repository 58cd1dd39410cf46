"""The web scoreboard and the referee app served by the host (docs/displays.md): `server`
(`WebOutput`: aiohttp on an event loop of its own, the live event streams), `hub` (the
streams' subscribers), `limits` (the connection cap), `pages` (pages, static files, JSON
snapshots), `desk` (the referee app's API: sign-in, referee input with idempotency ids, undo
preview, foul catalogue, rule options), `director` (the event director's sign-in and
controls, the event's view for the boards: docs/events.md), `pinguard` (failed-PIN
accounting), `sessions` (sign-in sessions), `hostcheck` (the `Host` allow-list against DNS
rebinding), `history` (the history pages, docs/history.md), `playerpage` (a registered
player's page and the New match form's search, docs/events.md), `registration` (a name the
New match form typed, registered), `historypool` (the worker process the history and player
pages run in, at a lower priority), `wire` (the request and reply the routes see), `gamesjs`
(writes `static/games.js`, the registry's games and pockets for the pages), and `static/`,
the pages, scripts and styles the browser loads as they are. May import
`railbird.outputs.base`, `railbird.outputs.tables`, `railbird.tableorder`, `railbird.rules`
(the foul catalogue, the rule options), `railbird.history` (the history pages),
`railbird.registry` and `railbird.competition` (the players: their pages, search and
registration; the competition's errors), `railbird.events` (the event's HTML), aiohttp and
the standard library;
the daemon reaches it only through the `Output` interface and the referee callback
`railbird.outputs.factory` hands it.
"""
