#!/usr/bin/env bash
# `make flash PORT=/dev/ttyUSB0 [TARGET=scoreboard] [CONFIG=node.json]`: install a build made
# by `make firmware` on an ESP32 running MicroPython 1.27, with mpremote (the [flash] extra:
# no Node.js, no mosquitto). The work is railbird.provision.board, which `railbird node
# provision` uses too:
# TARGET=node (default): firmware/build/node, the sensor node. The board is first held (a
#   file `provisioning` and a reset: main.py then starts nothing, so the node's watchdog
#   cannot reset the board mid-copy); config.json is copied only when the board has none (it
#   holds the node's Wi-Fi and broker secrets), unless CONFIG=path/to/config.json is given.
#   A venue's board gets its own config with `railbird node provision` (docs/install.md).
#   LOCKED=1: the config.json installed says "locked" (its USB console shut from the next
#   reset: firmware/rbnode/lock.py, docs/install.md "What a board holds").
# TARGET=scoreboard: firmware/build/scoreboard, the scoreboard node.
# Both make the build's directories, delete a .py that would shadow a deployed .mpy, copy
# every file, read each back (SHA-256) and reset the board.
# Environment: PORT (default /dev/ttyUSB0), TARGET, CONFIG, MPREMOTE (default: the venv's),
# PY (default: the venv's python, else python3).
set -euo pipefail
PORT="${1:-${PORT:-/dev/ttyUSB0}}"
TARGET="${2:-${TARGET:-node}}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
case "$TARGET" in
  node|scoreboard) ;;
  *) echo "TARGET must be node or scoreboard, not '$TARGET'" >&2; exit 2 ;;
esac
BUILD="$HERE/firmware/build/$TARGET"
[ -f "$BUILD/main.py" ] || { echo "no build in $BUILD: run 'make firmware' first" >&2; exit 1; }
[ -e "$PORT" ] || { echo "no serial port $PORT (set PORT=...)" >&2; exit 1; }
ARGS=("$PORT" "$BUILD")
if [ -n "${CONFIG:-}" ]; then
  [ -f "$CONFIG" ] || { echo "CONFIG=$CONFIG: no such file" >&2; exit 1; }
  ARGS+=(--config "$CONFIG")
fi
PY="${PY:-$HERE/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
MPREMOTE="${MPREMOTE:-$HERE/.venv/bin/mpremote}"
[ -x "$MPREMOTE" ] || MPREMOTE="$(command -v mpremote || true)"
[ -n "$MPREMOTE" ] || { echo "no mpremote: pip install 'railbird[flash]' (or make flash)" >&2; exit 1; }
ARGS+=(--mpremote "$MPREMOTE")
[ -z "${LOCKED:-}" ] || ARGS+=(--locked)

echo "installing $BUILD ($TARGET) on $PORT"
PYTHONPATH="$HERE/host${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m railbird.provision.board "${ARGS[@]}"
echo "done"
