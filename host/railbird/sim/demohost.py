"""The demo's host process: the daemon (railbird.daemon.Daemon, exactly as `railbird run`
builds it) with the display outputs wired in - the MQTT feeds (retained state topics, which
the simulated referee consoles follow) and the web scoreboard with its referee panel.

    python -m railbird.sim.demohost --config host.toml --web-port 8080 --pin 1234 \
        --ready ready.json

Writes `ready` (JSON: web URL, port) once everything listens; runs until SIGTERM/SIGINT.
Outputs that are not available in this checkout are skipped (the reason is logged and
written to `ready`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading

log = logging.getLogger("railbird.demohost")


def build_outputs(cfg, web_host: str, web_port: int, pin: str):
    outputs, missing = [], {}
    try:
        from railbird.outputs.mqtt_feeds import MqttFeedsOutput
        b = cfg.broker
        outputs.append(MqttFeedsOutput(host=b.host, port=b.port, username=b.user,
                                       password=b.password,
                                       client_id=f"railbird-feeds-{cfg.venue}",
                                       # The project ACL does not let railbird-host write
                                       # homeassistant/#: mosquitto drops the connection
                                       # on the first discovery publish (reported).
                                       discovery=False))
    except Exception as e:  # noqa: BLE001 - the demo runs without it
        missing["mqtt-feeds"] = f"{type(e).__name__}: {e}"
    web = None
    try:
        from railbird.web.server import WebOutput
        web = WebOutput(host=web_host, port=web_port, pins={cfg.venue: pin},
                        title="Railbird demo")
        outputs.append(web)
    except Exception as e:  # noqa: BLE001
        missing["web"] = f"{type(e).__name__}: {e}"
    return outputs, web, missing


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m railbird.sim.demohost")
    ap.add_argument("--config", required=True)
    ap.add_argument("--web-host", default="127.0.0.1")
    ap.add_argument("--web-port", type=int, default=8080)
    ap.add_argument("--pin", default="")
    ap.add_argument("--ready", required=True)
    ap.add_argument("--log-level", default="INFO")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from railbird.config import load
    from railbird.daemon import Daemon

    cfg = load(args.config)
    outputs, web, missing = build_outputs(cfg, args.web_host, args.web_port, args.pin)
    for name, why in missing.items():
        log.warning("output %s not available: %s", name, why)
    daemon = Daemon(cfg, outputs=outputs)
    if web is not None:
        web.referee = daemon.referee_input
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    from railbird.sim.table import watch_parent
    watch_parent(stop)
    daemon.start()
    ready = {"pid": os.getpid(), "missing": missing, "web": None}
    if web is not None and getattr(web, "httpd", None) is not None:
        ready["web"] = web.url
    tmp = args.ready + ".tmp"
    with open(tmp, "w") as f:
        json.dump(ready, f)
    os.replace(tmp, args.ready)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        daemon.stop()
        try:
            with open(args.ready + ".stats", "w") as f:
                json.dump(daemon.stats(), f, sort_keys=True, default=str)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
