"""The outputs `railbird run` starts, built from the `[outputs]` section of its config.

    outputs = from_config(cfg)             # cfg: railbird.config.Config
    daemon = Daemon(cfg, outputs=outputs)
    connect(outputs, daemon)               # the web referee panel -> daemon.referee_input

Defaults (docs/host.md, "Outputs"): the MQTT display feeds with Home Assistant discovery are
on (the daemon's broker and user, client id `<client_id>-feeds`); the web scoreboard runs
only when the config has an `[outputs.web]` section, and its referee panel only when the
venue has a `referee_token` (the panel's PIN); one serial scoreboard per `[[outputs.serial]]`.
"""

from __future__ import annotations

import logging

log = logging.getLogger("railbird.outputs")


def _venues(cfg, day_start_hour):
    from railbird.outputs.tables import Venues

    v = Venues(day_start_hour=day_start_hour)
    for table, tc in (getattr(cfg, "table", None) or {}).items():
        v.expect_nodes(cfg.venue, table, getattr(tc, "nodes", None) or ())
    return v


def from_config(cfg) -> list:
    """The configured outputs (not started: the daemon starts and stops them)."""
    from railbird.config import OutputsConfig, host_client_id

    oc = getattr(cfg, "outputs", None) or OutputsConfig()
    outputs = []
    if oc.feeds.enabled:
        from railbird.outputs.mqtt_feeds import MqttFeedsOutput

        b = cfg.broker
        outputs.append(
            MqttFeedsOutput(
                host=b.host,
                port=b.port,
                username=b.user,
                password=b.password,
                tls=b.tls,
                cafile=b.cafile or None,
                client_id=oc.feeds.client_id or f"{host_client_id(b, cfg.venue)}-feeds",
                discovery=oc.feeds.discovery,
                discovery_prefix=oc.feeds.discovery_prefix,
                venues=_venues(cfg, oc.day_start_hour),
                mqtt311=getattr(cfg, "cluster", None) is not None,
            )
        )
    if oc.web is not None and oc.web.enabled:
        from railbird.outputs.web.server import WebOutput

        pins = {cfg.venue: cfg.referee_token} if cfg.referee_token else {}
        if not pins:
            log.warning(
                "web referee panel disabled: the config has no referee_token (the "
                "panel's PIN); the web scoreboard runs read-only"
            )
        outputs.append(
            WebOutput(
                host=oc.web.host,
                port=oc.web.port,
                pins=pins,
                venues=_venues(cfg, oc.day_start_hour),
                title=oc.web.title,
                max_connections=oc.web.max_connections,
                idle_timeout_s=oc.web.idle_timeout_s,
                stream_queue=oc.web.stream_queue,
                stream_stall_s=oc.web.stream_stall_s,
                write_timeout_s=oc.web.write_timeout_s,
                allowed_hosts=tuple(oc.web.allowed_hosts),
                director_pins={cfg.venue: cfg.director_pin} if cfg.director_pin else {},
            )
        )
    for sc in oc.serial:
        from railbird.outputs.serial_scoreboard import SerialScoreboardOutput

        outputs.append(
            SerialScoreboardOutput(
                sc.port,
                cfg.venue,
                sc.table,
                baudrate=sc.baudrate,
                announce=sc.announce,
                ack_timeout=sc.ack_timeout_ms / 1000,
                retries=sc.retries,
            )
        )
    return outputs


def connect(outputs, daemon) -> None:
    """Hand the daemon's in-process referee input to the outputs that take it (the web
    referee input; journalled like any other referee input), its health to the web
    pages' heartbeat and its journal to the history pages; the referee sessions are kept
    beside the journal, so a restart of the host keeps the phones signed in."""
    for out in outputs:
        if hasattr(out, "referee") and getattr(out, "pins", None):
            out.referee = daemon.referee_input
        if hasattr(out, "keep_sessions") and getattr(out, "pins", None):
            from railbird.outputs.web.sessions import sessions_path

            out.keep_sessions(sessions_path(daemon.journal.path))
        if hasattr(out, "health"):
            out.health = daemon.health  # the web pages' heartbeat: is the worker alive?
        if hasattr(out, "history_journal"):
            out.history_journal = daemon.journal.path  # the history pages read it
        if hasattr(out, "attach_events") and getattr(daemon.journal, "path", None):
            _events(out, daemon)


def _events(web, daemon) -> None:
    """The venue's event service, in the journal (railbird.events): its calls on the web
    pages, its director's sessions beside the journal like the referee's."""
    from railbird.events.desk import EventDesk
    from railbird.outputs.web.sessions import sessions_path

    cfg, path = daemon.cfg, str(daemon.journal.path)
    export_dir = getattr(cfg, "event_export_dir", "") or path + ".event"
    try:
        desk = EventDesk(path, cfg.venue, lambda: web.tables_of(cfg.venue), export_dir)
    except Exception as e:  # noqa: BLE001 - an unreadable event must not stop scoring
        log.error("event service not started: %s", e)
        return
    if web.director.pins:
        web.director.keep_sessions(sessions_path(path) + ".director")
    web.attach_events(desk)


def describe(outputs) -> dict:
    """name -> stats (and the web URL) of each output, for `--stats-file`."""
    d = {}
    for i, out in enumerate(outputs):
        name = getattr(out, "name", type(out).__name__)
        if name in d:
            name = f"{name}-{i}"
        try:
            st = getattr(out, "stats", None)
            info = dict(st) if isinstance(st, dict) else {}
            if hasattr(out, "pins") and hasattr(out, "url"):  # the web server
                info["url"] = out.url if getattr(out, "running", False) else None
                info["referee_panel"] = bool(out.pins)
                if getattr(out, "error", None):
                    info["error"] = out.error
            if hasattr(out, "link"):
                info["port"] = out.link.port
                info["connected"] = out.link.connected
        except Exception as e:  # noqa: BLE001 - monitoring must not fail
            info = {"error": str(e)}
        d[name] = info
    return d
