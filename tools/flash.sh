#!/usr/bin/env bash
# `make flash PORT=/dev/ttyUSB0 [TARGET=scoreboard]`: install a build made by
# `make firmware` on an ESP32 running MicroPython 1.27, with mpremote.
# TARGET=node (default): firmware/build/node, the sensor node
#   - copies rbnode/, rbproto/, pinmap_core.mpy, pinmap.json (the pin map chosen at build
#     time: `make firmware PINMAP=id`), boot.py, main.py;
#   - copies config.json only when the board has none (it holds the node's Wi-Fi and
#     broker secrets), unless CONFIG=path/to/config.json is given;
# TARGET=scoreboard: firmware/build/scoreboard, the scoreboard node
#   - copies segfont/layout/max7219/board (.mpy), hw/ (esp32), rbproto/ (sbframe), main.py;
# both delete stale .py copies of the deployed modules (a .py would shadow the .mpy) and
# reset the board.
# Environment: PORT (default /dev/ttyUSB0), TARGET, CONFIG, MPREMOTE (default: the venv's).
set -euo pipefail
PORT="${1:-${PORT:-/dev/ttyUSB0}}"
TARGET="${2:-${TARGET:-node}}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
# The copy below runs from inside the build directory: make CONFIG absolute first.
if [ -n "${CONFIG:-}" ]; then
  [ -f "$CONFIG" ] || { echo "CONFIG=$CONFIG: no such file" >&2; exit 1; }
  CONFIG="$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")"
fi
MPREMOTE="${MPREMOTE:-$HERE/.venv/bin/mpremote}"
[ -x "$MPREMOTE" ] || MPREMOTE=mpremote
case "$TARGET" in
  node|scoreboard) ;;
  *) echo "TARGET must be node or scoreboard, not '$TARGET'" >&2; exit 2 ;;
esac
BUILD="$HERE/firmware/build/$TARGET"
[ -f "$BUILD/main.py" ] || { echo "no build in $BUILD: run 'make firmware' first" >&2; exit 1; }
[ -e "$PORT" ] || { echo "no serial port $PORT (set PORT=...)" >&2; exit 1; }

mp() { "$MPREMOTE" connect "$PORT" "$@"; }

echo "installing $BUILD ($TARGET) on $PORT"
cd "$BUILD"
if [ "$TARGET" = node ]; then
  mp fs mkdir :rbnode >/dev/null 2>&1 || true
  mp fs mkdir :rbnode/hw >/dev/null 2>&1 || true
  mp fs mkdir :rbproto >/dev/null 2>&1 || true
  # remove stale sources that would shadow the .mpy files (a .py wins over a .mpy)
  mp exec "
import os
for d in ('rbnode', 'rbnode/hw', 'rbproto'):
    for f in os.listdir(d):
        if f.endswith('.py') and f != '__init__.py':
            os.remove(d + '/' + f)
try:
    os.remove('pinmap_core.py')
except OSError:
    pass
"
  mp fs cp -r rbnode rbproto :
  mp fs cp pinmap_core.mpy pinmap.json boot.py main.py :
  if [ -n "${CONFIG:-}" ]; then
    mp fs cp "$CONFIG" :config.json
  elif mp fs ls :config.json >/dev/null 2>&1; then
    echo "keeping the board's config.json (CONFIG=file to replace it)"
  else
    mp fs cp config.json :config.json
    echo "installed the default config.json: edit node id, Wi-Fi and broker, then reset"
  fi
else
  mp fs mkdir :rbproto >/dev/null 2>&1 || true
  mp fs mkdir :hw >/dev/null 2>&1 || true
  mp exec "
import os
for f in ('segfont.py', 'layout.py', 'max7219.py', 'board.py', 'hw_real.py',
          'hw_real.mpy', 'hw/esp32.py',
          'rbproto/sbframe.py'):
    try:
        os.remove(f)
    except OSError:
        pass
"
  mp fs cp -r rbproto :
  mp fs cp -r hw :
  mp fs cp segfont.mpy layout.mpy max7219.mpy board.mpy main.py :
fi
mp reset
echo "done"
