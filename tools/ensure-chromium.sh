#!/usr/bin/env bash
# The browser tests (tests/displays/test_web_browser.py) drive a real headless Chromium
# through Debian's chromium + chromium-driver. Install them when missing (as root), else say how.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium/chromedriver missing: installing them with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
  exit 0
fi
echo "Headless Chromium is missing. Install it first with:" >&2
echo "    sudo apt-get install -y chromium chromium-driver" >&2
exit 1
