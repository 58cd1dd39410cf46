# Railbird sensor node: runs first at every reset, before main.py. It picks the firmware set
# to run (rbnode.ota.select: the one flashed over USB at the root, or an over-the-air set in
# /fw/a or /fw/b, confirmed or on trial) and puts it first on sys.path, so main.py imports
# that set's modules. Before it imports a set on trial it arms the hardware watchdog: a set
# that hangs (while importing, or before its node feeds the watchdog) resets the board after
# one period, and select() takes that watchdog reset as the trial's failure. Keep it minimal:
# a crash here would stop the board before the node starts, so on any error the flashed set
# runs. See firmware/README.md, "Over-the-air updates".
# First of all, the console (rbnode.lock): a board whose config.json says "locked" turns
# Ctrl-C off before anything else and leaves main.py CONSOLE (its state) and CONSOLE_LOCK
# (what main.py calls first: MicroPython turns Ctrl-C back on for every file it runs) and
# CONSOLE_RESET (how main.py resets the board when even its imports failed).
import gc

# the board: littlefs at "/"; the simulated board (rbnode.simboot) runs this file with its
# flash directory as FS_ROOT
FS_ROOT = globals().get("FS_ROOT", "")


def _console():
    from rbnode import lock
    from rbnode.hw import chip
    from rbnode.hw.storage import FileStorage

    c = chip()
    return lock.at_boot(c, FileStorage(FS_ROOT)) + (c.reset,)


def _select():
    from rbnode import ota
    from rbnode.hw import chip
    from rbnode.hw.storage import FileStorage

    st = FileStorage(FS_ROOT)
    c = chip()
    run = ota.select(st, c.reset_cause())
    if run["trial"] is not None:
        c.watchdog(ota.TRIAL_WDT_MS)  # cannot be stopped: the node's supervisor feeds it
    ota.activate(st, run["dir"])
    if run["trial"] is not None:
        # a set on trial that cannot import what main.py needs is rolled back at once: main.py
        # would stop at the REPL, where only the watchdog would reset the board
        try:
            import rbnode.hw
            import rbnode.node  # noqa: F401 - imported only to prove the set imports
        # a set on trial that fails to import for ANY reason (ImportError, a SyntaxError
        # or an incompatible .mpy's ValueError, MemoryError, whatever its top level
        # raises) must be rolled back, or the board stops at the REPL
        except Exception as e:  # noqa: BLE001 - any import failure rolls the set back
            print("railbird: firmware", run["version"], "does not import:", repr(e))
            ota.rollback(st, "import failed: %r" % (e,))
            c.reset()
    print("railbird: firmware", run["version"] or "(flashed)", "in /" + run["dir"],
          "on trial" if run["trial"] is not None else "")


CONSOLE = None
CONSOLE_LOCK = CONSOLE_RESET = None
while CONSOLE is None:
    try:
        CONSOLE, CONSOLE_LOCK, CONSOLE_RESET = _console()
    except KeyboardInterrupt:  # a Ctrl-C before the lock took hold (mpremote sends one)
        pass
    except Exception as e:  # noqa: BLE001 - no decision: the console stays as it is
        print("railbird: console lock failed:", repr(e))
        CONSOLE = "open"
try:
    _select()
except Exception as e:  # noqa: BLE001 - last line of defence: the flashed set always runs
    print("railbird: firmware selection failed, running the flashed set:", repr(e))
gc.collect()
