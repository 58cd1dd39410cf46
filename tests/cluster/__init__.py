"""Tests of cluster mode (docs/scaling.md): three nats-server processes with JetStream and
the MQTT gateway, `railbird run` workers, the node firmware's MQTT client against the
gateway, and the failover scenario (`scenario`, shared with `make soak-cluster`). May import
`railbird` (cluster, config), `rbnode` (the firmware under CPython) and `harness`.
"""
