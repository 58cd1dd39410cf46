"""The web scoreboard served by the host: see server.WebOutput and docs/displays.md."""
