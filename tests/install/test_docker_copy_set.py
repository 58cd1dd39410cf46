"""The Docker image builds (issue 24, item 2). There is no Docker daemon here, so this test
does what the image's build does with the files it copies: it reads deploy/docker/
Dockerfile's `COPY` lines up to the `pip install`, copies exactly those paths of the
repository (less what .dockerignore leaves out of the build context) into an empty
directory, and builds and installs the package from there with the same pip. A file that
pyproject.toml needs and the Dockerfile does not copy fails here, as it failed the image
("can't copy 'tools/build_firmware.py'"), instead of on a bar owner's machine.

It also checks what the image must hold for a Docker venue to provision boards and build
update sets (docs/install.md, "Docker instead of systemd"): the `[flash]` tools and the
firmware sources installed under share/railbird."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "docker" / "Dockerfile"

pytestmark = pytest.mark.slow


def _instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined."""
    out, cur = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line.rstrip("\\").strip() + " "
        if not line.endswith("\\"):
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    return out


def _copies_before_install() -> tuple[list[tuple[list[str], str]], str]:
    """The COPY lines before the RUN that installs the package, and that RUN's command."""
    copies = []
    for word, args in _instructions():
        if word == "COPY":
            *srcs, dest = args.split()
            copies.append((srcs, dest))
        elif word == "RUN" and "pip install" in args:
            return copies, args
    raise AssertionError("the Dockerfile has no RUN pip install")


def _ignored(rel: str, patterns: list[str]) -> bool:
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.removeprefix("**/")
        for i in range(len(parts)):
            if fnmatch.fnmatch("/".join(parts[: i + 1]), pat) or fnmatch.fnmatch(parts[i], pat):
                return True
    return False


def _context(tmp: Path) -> tuple[Path, str]:
    """The image's /src as the Dockerfile fills it, and the install command."""
    patterns = [
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: the build context cannot be told")
    src = tmp / "src"
    src.mkdir()
    copies, install = _copies_before_install()
    for srcs, dest in copies:
        base = src / dest.removeprefix("./")  # relative to WORKDIR /src
        for s in srcs:
            s = s.rstrip("/")
            for rel in tracked:
                if _ignored(rel, patterns):
                    continue
                if rel == s:  # a file: into the directory `dest`, or renamed to it
                    into_dir = dest.endswith("/") or len(srcs) > 1
                    target = base / Path(rel).name if into_dir else base
                elif rel.startswith(s + "/"):  # a directory's contents go into `dest`
                    target = base / rel[len(s) + 1 :]
                else:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, target)
    return src, install


def test_the_images_copy_set_builds_and_installs(tmp_path):
    src, install = _context(tmp_path)
    wheels = tmp_path / "wheels"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "-q", "-w", str(wheels), str(src)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, f"the image's pip install would fail:\n{r.stdout}\n{r.stderr}"
    (wheel,) = wheels.glob("railbird-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())

    # every data file pyproject.toml names is in the wheel (what provisioning builds from)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data_files = meta["tool"]["setuptools"]["data-files"]
    for dest, globs in data_files.items():
        for g in globs:
            matched = sorted(ROOT.glob(g))
            assert matched, f"pyproject data-files {g} matches nothing"
            for f in matched:
                inside = f"{dest}/{f.name}"
                assert any(n.endswith(".data/data/" + inside) for n in names), (
                    f"{inside} is not in the image's package: the Dockerfile does not copy it"
                )

    # the image installs the board tools: a Docker venue provisions and builds update sets
    assert "[flash]" in install, f"the image installs without the board tools: {install}"

    # and the installed package runs
    target = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-cache-dir", "-q",
         "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, PYTHONPATH=str(target))
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "--help"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0 and "railbird" in r.stdout, r.stderr
    installed = subprocess.run(
        [sys.executable, "-c", "import railbird, sys; print(railbird.__file__)"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    ).stdout  # fmt: skip
    assert installed.startswith(str(target)), installed  # not the checkout's


def test_the_copy_set_reader_sees_a_missing_file(tmp_path):
    """The check above fails when a needed path is not copied (what it caught: tools/)."""
    src, _ = _context(tmp_path)
    shutil.rmtree(src / "tools")
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "-q", "-w", str(tmp_path / "w"), str(src)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode != 0 and "build_firmware" in (r.stdout + r.stderr)
