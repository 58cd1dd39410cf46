"""`make test-system`: python3 -m tools.system_test [--write-docs] (as root, from the
repository's root). Exit status 0 when every step passed; the figures are printed either
way, as far as the run got."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools.system_test import host, rootfs, wheelhouse
from tools.system_test.figures import Figures, write_docs
from tools.system_test.journey import RESTART_LIMIT_S, Journey, JourneyError
from tools.system_test.machine import Bind, Machine, MachineError

REPO = Path(__file__).resolve().parents[2]


def git(*args: str, cwd: Path = REPO) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return r.stdout.strip()


def snapshot() -> str:
    """The commit the machine clones: HEAD, with the tracked files' uncommitted changes if
    there are any (`git stash create`; untracked files are not in it)."""
    stash = subprocess.run(["git", "stash", "create"], cwd=REPO, capture_output=True, text=True)
    return stash.stdout.strip() or git("rev-parse", "HEAD")


def publish(bare: Path, commit: str) -> None:
    """`bare` (the repository the machine clones) with `commit` as its branch main."""
    if not (bare / "HEAD").exists():
        shutil.rmtree(bare, ignore_errors=True)
        git("init", "-q", "--bare", "-b", "main", str(bare))
    git("push", "-q", "--force", str(bare), f"{commit}:refs/heads/main")


def newer(bare: Path, work: Path) -> None:
    """A newer build on top of `bare`'s main: the same code, the version one patch higher,
    as a release would be; pushed to `bare` for the machine's `git pull`."""
    clone = work / "newer"
    shutil.rmtree(clone, ignore_errors=True)
    git("clone", "-q", str(bare), str(clone))
    for rel, old, new in (
        ("pyproject.toml", 'version = "0.1.0"', 'version = "0.1.1"'),
        ("host/railbird/__init__.py", '__version__ = "0.1.0"', '__version__ = "0.1.1"'),
    ):
        path = clone / rel
        text = path.read_text()
        if old not in text:
            raise JourneyError(f"{rel}: no {old!r} to make the newer build from")
        path.write_text(text.replace(old, new))
    ident = ["-c", "user.name=system test", "-c", "user.email=system-test@localhost"]
    git(*ident, "commit", "-q", "-am", "release 0.1.1 (make test-system's newer build)", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=clone)


def demo_machine(root: rootfs.Root, dest: Path, first: Machine, fig: Figures) -> None:
    """README.md's `make demo` on a fresh machine: another copy of the cached root, nothing
    installed in it first (item 8 of issue 24)."""
    rootfs.fresh_copy(root, dest)
    m = Machine(dest, first.log.with_name("demo-machine.log"), binds=first.binds)
    try:
        m.boot()
        j = Journey(m, fig)
        j.demo()
        j.say(f"make demo DEMO_SECONDS=20 from a fresh clone: {fig.demo_s:.1f} s")
        m.stop("poweroff")
    finally:
        m.kill()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.system_test", description=__doc__)
    ap.add_argument("--cache", type=Path, default=Path("/var/cache/railbird-system"))
    ap.add_argument("--work", type=Path, default=REPO / "build" / "system-test")
    ap.add_argument("--write-docs", action="store_true", help="the figures into docs/install.md")
    ap.add_argument("--no-demo", action="store_true", help="leave out make demo (item 8)")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    fig = Figures()
    try:
        host.ensure_root()
        host.ensure_tools()
    except host.HostError as e:
        print(f"system-test: {e}", file=sys.stderr)
        return 2
    a.work.mkdir(parents=True, exist_ok=True)
    root = rootfs.ensure(a.cache)
    fig.debootstrap_s = root.made_s
    w0 = time.monotonic()
    wheels = wheelhouse.ensure(REPO, a.cache)
    fig.wheelhouse_s = time.monotonic() - w0 if time.monotonic() - w0 > 5 else None
    bare = a.work / "railbird.git"
    publish(bare, snapshot())
    run_root = a.cache / "run" / "root"
    fig.copy_s = rootfs.fresh_copy(root, run_root)
    logs = a.work / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir()
    m = Machine(
        run_root,
        logs / "machine.log",
        binds=(
            Bind(wheels, "/srv/wheelhouse"),
            Bind(bare, "/srv/railbird.git"),
            Bind(REPO / "tools" / "system_test", "/srv/system-test"),
        ),
    )
    j = Journey(m, fig)
    ok = False
    try:
        fig.boot_s = m.boot()
        j.say(f"booted in {fig.boot_s:.1f} s")
        j.install()
        j.setup()
        j.start()
        j.play()
        j.say("three tables scored")
        j.kill()
        j.reboot()
        j.say(f"rebooted: both services back in {fig.reboot_s:.1f} s, replay --check OK")
        newer(bare, a.work)
        j.upgrade()
        j.add_table()
        m.stop("poweroff")
        if not a.no_demo:
            demo_machine(root, a.cache / "run" / "demo-root", m, fig)
        slow = {
            name: s
            for name, s in (
                ("SIGKILL", fig.kill_restart_s),
                ("upgrade", fig.upgrade_restart_s),
                ("table added", fig.add_table_restart_s),
            )
            if s is not None and s >= RESTART_LIMIT_S
        }
        if slow:
            raise JourneyError(f"restarts of {RESTART_LIMIT_S:.0f} s or more: {slow}")
        ok = True
    except (JourneyError, MachineError, subprocess.SubprocessError) as e:
        print(f"system-test: FAILED: {e}", file=sys.stderr)
        print(f"system-test: logs in {logs}", file=sys.stderr)
    finally:
        m.kill()
    fig.total_s = time.monotonic() - t0
    print("\nsystem-test figures:\n" + fig.table())
    if ok and a.write_docs:
        write_docs(REPO / "docs" / "install.md", fig, time.strftime("%Y-%m-%d", time.gmtime()))
    print(f"\nsystem-test: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
