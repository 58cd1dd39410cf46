"""The fleet of sensor nodes seen from the host: what each node runs and reports (view), the
firmware sets it can be given (firmware), the small HTTP server nodes download a set from
(server), the over-the-air rollout, one table at a time (rollout), and the journal of
the downgrades the owner forced (downgrades). It may import only
the standard library, the protocol codec `rbproto` and `railbird.tableorder` (the
natural order of tables) (no paho: the caller hands in the
messages and a publish function); `railbird nodes` (railbird.commands.nodes) is the command
line that connects it to the broker. The node's side: firmware/rbnode/updater.py and
firmware/rbnode/ota.py; the wire format: protocol/SPEC.md `update`."""
