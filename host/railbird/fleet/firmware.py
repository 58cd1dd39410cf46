"""A firmware set on the host: a `make firmware` node build (firmware/build/node) with its
manifest.json (tools/build_firmware.py), checked before any node is told about it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"


class FirmwareError(ValueError):
    """The directory is not a complete, intact firmware set; the message says why."""


@dataclass(frozen=True)
class FirmwareSet:
    root: Path
    version: str
    manifest: bytes  # manifest.json as served (its SHA-256 goes into the update command)
    files: tuple[tuple[str, int, str], ...]  # (path, size, sha256) installed over the air

    @property
    def manifest_sha256(self) -> str:
        return hashlib.sha256(self.manifest).hexdigest()

    @property
    def size(self) -> int:
        return sum(f[1] for f in self.files)

    def path_of(self, rel: str) -> Path | None:
        """The file behind a served path: manifest.json or a listed file, else None."""
        if rel == MANIFEST:
            return self.root / MANIFEST
        for p, _, _ in self.files:
            if p == rel:
                return self.root / p
        return None


def load(root: str | Path, verify: bool = True) -> FirmwareSet:
    """Read `root`/manifest.json; with verify, every listed file must have its size and
    SHA-256 (a set that is already wrong on the host is never offered to a node)."""
    root = Path(root)
    try:
        raw = (root / MANIFEST).read_bytes()
    except OSError as e:
        raise FirmwareError(
            f"{root}: no {MANIFEST} ({e.strerror}); build a set with `make firmware`"
        ) from None
    try:
        doc = json.loads(raw)
        version = doc["version"]
        files = tuple((f["path"], int(f["size"]), f["sha256"]) for f in doc["files"])
    except (ValueError, KeyError, TypeError) as e:
        raise FirmwareError(f"{root}/{MANIFEST}: not a firmware manifest ({e})") from None
    if doc.get("target", "node") != "node":
        raise FirmwareError(f"{root}: a {doc.get('target')} set, not a sensor node set")
    if not isinstance(version, str) or not 0 < len(version) <= 32 or not files:
        raise FirmwareError(f"{root}/{MANIFEST}: no version or no files")
    for path, size, digest in files:
        parts = path.split("/")
        if path.startswith("/") or ".." in parts or "" in parts:
            raise FirmwareError(f"{root}/{MANIFEST}: {path!r} is outside the set")
        if not verify:
            continue
        try:
            data = (root / path).read_bytes()
        except OSError as e:
            raise FirmwareError(f"{root}: {path} is missing ({e.strerror})") from None
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            raise FirmwareError(
                f"{root}: {path} does not match the manifest (rebuild with `make firmware`)"
            )
    return FirmwareSet(root, version, raw, files)
