"""The order in which `make test` hands test files to its workers.

`make test` runs with `--dist loadfile` (a file's module fixtures are shared, so a file stays
on one worker) and `--no-loadscope-reorder`, so files are handed out in collection order.
Left to itself pytest-xdist would sort files by how many tests they hold, which puts the
files with a few long end-to-end tests last: one worker then runs them alone while the others
sit idle (on a fresh clone, 505 s for 1,324 s of tests on three workers, against 441 s for an
even split). Handing out the longest files first (longest processing time first) keeps the
workers busy to the end.

The figures are seconds of one fresh-clone run (`PYTEST_ARGS=--durations=0`, summed per
file). They only order the work: a stale figure costs time, never a result. A file missing
from the list goes after the listed ones, in collection order;
tests/codebase/test_schedule.py checks that every listed file exists.
"""

from __future__ import annotations

# (file, seconds), the longest first; files under 5 s are left to collection order
HEAVY_FILES: tuple[tuple[str, int], ...] = (
    ("tests/hardening/test_sim_demo_outage.py", 94),
    ("tests/firmware/test_ota_broken.py", 89),
    ("tests/displays/test_referee_app_match.py", 83),
    ("tests/firmware/test_node_delivery.py", 77),
    ("tests/firmware/test_node_net.py", 58),
    ("tests/events/test_event_e2e.py", 57),
    ("tests/hardware/test_calibrate_simnode.py", 55),
    ("tests/cluster/test_cluster.py", 55),
    ("tests/firmware/test_ota_e2e.py", 52),
    ("tests/install/test_provision.py", 41),
    ("tests/displays/test_bench_screens.py", 34),
    ("tests/competition/test_player_pages.py", 31),
    ("tests/history/test_night_e2e.py", 33),
    ("tests/hardening/test_web_idle_connections.py", 26),
    ("tests/displays/test_shot_clock_displays.py", 12),
    ("tests/test_broker_acl.py", 25),
    ("tests/demo/test_demo_e2e.py", 25),
    ("tests/cluster/test_lease_fencing.py", 20),
    ("tests/host/test_match_control.py", 19),
    ("tests/firmware/test_ota.py", 19),
    ("tests/displays/test_displays_screens.py", 19),
    ("tests/firmware/test_status_led.py", 18),
    ("tests/install/test_setup_broker.py", 17),
    ("tests/hardening/test_bounded_state.py", 17),
    ("tests/displays/test_displays_live.py", 17),
    ("tests/host/test_crash.py", 16),
    ("tests/displays/test_web_fixes.py", 16),
    ("tests/displays/test_referee_stale.py", 16),
    ("tests/displays/test_referee_app.py", 15),
    ("tests/displays/test_e2e_scoreboard.py", 15),
    ("tests/host/test_match_lifecycle.py", 12),
    ("tests/hardening/test_future_timestamp.py", 11),
    ("tests/firmware/test_pinmap_firmware.py", 11),
    ("tests/firmware/test_node_handler_error.py", 11),
    ("tests/demo/test_sim_strike.py", 11),
    ("tests/hardening/test_journal_disk_full.py", 10),
    ("tests/displays/test_web_slow_client.py", 10),
    ("tests/displays/test_feeds_ha.py", 10),
    ("tests/host/test_tick_under_load.py", 9),
    ("tests/hardening/test_session_takeover.py", 9),
    ("tests/fuzz/test_ingest_e2e.py", 9),
    ("tests/cluster/test_cluster_acl.py", 9),
    ("tests/install/test_setup_files.py", 8),
    ("tests/host/test_run_outputs.py", 8),
    ("tests/displays/test_venue_board.py", 8),
    ("tests/displays/test_summary_feeds.py", 8),
    ("tests/cluster/test_gateway_interop.py", 8),
    ("tests/test_tls.py", 7),
    ("tests/protocol/test_proto_properties.py", 7),
    ("tests/install/test_docker_copy_set.py", 7),
    ("tests/host/test_mqttclient.py", 7),
    ("tests/hardening/test_retained_junk.py", 7),
    ("tests/firmware/test_device_typecheck.py", 7),
    ("tests/hardening/test_session_restart.py", 6),
    ("tests/golden/test_golden.py", 6),
    ("tests/firmware/test_node_config.py", 6),
    ("tests/demo/test_sim_offline.py", 6),
    ("tests/host/test_fastcodec.py", 5),
    ("tests/hardware/test_calibrate_logic.py", 5),
    ("tests/hardening/test_snapshots.py", 5),
    ("tests/firmware/test_node_drain_status.py", 5),
    ("tests/firmware/test_mqtt_interop.py", 5),
    ("tests/displays/test_inplay.py", 5),
)


def file_rank() -> dict[str, int]:
    """The position of each listed file in the hand-out order (0 first)."""
    ranked = sorted(HEAVY_FILES, key=lambda entry: -entry[1])
    return {path: i for i, (path, _) in enumerate(ranked)}


def order_items(items: list, rank: dict[str, int]) -> None:
    """Sort pytest items in place: listed files first by rank, the rest after them in
    their collection order; tests keep their order inside a file (sorted() is stable)."""
    last = len(rank)
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], last))
