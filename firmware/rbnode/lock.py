"""The locked build (docs/install.md, "What a board holds"): a board whose config.json says
`"locked": true` keeps its USB console shut to anyone at the table.

What a board holds in flash (its Wi-Fi password, its broker password) anyone with a USB cable
could otherwise read with `mpremote`: the MicroPython REPL answers on the USB serial port to
a Ctrl-C. A locked board turns Ctrl-C off (micropython.kbd_intr(-1)) and detaches any extra
terminal (os.dupterm: WebREPL) before it reads anything; its main.py never returns to the
REPL (any error, a KeyboardInterrupt or SystemExit included, resets the board); its node
does not answer Improv Wi-Fi on the console. The ESP32 port cannot detach the REPL from its
own USB UART from Python (no os.dupterm slot is that UART): what the board prints still
goes out there, and nothing it prints is a secret.

The way back, for that boot only: hold the recovery pin (config `recovery_pin`, default
GPIO0, the BOOT button of the DevKitC boards) low during the RECOVERY_WINDOW_MS that boot.py
waits after a reset; or erase the flash with esptool (which erases the secrets too) and
provision again. A board held for provisioning (main.py's `provisioning` file, which only
someone at the REPL could have written) is open for that boot, so a locked config can be
installed and the copy read back.

at_boot() runs in boot.py, once per reset, through the hardware layer's chip
(rbnode.hw.chip(): .lock_console(), .open_console(), .recovery_held(pin, window_ms)).
"""

import json

KEY = "locked"  # config.json: true for a locked board
PIN_KEY = "recovery_pin"
RECOVERY_PIN = 0  # GPIO0: the BOOT button of the ESP32 and ESP32-S3 DevKitC
RECOVERY_WINDOW_MS = 1500  # a locked board waits this long for the recovery pin
HOLD = "provisioning"  # main.py's hold file (main.held())
CONFIG = "config.json"

OPEN = "open"  # not locked: the console as MicroPython has it
HELD = "held"  # locked, but held for provisioning: open for this boot
RECOVERY = "recovery"  # locked, the recovery pin held: open for this boot
LOCKED = "locked"


def wanted(st):
    """The config's `locked`, and its recovery pin -> (bool, pin). A config that cannot be
    read is not locked: the node cannot run on it either, and the REPL is the way to mend
    it."""
    try:
        cfg = json.loads(st.read(CONFIG))
    except (OSError, ValueError):
        return False, RECOVERY_PIN
    if not isinstance(cfg, dict):
        return False, RECOVERY_PIN
    pin = cfg.get(PIN_KEY, RECOVERY_PIN)
    if not isinstance(pin, int) or isinstance(pin, bool) or pin < 0:
        pin = RECOVERY_PIN
    return cfg.get(KEY) is True, pin


def at_boot(chip, st):
    """boot.py: the console for this boot -> (state, lock), `lock` the function main.py
    calls first (MicroPython turns Ctrl-C back on for every file it runs), None when
    open."""
    chip.lock_console()  # first: nothing below may be cut short by a Ctrl-C
    locked, pin = wanted(st)
    state = OPEN
    if locked:
        if st.size(HOLD) is not None:
            state = HELD
        elif chip.recovery_held(pin, RECOVERY_WINDOW_MS):
            state = RECOVERY
        else:
            state = LOCKED
    if state == LOCKED:
        print("railbird: console locked (config.json \"locked\")")
        return state, chip.lock_console
    chip.open_console()
    if state == RECOVERY:
        print("railbird: recovery pin", pin, "held: the console is open for this boot")
    return state, None
