"""The environment a child `python -m railbird...` of the daemon starts with: the daemon's
own, with the folders railbird and rbproto are imported from first on its path, since the
daemon may run from a checkout rather than an installed package (the history pages' worker,
railbird.outputs.web.historypool; the MQTT ingest, railbird.daemon.ingestproc)."""

from __future__ import annotations

import os

import railbird
import rbproto


def child_env() -> dict[str, str]:
    roots = [
        os.path.dirname(os.path.dirname(os.path.abspath(pkg.__file__ or "")))
        for pkg in (railbird, rbproto)
    ]
    path = [*roots, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(path)))
