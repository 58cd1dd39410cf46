# Real MicroPython: firmware/boot.py and main.py themselves decide the console (rbnode.lock).
# Run by test_node_lock.py with tests/harness/mp_run.mjs, firmware/ first (/lib-0/boot.py,
# /lib-0/main.py); "/" stands for the board's flash, the chip is rbnode.hw.sim's. One
# "LOCK ..." line per check.
import json
import os
import sys

with open("/lib-0/boot.py") as f:
    BOOT = f.read()
with open("/lib-0/main.py") as f:
    MAIN = f.read()
PATH = list(sys.path)


def write(name, data):
    with open("/" + name, "w") as f:
        f.write(data)


def forget(name):
    try:  # noqa: SIM105 - no contextlib in MicroPython
        os.remove("/" + name)
    except OSError:
        pass


def reset(recovery=False):
    """A reset: a new chip, the flashed modules, boot.py; -> its globals (main.py's)."""
    sys.path[:] = PATH
    for name in list(sys.modules):
        if name.split(".")[0] in ("rbnode", "rbproto"):
            del sys.modules[name]
    from rbnode.hw import sim as s

    chip = s.SimChip(recovery=recovery)
    s.set_chip(chip)
    g = {"__name__": "__main__"}
    exec(BOOT, g)
    return chip, g


def config(**kw):
    d = {"node": "n1", "table": "t1", "venue": "club", "pinmap": "no-such-map.json"}
    d.update(kw)
    write("config.json", json.dumps(d))


config()
chip, g = reset()
print("LOCK unlocked", g["CONSOLE"], chip.console, chip.recovery_asked)
config(locked=True)
chip, g = reset()
print("LOCK locked", g["CONSOLE"], chip.console, chip.recovery_asked)
chip, g = reset(recovery=True)
print("LOCK recovery", g["CONSOLE"], chip.console)
config(locked=True, recovery_pin=27)
chip, g = reset()
print("LOCK pin", chip.recovery_asked)
write("provisioning", "")
chip, g = reset()
print("LOCK held", g["CONSOLE"], chip.console, chip.recovery_asked)
forget("provisioning")
write("config.json", "{not json")
chip, g = reset()
print("LOCK unreadable", g["CONSOLE"], chip.console)


def run_main(g, chip):
    """main.py after boot.py, on a pin map that does not exist: its fatal path."""
    chip.console = "open"  # what MicroPython does before it runs main.py
    g["FATAL_PAUSE_S"] = 0
    try:
        exec(MAIN, g)
    except SystemExit as e:  # the chip's reset
        return "reset %s" % (e,)
    except Exception as e:  # noqa: BLE001 - what would reach the REPL
        return "repl %r" % (e,)
    return "repl (main.py returned)"


config(locked=True)
chip, g = reset()
print("LOCK main locked", run_main(g, chip), chip.console)
config()
chip, g = reset()
print("LOCK main unlocked", run_main(g, chip), chip.console)
# a locked board whose main.py would end (here: the config gone after boot.py read it)
config(locked=True)
chip, g = reset()
forget("config.json")
print("LOCK main ends locked", run_main(g, chip), chip.console)
config()
chip, g = reset()
forget("config.json")
print("LOCK main ends unlocked", run_main(g, chip), chip.console)
