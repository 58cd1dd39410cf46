"""The fleet of sensor nodes seen from the host: what each node runs and reports (view), the
firmware sets it can be given (firmware), the small HTTP server they download from (server)
and the over-the-air rollout, one table at a time (rollout). `railbird nodes` is the
command line (railbird.commands.nodes); the node's side is firmware/rbnode/updater.py and
firmware/rbnode/ota.py; the wire format protocol/SPEC.md `update`."""
