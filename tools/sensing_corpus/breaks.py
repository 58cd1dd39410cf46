"""Simulated breaks for the break model (`make train-breaks`, tools/sensing_corpus/train_breaks.py):
seeded plans of breaks only, every game's rack (10-ball, 9-ball, 8-ball power breaks; 14.1's
opening safe break), simulated with pooltool (physics.py) and cached per seed like the
bench's corpus. The bench's own seed (15) is never used here: its breaks stay unseen.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from . import physics

# The seeds of the break model's run (host/railbird/core/breakmodel.py cites them)
TRAIN_SEEDS = (101, 102, 103)
VALIDATION_SEEDS = (201, 202, 203)
PER_KIND = 24  # breaks of each kind per seed


def plan(seed: int, per_kind: int = PER_KIND) -> list[dict]:
    """The seeded breaks of one seed: `per_kind` of each break kind, the 10-ball and 14.1
    ones drawn as the bench's corpus draws them (physics._plan), the 9-ball and 8-ball ones
    as hard power breaks from anywhere behind the head string."""
    rng = random.Random(f"breaks-{seed}")
    sizes = ("7ft", "8ft", "9ft")
    out: list[dict] = []

    def add(kind: str, table: str, **kw: float) -> None:
        out.append(
            {"id": len(out), "kind": kind, "table": table, "rack_seed": rng.randrange(1 << 30)} | kw
        )

    for i in range(per_kind):
        add(
            "break10",
            sizes[i % 3],
            cue_x=rng.uniform(0.25, 0.75),
            cue_y=rng.uniform(0.12, 0.24),
            speed=rng.uniform(3.5, 10.5),
            aim=rng.gauss(0, 0.4),
            b=rng.uniform(-0.3, 0.3),
        )
        add(
            "break15",
            sizes[(i + 1) % 3],
            side=rng.choice((-1, 1)),
            cue_x=rng.uniform(0.55, 0.8),
            cue_y=rng.uniform(0.12, 0.24),
            speed=rng.uniform(1.8, 4.5),
            cut=rng.uniform(55, 78),
            b=rng.uniform(-0.1, 0.4),
        )
        for kind in ("break9", "break8"):
            add(
                kind,
                sizes[(i + 2) % 3],
                cue_x=rng.uniform(0.25, 0.75),
                cue_y=rng.uniform(0.12, 0.24),
                speed=rng.uniform(3.0, 11.0),
                aim=rng.gauss(0, 0.4),
                b=rng.uniform(-0.3, 0.3),
            )
    return out


def load(seed: int, cache: Path, jobs: int = 2) -> list[dict]:
    """The traces of one seed's breaks, simulated once and cached."""
    path = cache / f"breaks-seed{seed}-v{physics.PHYSICS_VERSION}.json"
    if path.exists():
        return json.loads(path.read_text())
    t0 = time.monotonic()
    specs = plan(seed)
    if jobs <= 1:
        traces = [physics.simulate(s) for s in specs]
    else:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(jobs) as pool:
            traces = pool.map(physics.simulate, specs, chunksize=2)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(traces))
    os.replace(tmp, path)
    print(f"simulated {len(traces)} breaks of seed {seed} in {time.monotonic() - t0:.0f} s")
    return traces


if __name__ == "__main__":
    import sys

    cache = Path(__file__).resolve().parents[2] / "build" / "sensing-corpus"
    for s in sys.argv[1:]:
        load(int(s), cache)
