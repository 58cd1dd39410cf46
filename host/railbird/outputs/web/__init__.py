"""The web scoreboard and the referee app served by the host (docs/displays.md): `server`
(`WebOutput`, an HTTP server with server-sent events), `desk` (the referee app's API:
sign-in, referee input with idempotency ids, undo preview, foul catalogue), `sessions` (its
sign-in sessions), and `static/`, the pages, scripts and styles the browser loads as they
are. May import `railbird.outputs.base`, `railbird.outputs.tables`, `railbird.rules` (the
foul catalogue) and the standard library; the daemon reaches it only through the `Output`
interface and the referee callback `railbird.outputs.factory` hands it.
"""
