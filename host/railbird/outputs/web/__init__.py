"""The web scoreboard and referee panel served by the host (docs/displays.md): `server`
(`WebOutput`, an HTTP server with server-sent events), its sessions, and `static/`, the
pages, scripts and styles the browser loads as they are. May import `railbird.outputs.base`,
`railbird.outputs.tables` and the standard library; the daemon reaches it only through the
`Output` interface and the referee callback `railbird.outputs.factory` hands it.
"""
