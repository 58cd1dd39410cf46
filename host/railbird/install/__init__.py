"""`railbird setup`: an installation written from a few answers (docs/install.md). The
broker's config from the project template, its password file and ACL, the host's TOML
config, one config JSON per node, a local CA with broker and node certificates (TLS), the
systemd units, and a record of every secret. Idempotent: a second run adds tables and nodes
and keeps every secret. May import `railbird.broker` (templates, ACL, CA),
`railbird.config.check` and `railbird.config.schema` (the host config's check), `railbird.rules`
(the games), `railbird.private`, `railbird.tableorder` (natural order) and `railbird.hardware` (the
default sensing config), never
the daemon or the outputs; only `railbird.commands.setup` imports it.

Modules: `layout` (where each file goes under the root), `mqttpass` (mosquitto's password
hashes), `tomlout` (TOML writing), `hostconf` (the host config: new tables, merging; the node
configs), `brokerconf` (mosquitto.conf), `pki` (openssl CA and certificates), `units`
(systemd units), `system` (mosquitto and the service user on the machine), `portholder`
(who listens on the broker's port), `apply` (writes it all and reports what changed),
`summary` (what setup prints).
"""
