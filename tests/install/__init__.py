"""Tests of the installation (issue 14, items 1 and 2): `railbird setup` run as a subprocess
into a temporary root, then the broker started from the config it wrote (real mosquitto),
`railbird run` with the host config it wrote, the node firmware (SimNode) with a node config
it wrote, a second run that must keep every secret, and `systemd-analyze verify` on the
units; and item 3, `railbird node provision` and `make flash` onto a fake board (real
MicroPython on a pty) whose landed files then boot a node the host accepts. May import
`railbird`, `rbproto`, `rbnode.simnode`, `rbnode.hw` and `harness`.
"""
