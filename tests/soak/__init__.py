"""Long reliability runs (`make soak`, never part of `make test`): simulated nodes, a private
broker and `railbird run` under random play and scheduled chaos, with figures printed at the
end. May import `rbnode.simnode`, `rbproto`, paho-mqtt and `harness`; the host runs as a
subprocess, so no part of `railbird` is imported in-process.
"""
