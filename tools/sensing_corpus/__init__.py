"""The sensing-accuracy benchmark of `make bench-sensing` (issue 15): a seeded corpus of pool
shots simulated with the pooltool-billiards physics package (physics.py, the only module
that imports it, installed by the Makefile's sensing-bench extra), turned into protocol v1
sensor events by a sensor model (sensors.py) and node batches (stream.py), fed through
`railbird assemble` with and without the strike channel, and scored against the ground truth
(score.py, which imports railbird's game layer to rule breaks as the daemon does). breaks.py
and train_breaks.py are `make train-breaks`: simulated breaks of every game's rack on other
seeds, the break model's fit (host/railbird/core/breakfit.py) and its validation. Nothing in
the project imports this package except its own test; README.md has the model and its
numbers.
"""
