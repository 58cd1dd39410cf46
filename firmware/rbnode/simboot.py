"""One boot of a simulated board, as a process (CPython only; run by rbnode.simproc).

    python -P -m rbnode.simboot SPEC.json      (cwd: anything; the flash is SPEC's root)

The process is the board between two resets. With the flashed set (firmware/, protocol/)
on sys.path, as the board's flash root holds it, it runs what the board runs:
1. firmware/boot.py itself, on the flash directory (FS_ROOT): rbnode.ota.select picks the
   set, counts a trial boot, arms the watchdog before importing a set on trial, puts
   fw/a or fw/b first on sys.path and rolls back a set that does not import;
2. then main.py's part (the one flash-only file it stands in for: main.py loads a pin map
   and Wi-Fi, which the simulation has not): `from rbnode.node import Node` -- the
   downloaded set's node when boot.py chose a slot --, Node on simulated hardware, its
   tasks; a fatal error is printed and the board resets after `fatal_pause_s` (main.py:
   5 s), an exception outside main.py's handler ends the process as the REPL would;
   on a locked board (boot.py's CONSOLE, rbnode.lock) Ctrl-C is turned off again first and
   whatever ends main.py resets the board instead.
The simulated hardware (rbnode.hw.sim, imported before boot.py runs) stands in for the chip
and is not part of any set: the downloaded set's modules run on it.

To the parent, on the file descriptor SPEC names, one line per event:
    wdt <ms>     the watchdog armed (boot.py on trial, the node's supervisor)
    feed         the watchdog fed (at most every 0.2 s)
    node <boot> <fw>   the node started: its boot count and the version it reports
    console <state>    the console locked or open (rbnode.lock; SIGINT is its Ctrl-C)
    ctrl-c ignored     a SIGINT while the console is locked
The parent resets a board whose watchdog was not fed within its period (kills the process;
the next boot's reset cause is "wdt"). Exit status RESET: the board reset itself.

SPEC (JSON): root (the flash directory), fd, boot_py (the flashed boot.py), dev (the device
config), seed, reset_cause, sim_kw (SimHardware keywords: dead channels...), speed,
step_us, fatal_pause_s, recovery (the recovery pin held at this reset).
"""

import asyncio
import json
import os
import sys
import time

RESET = 75  # exit status of a board that reset itself (machine.reset())


def _reporter(fd):
    def report(line):
        try:
            os.write(fd, (line + "\n").encode())
        except OSError:
            pass  # the parent is gone: the board runs on

    return report


def _reset():
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(RESET)


async def _drive(hw, node, speed, step_us):
    """Simulated time at `speed` times real time, the sensors polled after every step (as
    rbnode.simnode)."""
    t0 = time.monotonic()
    s0 = hw.now_us
    while True:
        target = s0 + int((time.monotonic() - t0) * 1e6 * speed)
        k = 0
        while hw.now_us < target:
            hw.run_until(min(target, hw.now_us + step_us))
            node.poll_sensors()
            k += 1
            if k % 200 == 0:
                await asyncio.sleep(0)
        await asyncio.sleep(0.001)


async def _run(hw, spec, Node, report):
    # as main.py's run(): the node's own tasks; one that raises dies alone (asyncio logs
    # it) and the supervisor stops feeding the watchdog
    node = Node(hw, spec["dev"])
    print("railbird node", node.node_id, "boot", node.boot, "reset", node.reset_cause)
    report("node %d %s" % (node.boot, node.upd.version))
    asyncio.ensure_future(_drive(hw, node, spec.get("speed", 1.0), spec.get("step_us", 1000)))
    await node.run()


def main(argv):
    with open(argv[1]) as f:
        spec = json.load(f)
    report = _reporter(spec["fd"])
    from rbnode.hw import sim

    chip = sim.SimChip(spec.get("reset_cause", "power"), report, spec.get("recovery", False))
    chip.on_reset = _reset
    sim.set_chip(chip)
    SimHardware = sim.SimHardware  # the chip: kept across boot.py's switch of sets
    with open(spec["boot_py"]) as f:
        boot = f.read()
    g = {"__name__": "__main__", "FS_ROOT": spec["root"]}
    exec(compile(boot, spec["boot_py"], "exec"), g)
    if g.get("CONSOLE_LOCK") is not None:
        g["CONSOLE_LOCK"]()  # main.py's first line
    try:
        _main(spec, report, chip, SimHardware)
    except BaseException:  # re-raised unless locked: a locked board never stops at the REPL
        if g.get("CONSOLE") != "locked":
            raise
        import traceback

        traceback.print_exc()
    if g.get("CONSOLE") == "locked":
        print("railbird: main.py ended on a locked board: reset")
        chip.reset()


def _main(spec, report, chip, SimHardware):
    # main.py: imported outside its handler, as on the board (a failure here: the REPL)
    from rbnode.node import Node

    hw = SimHardware(seed=spec.get("seed", 1), fs_root=spec["root"],
                     reset_cause=chip.cause, chip=chip, **spec.get("sim_kw", {}))
    hw.reset_hook = chip.reset
    hw.wlan().active(True)
    try:
        asyncio.run(_run(hw, spec, Node, report))
    except Exception:  # noqa: BLE001 - main.py's last resort: report and reset
        import traceback

        traceback.print_exc()
        sys.stdout.flush()
        time.sleep(spec.get("fatal_pause_s", 5))
        hw.reset()


if __name__ == "__main__":
    main(sys.argv)
