"""Cluster mode: past one host, on a NATS JetStream cluster (docs/scaling.md). Mosquitto
plus one `railbird run` stays the default. In cluster mode three (or more) `nats-server`
processes form a JetStream cluster whose MQTT gateway the nodes and displays speak MQTT
3.1.1 QoS 1 to, unchanged; the venue's topics are kept in one replicated stream, and
`railbird run` with a `[cluster]` section is one of several workers, each owning a share of
the tables through leases in a JetStream key-value bucket. May import core, broker, rbproto
and nats-py (rules below).

Modules: `subjects` (MQTT topic <-> NATS subject, the stream's subjects, which partition a
table is in), `natsconf` (the nats-server configuration of a cluster member) and `local`
(a three-server cluster on loopback, for tests, the soak and trying it out), `ingest` (the
worker's NATS side: `ClusterIngest`, what the daemon's worker sees in place of the MQTT
ingest: consumes each owned table's messages in order, acknowledges after the journal
commit, takes over the tables of a worker whose lease ran out, rebuilding them from the
stream), `reference` (the single-host run of a stream's messages that a cluster's result
must equal).

Imports: core (the pipeline, for the reference run), broker (`free_port`), rbproto;
nats-py (the `cluster` extra). The daemon does not import it: `railbird run`
(commands/run) hands `ClusterIngest` to the daemon. Imported by: commands and tests.
"""
