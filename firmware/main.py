"""Railbird sensor node entry point (device): /config.json + /pinmap.json ->
rbnode.node.Node (which joins the Wi-Fi).

The pin map is a file of hardware/pinmaps/ that `make firmware` (--pinmap ID) installs as
/pinmap.json, read with pinmap_core (config `pinmap`: null = that file, a file name on the
board, or a pin map object); its id is the birth message's `pinmap`.

A file `provisioning` on the board holds the node for one boot (held(), below).

A fatal error is printed and the board resets after 5 s (the boot counter rises, the next
birth reports the reset cause). See firmware/README.md.

A locked board (rbnode.lock; boot.py left CONSOLE "locked" and CONSOLE_LOCK): Ctrl-C off
again before anything else, and main.py never ends at the REPL: whatever ends it, an
exception, KeyboardInterrupt and SystemExit included, resets the board.
"""

# boot.py's CONSOLE_LOCK, first, before an import a Ctrl-C could cut; looked up in
# globals() (boot.py's names are main.py's globals on the board), so a run without boot.py
# before it, or an unlocked one (None), calls nothing
_lock = globals().get("CONSOLE_LOCK")
if _lock is not None:
    _lock()


def locked():
    return globals().get("CONSOLE") == "locked"


def reset_locked(e):
    """A locked board's end of main.py, whatever ended it: printed, then a reset."""
    import sys
    if e is not None:
        sys.print_exception(e)
    print("railbird: main.py ended on a locked board: reset")
    globals()["CONSOLE_RESET"]()


try:
    import asyncio  # MicroPython 1.21+ (1.27 is the target); `uasyncio` before
    import json
    import time

    from rbnode import hw as rbhw
    from rbnode.hw import hal
    from rbnode.mqtt import ssl_context
    from rbnode.lock import HOLD
    from rbnode.node import Node
except BaseException as e:  # re-raised unless locked: a locked board never stops at the REPL
    if not locked():
        raise
    reset_locked(e)


# seconds a fatal error stays on the console before the reset (a test sets it before)
FATAL_PAUSE_S = globals().get("FATAL_PAUSE_S", 5)


def load_config(path="config.json"):
    with open(path) as f:
        return json.load(f)


def make_ssl(broker):
    """TLS is one setting away: "tls": true and "ca": "<file on the board>" (the same
    context builder the tests exercise, which also works on builds with only `tls`)."""
    if not broker.get("tls"):
        return None
    return ssl_context(broker.get("ca"))


async def run(hw, dev, node):
    # the node keeps the Wi-Fi itself (Node._wifi_task), with the settings in use
    # (rbnode.netcfg: config.json's, or the ones the host sent since)
    await node.run()


def held():
    """`railbird node provision` and `make flash` leave this file and reset the board: this
    one boot starts nothing, so no watchdog (which cannot be stopped once started) resets the
    board in the middle of their copy (railbird.provision.board)."""
    import os
    try:
        os.remove(HOLD)
    except OSError:
        return False
    print("railbird: held for provisioning; the next reset starts the node")
    return True


def main():
    if held():
        return
    dev = load_config()
    try:
        hw = rbhw.load(pinmap=hal.load_pinmap(dev.get("pinmap")))
    except Exception as e:  # noqa: BLE001 - no usable pin map: nothing can run
        import sys
        sys.print_exception(e)
        print("railbird: pin map", dev.get("pinmap") or hal.PINMAP_FILE,
              "unusable (make flash installs pinmap.json)")
        time.sleep(FATAL_PAUSE_S)
        rbhw.chip().reset()
    try:
        node = Node(hw, dev, ssl=make_ssl(dev.get("broker") or {}))
        print("railbird node", node.node_id, "boot", node.boot, "reset", node.reset_cause)
        asyncio.run(run(hw, dev, node))
    except Exception as e:  # noqa: BLE001 - last resort: report and reset
        import sys
        sys.print_exception(e)
        time.sleep(FATAL_PAUSE_S)
        hw.reset()


def start():
    try:
        main()
    except BaseException as e:  # re-raised unless locked: a locked board never stops at the REPL
        if not locked():
            raise
        reset_locked(e)
    if locked():
        reset_locked(None)


start()
