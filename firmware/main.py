"""Railbird sensor node entry point (device): /config.json -> Wi-Fi -> rbnode.node.Node.

A fatal error is printed and the board resets after 5 s (the boot counter rises, the next
birth reports the reset cause). See firmware/README.md.
"""

import json
import time

try:
    import asyncio
except ImportError:  # pragma: no cover
    import uasyncio as asyncio

from rbnode import hw as rbhw
from rbnode.node import Node


def load_config(path="config.json"):
    with open(path) as f:
        return json.load(f)


def make_ssl(broker):
    """TLS is one setting away: "tls": true and "ca": "<file on the board>"."""
    if not broker.get("tls"):
        return None
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if broker.get("ca"):
        ctx.load_verify_locations(cafile=broker["ca"])
        ctx.verify_mode = ssl.CERT_REQUIRED
    else:
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def keep_wifi(hw, wifi):
    """Bring the station up and keep it up; WLAN.connect() does not block."""
    w = hw.wlan()
    w.active(True)
    while True:
        if not w.isconnected():
            try:
                w.connect(wifi["ssid"], wifi["password"])
            except OSError:
                pass
            for _ in range(30):
                if w.isconnected():
                    break
                await asyncio.sleep_ms(500)
        await asyncio.sleep_ms(2000)


async def run(hw, dev, node):
    asyncio.create_task(keep_wifi(hw, dev.get("wifi") or {}))
    await node.run()


def main():
    dev = load_config()
    kw = {}
    if dev.get("pinmap"):
        kw["pinmap"] = dev["pinmap"]
    hw = rbhw.load(**kw)
    try:
        node = Node(hw, dev, ssl=make_ssl(dev.get("broker") or {}))
        print("railbird node", node.node_id, "boot", node.boot, "reset", node.reset_cause)
        asyncio.run(run(hw, dev, node))
    except Exception as e:  # noqa: BLE001 - last resort: report and reset
        import sys
        sys.print_exception(e)
        time.sleep(5)
        hw.reset()


main()
