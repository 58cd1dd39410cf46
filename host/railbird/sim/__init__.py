"""The table simulator: plausible games of 10-ball and 14.1 played on the real node firmware
(simulated hardware) with a referee console, for the demo and end-to-end tests. May import
`railbird.core`, `railbird.daemon`, `railbird.rules`, `rbproto`, paho-mqtt and the node
firmware `rbnode`, which it finds in the checkout's firmware/ folder.

- `physics`: shot plans -> timed sensor edges (rail hits, pocket drops, cue-ball detector,
  the colour station's reads offline);
- `player`: the game player, driven by the rules engine's state, deterministic per seed;
- `scenario`: scripted scenarios from a JSON file (format in docs/demo.md);
- `table`: the turn loop, live (`LiveTable`: SimNode + MQTT referee console) or offline;
- `verify`: summaries and replay checks of the demo's journal;
- `screenshots`: the README's screenshots of the demo (`railbird demo --screenshots`).
"""
