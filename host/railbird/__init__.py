"""Railbird: sensor-driven refereeing and scoring for pool tables, host side. Lives here: one
subpackage per part of the host (`core`, the deterministic pipeline; `daemon`, its I/O
shell; `rules`; `outputs`; `scoreboard`; `sim`; `hardware`; `commands`; `config`, the TOML
configuration; `history`, the match history; `competition`, players and tournaments as pure
values; `registry`, the players registry the host keeps; `events`, running an event: matches called
to the tables, their results, the static export; `install`, `railbird setup`;
`provision`, `railbird node provision`; `fleet`, the sensor nodes and their firmware;
`cluster`, cluster mode on NATS; `bench`, the benchmarks) and top-level modules with one job
each (`cli`, the command line; `access`, who may read and write which topic kinds (both
brokers' access rules are made from it); `broker`, a private mosquitto; `mqttclient`, the
one factory of the host's MQTT clients; `mqttopts`, MQTT command-line options; `private`,
files only their owner may read; `hostwatch`, a display's view of the host's heartbeat;
`termboard`, the demo's terminal scoreboard; `tableorder`, the one natural order tables are
listed in; `venuekey`, the key that signs firmware updates and node configs; `sqlrows`, many
rows into SQLite in a few statements; `childenv`, the environment of the daemon's child
processes). May import the standard library, paho-mqtt, pyserial
and `rbproto`; its modules and units import each other only along the arrows of
docs/architecture.md, "Layout", without a circle (tests/codebase/test_import_graph.py checks
it).
"""

__version__ = "0.1.0"
