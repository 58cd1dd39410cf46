"""Tests of the demo and the table simulator: `railbird demo` end to end, the simulator
offline (timing, player, scenarios in `scenarios/`) and the terminal scoreboard. May import
`railbird` (the simulator, the rules, the journal, the terminal board) and `harness`.
"""
