"""Helpers shared by the tests: `railbird run` as a subprocess (`hostproc`), paho clients
on the private broker (`mqttsub`), polling instead of sleeping (`waiting`), a NATS cluster
(`nats`), every login against every topic kind on either broker (`aclprobe`), real
MicroPython under Node (`micropython`, with `mp_run.mjs`), a board on a
serial port for flashing (`fakeboard`: the MicroPython unix port on a pty) and a headless
Chromium (`browser`, launched by railbird.bench.chromium, as the screen benchmark does). May
import railbird, paho-mqtt, selenium and the standard library, never a test
module; tests import it as `harness` (tests/conftest.py puts tests/ on the path).
"""
