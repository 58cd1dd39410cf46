#!/usr/bin/env bash
# The tests and the demo start their own private mosquitto; make sure the binary exists.
set -euo pipefail
if command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "mosquitto is missing: installing it with apt-get"
  # the lists first only when the install fails with the ones there are: a machine without
  # network installs from apt's cache (make test-system, docs/install.md)
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto mosquitto-clients; }
  install || { apt-get update -qq && install; }
  exit 0
fi
echo "mosquitto is missing. Install it first with:" >&2
echo "    sudo apt-get install -y mosquitto mosquitto-clients" >&2
exit 1
