"""The host's tools for the sensor kit: pin maps (`pinmap_core`, shared with the firmware),
the pin map checker (`check`, driven by `chips.json`), the wiring diagram generator
(`wiring`) and calibration (`calibrate`). May import `rbproto`, paho-mqtt and the standard
library, no other part of `railbird`; `pinmap_core` itself imports only `json`, since the
firmware build copies it to the node as it is.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

from . import pinmap_core
from .pinmap_core import PinmapError

# The shipped pin maps live in the repository's hardware/pinmaps/ (next to the docs); an
# installation without the repository has pip's copy under <prefix>/share/railbird
# (pyproject.toml data-files).
REPO = Path(__file__).resolve().parents[3]


def _pinmap_dir() -> Path:
    here = REPO / "hardware" / "pinmaps"
    for d in [here] + [
        Path(base) / "share" / "railbird" / "hardware" / "pinmaps"
        for base in (sysconfig.get_path("data"), sys.prefix)
    ]:
        if d.is_dir():
            return d
    return here


PINMAP_DIR = _pinmap_dir()


def shipped_pinmaps() -> list[Path]:
    return sorted(PINMAP_DIR.glob("*.json")) if PINMAP_DIR.is_dir() else []


def resolve(name_or_path: str) -> Path:
    """A pin map path from a path or the id of a shipped map ('esp32-devkitc')."""
    p = Path(name_or_path)
    if p.exists():
        return p
    candidate = PINMAP_DIR / f"{name_or_path}.json"
    if candidate.exists():
        return candidate
    known = ", ".join(q.stem for q in shipped_pinmaps()) or "none"
    raise FileNotFoundError(f"no pin map {name_or_path!r} (not a file; shipped ids: {known})")


def load(name_or_path: str) -> dict:
    """Read and shape-check a pin map (raises PinmapError or OSError)."""
    return pinmap_core.load(str(resolve(name_or_path)))


__all__ = ["PINMAP_DIR", "PinmapError", "load", "pinmap_core", "resolve", "shipped_pinmaps"]
