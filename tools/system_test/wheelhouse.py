"""Every wheel the machine's installs need, made on the host beforehand (the machine has no
network): Railbird's dependencies with the `[dev]` extra (which holds `[flash]`: the
documented install takes `[flash]`, `make demo` from a clone takes `[dev]`), and setuptools
and wheel, which pip's isolated build of the clone needs. Railbird's own wheel is left out:
the machine builds it from its clone, as docs/install.md says. Cached by pyproject.toml."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

BUILD = ("setuptools>=77", "wheel", "pip>=23")


def ensure(repo: Path, cache: Path) -> Path:
    """The wheelhouse for `repo`'s pyproject.toml under `cache` -> its directory."""
    digest = hashlib.sha256((repo / "pyproject.toml").read_bytes()).hexdigest()[:12]
    done = cache / f"wheelhouse-{digest}"
    if (done / ".complete").exists():
        return done
    partial = cache / f"wheelhouse-{digest}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(partial),
            f"{repo}[dev]",
            *BUILD,
        ],
        check=True,
    )
    for own in partial.glob("railbird-*.whl"):
        own.unlink()
    (partial / ".complete").write_text(digest + "\n")
    shutil.rmtree(done, ignore_errors=True)
    partial.rename(done)
    return done
