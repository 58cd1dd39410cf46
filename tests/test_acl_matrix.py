"""The single host's ACL matrix (issue 23, Build 1 and defect 6): every login against every
topic kind, read and write, on a real mosquitto with the project ACL and with setup's
confined one, both made by railbird.access from its one description (RULES).

The matrix is checked against `railbird.access.allows`; the cases after it are stated from
the protocol's rules text (protocol/SPEC.md, "Topic tree" and "Security") on their own, so
that the description is not only checked against itself."""

from __future__ import annotations

import paho.mqtt.client as paho
import pytest

from harness.aclprobe import (
    Target,
    Who,
    check_spec_cases,
    read_matrix,
    targets,
    topic,
    write_matrix,
    wrong_writes,
)
from harness.mqttsub import Collector, client
from railbird.access import Access, Login, allows, rule
from railbird.broker import DEFAULT_USERS, PrivateBroker, confined_acl

pytestmark = [pytest.mark.broker]

VENUE, TABLE, ME, OTHER = "club", "t1", "n1", "n2"
NODES = {ME: "pw-n1", OTHER: "pw-n2"}
HOST = Who(Login.HOST, "railbird-host", DEFAULT_USERS["railbird-host"])
LOGINS = [
    HOST,
    Who(Login.REFEREE, "railbird-referee", DEFAULT_USERS["railbird-referee"]),
    Who(Login.DISPLAY, "railbird-display", DEFAULT_USERS["railbird-display"]),
    Who(Login.NODE, ME, NODES[ME]),
]
TARGETS = targets(VENUE, TABLE, ME, OTHER)
# what each login reads for certain, published after the probes (SPEC.md's topic table)
SENTINELS = {
    "railbird-host": f"railbird/v1/{VENUE}/{TABLE}/announce",
    "railbird-referee": f"railbird/v1/{VENUE}/{TABLE}/announce",
    "railbird-display": f"railbird/v1/{VENUE}/{TABLE}/announce",
    ME: f"railbird/v1/{VENUE}/{TABLE}/node/{ME}/config",
}


@pytest.fixture(scope="module", params=["project", "confined"])
def matrix(request, tmp_path_factory):
    """(reads, writes) of every login on a broker with that ACL, probed once."""
    acl = None if request.param == "project" else confined_acl(VENUE, {TABLE: [ME, OTHER]})
    b = PrivateBroker(tmp_path_factory.mktemp(request.param), users=NODES, acl=acl).start()
    try:
        reads = read_matrix(b.port, LOGINS, TARGETS, HOST, SENTINELS)
        writes = write_matrix(b.port, LOGINS, TARGETS, HOST, protocol=paho.MQTTv5)
        yield b, reads, writes
    finally:
        b.stop()


def test_every_login_reads_exactly_what_the_description_grants(matrix):
    _b, reads, _w = matrix
    wrong = [
        (w.user, t.topic, got)
        for w in LOGINS
        for t in TARGETS
        if (got := reads.received[(w.user, t.topic)])
        != allows(w.login, t.rule.kind, Access.READ, own=t.own)
    ]
    assert not wrong, wrong


def test_every_login_writes_exactly_what_the_description_grants(matrix):
    _b, _r, writes = matrix
    wrong = wrong_writes(LOGINS, TARGETS, writes)
    assert not wrong, wrong


def _t(leaf: str, node: str | None = None) -> str:
    return topic(VENUE, TABLE, leaf, node)


def test_the_rules_texts_own_cases(matrix):
    """Stated from SPEC.md, not from railbird.access."""
    _b, reads, writes = matrix
    check_spec_cases(reads.received, writes, VENUE, TABLE, ME, OTHER)


def test_a_display_subscribed_to_everything_never_gets_the_pin_nor_the_wifi(matrix):
    """Mosquitto grants a `#` subscription and filters message by message."""
    b, _r, _w = matrix
    d = Collector(b.port, "display-all", "railbird/#", user="railbird-display",
                  password=DEFAULT_USERS["railbird-display"])  # fmt: skip
    host = client(b.port, "railbird-host", DEFAULT_USERS["railbird-host"], "host-all")
    try:
        for topic, payload in (
            (_t("referee"), b'{"v":1,"token":"4711"}'),
            (_t("net", ME), b'{"v":1,"wifi":{"password":"hunter2"}}'),
            (_t("state"), b'{"v":1}'),
        ):
            host.publish(topic, payload, qos=1).wait_for_publish(5)
        # in order: once the state is in, the two before it would have been
        assert d.wait(lambda m: any(t == _t("state") for t, _p, _r in m), timeout=30)
        with d.lock:
            seen = list(d.msgs)
        assert [t for t, _p, _r in seen] == [_t("state")], seen
    finally:
        d.c.disconnect()  # before the loops stop: they then end at once
        d.c.loop_stop()
        host.disconnect()
        host.loop_stop()


def test_no_login_poses_as_a_node_named_after_it(matrix):
    """The project ACL's node `pattern` lines apply to every user name: the display and
    referee logins must still not write the leaves of a node called like them."""
    b, _r, _w = matrix
    users = ("railbird-display", "railbird-referee")
    ts = [
        Target(rule("events"), True, f"railbird/v1/{VENUE}/{TABLE}/node/{w.user}/{leaf}")
        for w in LOGINS
        if w.user in users
        for leaf in ("events", "status")
    ]
    posers = [w for w in LOGINS if w.user in users]
    wrote = write_matrix(b.port, posers, ts, HOST, protocol=paho.MQTTv5)
    assert not {(u, t) for u, t in wrote if t.split("/")[5] == u}, wrote
