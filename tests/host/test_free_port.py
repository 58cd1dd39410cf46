"""railbird.broker.free_port: the port every test broker and server is started on.

A port from bind(0) comes from the kernel's ephemeral range, which is also where outgoing
connections get their local ports: between the pick and the broker's bind another test's
connection could take it, and mosquitto exits with "Address already in use" (seen in one
fresh-clone run out of six)."""

from __future__ import annotations

import random
import socket

from railbird import broker


def test_ports_are_below_the_ephemeral_range_distinct_and_free():
    low, _ = broker._ephemeral_range()
    ports = [broker.free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports), "a port handed out twice in one process"
    assert all(20000 <= p < low for p in ports), [p for p in ports if not 20000 <= p < low]
    for p in ports[:20]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))  # nothing holds it


def test_a_seeded_random_does_not_make_two_workers_pick_the_same_ports():
    random.seed(7)
    first = broker.free_port()
    random.seed(7)
    assert broker.free_port() != first


def test_a_port_in_use_is_never_handed_out():
    held = []
    try:
        # hold a block of the range, then ask: none of the held ports may come back
        for p in range(20000, 20400):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                s.close()
                continue
            s.listen()
            held.append(s)
        taken = {s.getsockname()[1] for s in held}
        got = {broker.free_port() for _ in range(300)}
        assert not got & taken
    finally:
        for s in held:
            s.close()
