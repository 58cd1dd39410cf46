# Railbird sensor node: runs first at every reset, before main.py. It picks the firmware set
# to run (rbnode.ota.select: the one flashed over USB at the root, or an over-the-air set in
# /fw/a or /fw/b, confirmed or on trial) and puts it first on sys.path, so main.py imports
# that set's modules. Keep it minimal: a crash here would stop the board before the
# watchdog and the node start, so on any error the flashed set runs. See firmware/README.md,
# "Over-the-air updates".
import gc


def _select():
    from rbnode import ota
    from rbnode.hw.storage import FileStorage

    st = FileStorage("")
    run = ota.select(st)
    ota.activate(st, run["dir"])
    if run["trial"] is not None:
        # a set on trial that cannot import what main.py needs is rolled back at once: main.py
        # would stop at the REPL, where no watchdog resets the board
        try:
            import rbnode.hw
            import rbnode.node  # noqa: F401 - imported only to prove the set imports
        # a set on trial that fails to import for ANY reason (ImportError, a SyntaxError
        # or an incompatible .mpy's ValueError, MemoryError, whatever its top level
        # raises) must be rolled back, or the board stops at the REPL
        except Exception as e:  # noqa: BLE001 - any import failure rolls the set back
            print("railbird: firmware", run["version"], "does not import:", repr(e))
            ota.rollback(st, "import failed: %r" % (e,))
            import machine
            machine.reset()
    print("railbird: firmware", run["version"] or "(flashed)", "in /" + run["dir"],
          "on trial" if run["trial"] is not None else "")


try:
    _select()
except Exception as e:  # noqa: BLE001 - last line of defence: the flashed set always runs
    print("railbird: firmware selection failed, running the flashed set:", repr(e))
gc.collect()
