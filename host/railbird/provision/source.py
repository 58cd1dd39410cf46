"""Where `railbird node provision` builds the firmware from: the repository this package
runs from (a checkout; `pip install -e`), else the copy of the firmware sources that pip
installed under <prefix>/share/railbird (pyproject.toml [tool.setuptools.data-files]), which
keeps the repository's layout; and the firmware build, tools/build_firmware.py, loaded from
that tree as a module (`make firmware` runs the same file)."""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[3]
BUILD_SCRIPT = Path("tools") / "build_firmware.py"


class SourceError(RuntimeError):
    pass


def candidates() -> list[Path]:
    share = [
        Path(base) / "share" / "railbird"
        for base in (
            sysconfig.get_path("data"),
            sys.prefix,
            sysconfig.get_path("data", "posix_user"),
        )
        if base
    ]
    return [REPO, *dict.fromkeys(share)]


def tree(explicit: Path | None = None) -> Path:
    """The source tree to build from: `explicit` (--source), else the first candidate that
    holds the build script and the node firmware."""
    for t in [explicit] if explicit is not None else candidates():
        if (t / BUILD_SCRIPT).is_file() and (t / "firmware" / "main.py").is_file():
            return t
    where = explicit or " or ".join(str(c) for c in candidates())
    raise SourceError(
        f"no firmware sources in {where}: install railbird from its repository "
        "(pip install '<checkout>[flash]') or give --source <checkout>"
    )


def build_module(src: Path) -> ModuleType:
    """tools/build_firmware.py of `src`, imported (it finds the firmware next to itself)."""
    path = src / BUILD_SCRIPT
    spec = importlib.util.spec_from_file_location("railbird_build_firmware", path)
    if spec is None or spec.loader is None:
        raise SourceError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
