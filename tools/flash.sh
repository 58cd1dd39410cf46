#!/usr/bin/env bash
# `make flash PORT=/dev/ttyUSB0`: install firmware/build (made by `make firmware`) on an
# ESP32 running MicroPython 1.27, with mpremote.
#   - copies rbnode/, rbproto/, boot.py, main.py;
#   - copies config.json only when the board has none (it holds the node's Wi-Fi and
#     broker secrets), unless CONFIG=path/to/config.json is given;
#   - resets the board.
# Environment: PORT (default /dev/ttyUSB0), CONFIG, MPREMOTE (default: the venv's).
set -euo pipefail
PORT="${1:-${PORT:-/dev/ttyUSB0}}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$HERE/firmware/build"
MPREMOTE="${MPREMOTE:-$HERE/.venv/bin/mpremote}"
[ -x "$MPREMOTE" ] || MPREMOTE=mpremote
[ -f "$BUILD/main.py" ] || { echo "no build: run 'make firmware' first" >&2; exit 1; }
[ -e "$PORT" ] || { echo "no serial port $PORT (set PORT=...)" >&2; exit 1; }

mp() { "$MPREMOTE" connect "$PORT" "$@"; }

echo "installing $BUILD on $PORT"
cd "$BUILD"
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
"
mp fs cp -r rbnode rbproto :
mp fs cp boot.py main.py :
if [ -n "${CONFIG:-}" ]; then
  mp fs cp "$CONFIG" :config.json
elif mp fs ls :config.json >/dev/null 2>&1; then
  echo "keeping the board's config.json (CONFIG=file to replace it)"
else
  mp fs cp config.json :config.json
  echo "installed the default config.json: edit node id, Wi-Fi and broker, then reset"
fi
mp reset
echo "done"
