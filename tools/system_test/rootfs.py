"""The machine's root file system: Debian 12 from `debootstrap`, cached by `VERSION`.

The cached root is never booted: each run boots a copy, so a run starts from the same
fresh machine. What it holds is what docs/install.md asks of a venue's machine before
Railbird (systemd, Python 3.11 with venv, git, sudo; `make` for `make demo` from a clone,
README.md). The packages `railbird setup` installs with apt-get (mosquitto,
mosquitto-clients) are downloaded into apt's archive cache and left uninstalled: the machine
has no network, and its apt-get installs them from the cache as it would from the mirror,
the package's own mosquitto.service started and all."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = (
    "systemd",
    "systemd-sysv",
    "dbus",
    "python3",
    "python3-venv",
    "git",
    "make",
    "sudo",
    "procps",
    "iproute2",
    "ca-certificates",
)
# Downloaded only: `railbird setup` installs them (apt-get install -y mosquitto ...).
OFFLINE = ("mosquitto", "mosquitto-clients")
# Bump when the root's making changes in a way the package list does not show.
VERSION = 3
HOSTNAME = "railbird-venue"


def key() -> str:
    text = f"{VERSION} {SUITE} {MIRROR} {' '.join(PACKAGES)} {' '.join(OFFLINE)}"
    return f"{SUITE}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class Root:
    path: Path
    made_s: float | None  # seconds debootstrap took; None when it came from the cache


def ensure(cache: Path) -> Root:
    """The cached root under `cache`, made with debootstrap if missing."""
    done = cache / key()
    if (done / "etc" / "os-release").exists():
        return Root(done, None)
    partial = cache / f"{key()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    subprocess.run(
        [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            SUITE,
            str(partial),
            MIRROR,
        ],
        check=True,
    )
    subprocess.run(
        ["chroot", str(partial), "apt-get", "install", "-y", "--download-only", *OFFLINE],
        check=True,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"},
    )
    made = time.monotonic() - t0
    settle(partial)
    partial.rename(done)
    return Root(done, made)


def settle(root: Path) -> None:
    """What a first boot needs on a root nobody logs in to: a machine id made at boot and a
    host name. apt's lists and archive cache stay: the offline install reads them."""
    (root / "etc" / "machine-id").write_text("")
    (root / "etc" / "hostname").write_text(f"{HOSTNAME}\n")
    # as Debian's installer writes it: sudo resolves the host's own name without DNS
    hosts = f"127.0.0.1\tlocalhost\n127.0.1.1\t{HOSTNAME}\n::1\tlocalhost ip6-localhost\n"
    (root / "etc" / "hosts").write_text(hosts)


def fresh_copy(root: Root, dest: Path) -> float:
    """A copy of the cached root at `dest` for one run -> seconds it took."""
    t0 = time.monotonic()
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(root.path), str(dest)], check=True)
    return time.monotonic() - t0
