"""Hardware layer. `hal.Hardware` is the interface; `esp32.Esp32Hardware` is the real board
(imports machine/esp32/network: device only); `sim.SimHardware` simulates it under CPython
and MicroPython. Pick with `rbnode.hw.load()` (esp32 when `machine` exists, else sim). The
only package that may import machine, network or esp32; beyond them, only MicroPython's
standard modules, pinmap_core and its own modules.

`rbnode.hw.chip()` is the little boot.py needs before any firmware set is imported, without
setting up a single pin: .reset_cause() (hal RESET_CAUSES), .watchdog(timeout_ms) (the
hardware watchdog, which cannot be stopped; hal.Hardware.watchdog() later re-arms the same
one), .reset(), and the console for rbnode.lock: .lock_console() (Ctrl-C off, no second
terminal), .open_console(), .recovery_held(pin, window_ms). esp32.Chip on the board,
sim.chip() elsewhere."""


def load(**kw):
    try:
        import machine  # noqa: F401 - probing for the board: no importlib.util on MicroPython
        import esp32  # noqa: F401 - probing for the board, like machine above
    except ImportError:
        from rbnode.hw.sim import SimHardware
        return SimHardware(**kw)
    from rbnode.hw.esp32 import Esp32Hardware
    return Esp32Hardware(**kw)


def chip():
    try:
        import machine  # noqa: F401 - probing for the board, as load() does
        import esp32  # noqa: F401 - probing for the board, as load() does
    except ImportError:
        from rbnode.hw import sim
        return sim.chip()
    from rbnode.hw.esp32 import Chip
    return Chip()
