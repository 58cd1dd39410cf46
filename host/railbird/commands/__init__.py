"""Sub-commands of `railbird`: one module each, discovered by `railbird.cli`, each exposing
`register(subparsers)`. May import any other part of `railbird` and `rbproto`: this is where
the config, the daemon and the outputs are wired together, so nothing imports a command.
"""
