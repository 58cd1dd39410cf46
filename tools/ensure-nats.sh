#!/usr/bin/env bash
# Cluster mode's tests (tests/cluster) start their own three nats-server processes on free
# loopback ports (docs/scaling.md); make sure Debian's nats-server exists.
set -euo pipefail
if command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || [ -x /usr/bin/nats-server ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "nats-server is missing: installing it with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server
  exit 0
fi
echo "nats-server is missing. Install it first with:" >&2
echo "    sudo apt-get install -y nats-server" >&2
exit 1
