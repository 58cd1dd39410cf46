"""Sub-commands of `railbird`: one module each, discovered by `railbird.cli`, each exposing
`register(subparsers)`. May import any other part of `railbird` and `rbproto`: this is where
the config, the daemon and the outputs are wired together, so nothing imports a command.

Commands: `run` (the daemon), `replay` and `assemble` (a journal offline), `tail` (what a
broker carries), `history` (the match history), `players` (the players registry), `event` (the
venue's event: show it, its static export), `ratings` (the players' ratings), `exchange`
(`railbird export` and `railbird import`: players and results), `demo`, `sim` (simulated
tables), `setup` (an installation), `node` (`railbird node provision`), `nodes` (the fleet
and its firmware rollout), `hw` (pin maps and wiring), `calibrate` (cue-ball return
delays), `referee` (a console for referee input), `ref` (the rules reference).
"""
