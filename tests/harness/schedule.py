"""The order in which `make test` hands test files to its workers.

`make test` runs with `--dist loadfile` (a file's module fixtures are shared, so a file stays
on one worker) and `--no-loadscope-reorder`, so files are handed out in collection order.
Left to itself pytest-xdist would sort files by how many tests they hold, which puts the
files with a few long end-to-end tests last: one worker then runs them alone while the others
sit idle (on a fresh clone, 505 s for 1,324 s of tests on three workers, against 441 s for an
even split). Handing out the longest files first (longest processing time first) keeps the
workers busy to the end.

The figures are seconds of one idle `make test` run (`PYTEST_ARGS=--durations=0`, summed per
file). They only order the work: a stale figure costs time, never a result. A file missing
from the list goes after the listed ones, in collection order;
tests/codebase/test_schedule.py checks that every listed file exists.
"""

from __future__ import annotations

# (file, seconds), the longest first; files under 5 s are left to collection order
HEAVY_FILES: tuple[tuple[str, int], ...] = (
    ("tests/hardware/test_calibrate_simnode.py", 100),
    ("tests/hardening/test_sim_demo_outage.py", 98),
    ("tests/firmware/test_ota_broken.py", 95),
    ("tests/displays/test_referee_app_match.py", 94),
    ("tests/firmware/test_node_net.py", 66),
    ("tests/firmware/test_node_delivery.py", 63),
    ("tests/firmware/test_ota_e2e.py", 60),
    ("tests/events/test_event_e2e.py", 49),
    ("tests/displays/test_displays_screens.py", 47),
    ("tests/install/test_provision.py", 44),
    ("tests/cluster/test_cluster.py", 39),
    ("tests/history/test_night_e2e.py", 38),
    ("tests/displays/test_bench_screens.py", 38),
    ("tests/displays/test_referee_app.py", 35),
    ("tests/demo/test_demo_e2e.py", 27),
    ("tests/hardening/test_web_idle_connections.py", 27),
    ("tests/test_broker_acl.py", 26),
    ("tests/firmware/test_device_typecheck.py", 25),
    ("tests/competition/test_properties.py", 24),
    ("tests/displays/test_displays_live.py", 24),
    ("tests/install/test_setup_broker.py", 23),
    ("tests/hardening/test_bounded_state.py", 22),
    ("tests/host/test_match_lifecycle.py", 21),
    ("tests/host/test_match_control.py", 20),
    ("tests/displays/test_referee_stale.py", 20),
    ("tests/cluster/test_lease_fencing.py", 19),
    ("tests/firmware/test_status_led.py", 18),
    ("tests/host/test_crash.py", 17),
    ("tests/hardening/test_future_timestamp.py", 16),
    ("tests/install/test_setup_files.py", 16),
    ("tests/displays/test_e2e_scoreboard.py", 15),
    ("tests/firmware/test_ota.py", 14),
    ("tests/fuzz/test_web_api.py", 13),
    ("tests/demo/test_sim_strike.py", 12),
    ("tests/host/test_colour_live.py", 12),
    ("tests/firmware/test_node_handler_error.py", 11),
    ("tests/fuzz/test_ingest_e2e.py", 11),
    ("tests/displays/test_venue_board.py", 11),
    ("tests/protocol/test_proto_properties.py", 11),
    ("tests/hardening/test_journal_disk_full.py", 10),
    ("tests/displays/test_feeds_ha.py", 10),
    ("tests/history/test_cli.py", 10),
    ("tests/displays/test_web_slow_client.py", 10),
    ("tests/hardening/test_session_takeover.py", 10),
    ("tests/cluster/test_gateway_interop.py", 9),
    ("tests/codebase/test_self_contained.py", 9),
    ("tests/test_tls.py", 9),
    ("tests/displays/test_provisional_displays.py", 9),
    ("tests/codebase/test_types.py", 8),
    ("tests/hardening/test_retained_junk.py", 8),
    ("tests/host/test_tick_under_load.py", 8),
    ("tests/firmware/test_pinmap_firmware.py", 8),
    ("tests/displays/test_summary_feeds.py", 8),
    ("tests/host/test_run_outputs.py", 7),
    ("tests/host/test_mqttclient.py", 7),
    ("tests/cluster/test_cluster_acl.py", 7),
    ("tests/install/test_docker_copy_set.py", 7),
    ("tests/firmware/test_ota_signed.py", 7),
    ("tests/firmware/test_node_config.py", 7),
    ("tests/displays/test_shot_clock_displays.py", 6),
    ("tests/hardening/test_retained_unknown.py", 6),
    ("tests/install/test_setup_port_taken.py", 6),
    ("tests/firmware/test_mqtt_interop.py", 6),
    ("tests/displays/test_web_fixes.py", 6),
    ("tests/codebase/test_commits.py", 5),
    ("tests/displays/test_inplay.py", 5),
    ("tests/competition/test_player_pages.py", 5),
    ("tests/hardening/test_snapshots.py", 5),
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
