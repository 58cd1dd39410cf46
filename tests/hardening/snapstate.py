"""A pipeline's whole state as bytes, to compare two pipelines exactly: the snapshot's own
encoding (railbird.core.snapshot) with each table's last shots as canonical JSON, since a
restart reads those back from the journal, which keeps them with sorted keys."""

from __future__ import annotations

import json

from railbird.core import snapshot as snap


def state_bytes(pipeline) -> bytes:
    shots = {f"{v}/{t}": tb.shots for (v, t), tb in pipeline.tables.items()}
    return (
        snap.encode(snap.dump(pipeline, shots=False))
        + json.dumps(shots, sort_keys=True, separators=(",", ":")).encode()
    )
