"""Issue 16, item 1: the venue summary at any number of tables. Each table's summary is its
own retained topic and the venue's `summary` a small index (protocol/SPEC.md `summary`,
`table_summary`); an update costs the same at 10 tables as at 1,000, nothing published
exceeds the protocol's size limit however many tables and racks, and what is retained is
current. Before, every change rebuilt and re-encoded the summary of every table (86 % of
the daemon's time at 1,000 tables) and from about 74 tables, or 20 tables after 14 racks
each, the codec refused it, so the topic went stale."""

from __future__ import annotations

import itertools
import json
import time

import paho.mqtt.client as mqtt
import pytest

from harness.mqttsub import Capture
from harness.waiting import poll, wait_for
from railbird.outputs import summaries
from railbird.outputs.mqtt_feeds import MqttFeedsOutput
from railbird.outputs.tables import Venues
from rbproto import codec

EVENING = time.mktime((2025, 6, 6, 21, 15, 0, 0, 0, -1))
HALL = summaries.INDEX_TABLES + 5  # a venue too big for its index to list the tables


def state(rack: int, a: int, b: int) -> dict:
    return {
        "players": ["Ann", "Bob"],
        "scores": {"Ann": a, "Bob": b},
        "at_table": "Bob",
        "rack": rack,
    }


def shot(n: int, balls: int) -> dict:
    pocketed = [
        {"ball": 1 + i % 15, "pocket": codec.POCKETS[i % 6], "t": i, "source": "sensed"}
        for i in range(balls)
    ]
    return {"table": "x", "n": n, "start": 0, "end": 1, "pocketed": pocketed, "rails": []}


def night(out: MqttFeedsOutput, tables: int, racks: int) -> None:
    """`tables` tables online, each `racks` racks of 14.1 (15 balls a rack) in the evening."""
    for i in range(tables):
        t = f"t{i}"
        out.on_node("club", t, "n1", {"state": "online"})
        for r in range(1, racks + 1):
            out.on_state("club", t, "14.1", state(r, 14 * r, 13 * r), None, [])
            out.on_shot("club", t, shot(r, 15))


def feeds(clock=lambda: EVENING):
    cap = Capture()
    return MqttFeedsOutput(client=cap, discovery=False, venues=Venues(clock=clock)), cap


def decoded(sent) -> dict:
    """topic -> the last message published retained on it, each checked by the codec."""
    out = {}
    for topic, payload, retain in sent:
        assert len(payload) <= codec.MAX_PAYLOAD, (topic, len(payload))
        kind, _v, _t, _n, msg = codec.decode_message(topic, payload)
        if kind in ("summary", "table_summary"):
            assert retain, topic
            out[topic] = msg
    return out


def test_1000_tables_with_many_racks_stay_within_the_limits_and_current():
    out, cap = feeds()
    night(out, 1000, 3)
    for i in range(0, 1000, 100):  # some tables play on and on: more racks than are kept
        for r in range(4, 260):
            out.venues.on_state("club", f"t{i}", "14.1", state(r, 14 * r, 0), None, [])
            out.venues.on_shot("club", f"t{i}", shot(r, 15))
        out.on_shot("club", f"t{i}", shot(260, 1))
    cap.take()  # the shots and states; the summaries are published by `flush`
    out.flush()
    got = decoded(cap.take())
    assert out.stats["rejected"] == 0 and out.summaries.stats["rejected"] == 0
    for i in range(1000):
        msg = got[f"railbird/v1/club/t{i}/summary"]
        full = out.venues.table_summary("club", f"t{i}")
        if i % 100:
            assert msg == full  # current: exactly what the host knows
            assert msg["pocketed_today"] == 45 and msg["scores"] == [42, 39]
        else:  # 259 racks: the day's counts whole, the latest 200 racks one by one
            assert msg == full
            assert msg["pocketed_today"] == 3 * 15 + 256 * 15 + 1
            assert [g["rack"] for g in msg["pockets"]["by_game"]] == list(range(60, 260))
    index = got["railbird/v1/club/summary"]
    assert index == {
        "v": 1,
        "venue": "club",
        "tables": {},
        "complete": False,
        "count": 1000,
        "online_count": 1000,
        "pocketed_today": 1000 * 45 + 10 * (256 * 15 + 1),
    }

    # one more change: one table's summary and the index, nothing else, both current
    time.sleep(summaries.INDEX_PERIOD_S)
    out.on_node("club", "t7", "n1", {"state": "offline"})
    out.on_shot("club", "t7", shot(4, 2))
    cap.take()
    out.flush()
    got = decoded(cap.take())
    assert sorted(got) == ["railbird/v1/club/summary", "railbird/v1/club/t7/summary"]
    assert got["railbird/v1/club/t7/summary"]["online"] is False
    assert got["railbird/v1/club/t7/summary"]["pocketed_today"] == 47
    assert got["railbird/v1/club/summary"]["online_count"] == 999
    assert got["railbird/v1/club/summary"]["pocketed_today"] == index["pocketed_today"] + 2


def test_the_index_lists_its_tables_while_they_are_few():
    out, cap = feeds()
    night(out, summaries.INDEX_TABLES, 14)  # before: 20 tables after 14 racks went stale
    out.flush()
    index = decoded(cap.take())["railbird/v1/club/summary"]
    assert index["complete"] is True and len(index["tables"]) == summaries.INDEX_TABLES
    assert index["tables"]["t3"] == {
        "game": "14.1",
        "scores": [14 * 14, 13 * 14],
        "at_table": 1,
        "online": True,
        "pocketed_today": 14 * 15,
    }
    night(out, summaries.INDEX_TABLES + 1, 0)  # one table more: totals only
    time.sleep(summaries.INDEX_PERIOD_S)
    out.flush()
    index = decoded(cap.take())["railbird/v1/club/summary"]
    n = summaries.INDEX_TABLES + 1
    assert (index["complete"], index["tables"], index["count"]) == (False, {}, n)


def test_an_update_costs_the_same_at_10_and_at_1000_tables():
    """Work per update, counted and timed: tables encoded, bytes published, seconds."""

    def per_update(n: int) -> tuple:
        out, cap = feeds()
        night(out, n, 2)
        out.flush()
        cap.take()
        built = []
        table_summary = out.venues.table_summary
        out.venues.table_summary = lambda *a: built.append(a) or table_summary(*a)
        best = float("inf")
        for rep in range(5):
            t0 = time.perf_counter()
            for k in range(200):
                out.on_shot("club", f"t{(k * 7) % n}", shot(3 + rep, 1))
                out.flush()
            best = min(best, time.perf_counter() - t0)
        sent = cap.take()
        summary_bytes = sum(len(p) for t, p, _ in sent if t.endswith("/summary"))
        return len(built) / 1000, summary_bytes / 1000, best / 200

    built10, bytes10, s10 = per_update(10)
    built1k, bytes1k, s1k = per_update(1000)
    print(f"per update: {s10 * 1e6:.0f} µs at 10 tables, {s1k * 1e6:.0f} µs at 1000")
    assert built10 == built1k == 1  # one table's summary encoded per update, never the venue
    assert bytes1k <= bytes10 * 1.5, (bytes10, bytes1k)
    # the counts above are the proof; the time is a backstop for a cost they do not see,
    # so its bound is generous (the best of 5 runs each, yet a loaded machine can stall
    # one size's runs more than the other's): before the fix, ~100 times as long
    assert s1k < 20 * s10, (s10, s1k)


def test_a_new_business_day_sets_every_table_to_zero():
    clock = [EVENING]
    out, cap = feeds(lambda: clock[0])
    night(out, 5, 2)
    out.flush()
    cap.take()
    clock[0] += 10 * 3600  # 07:15 next morning: the day began at 06:00
    time.sleep(summaries.INDEX_PERIOD_S)
    out.flush()
    got = decoded(cap.take())
    assert [got[f"railbird/v1/club/t{i}/summary"]["pocketed_today"] for i in range(5)] == [0] * 5
    assert got["railbird/v1/club/summary"]["pocketed_today"] == 0


def test_a_table_summary_too_large_keeps_its_latest_racks():
    feed = summaries.SummaryFeed(Venues())
    games = [
        {"match": 1, "game": "14.1", "rack": r, "balls": 15, "x": "-" * 40} for r in range(400)
    ]
    msg = {"v": 1, "table": "t1", "pocketed_today": 6000, "pockets": {"by_game": games}}
    assert len(json.dumps(msg)) > codec.MAX_PAYLOAD
    payload = feed._table_payload("club", "t1", msg)
    kept = codec.decode("table_summary", payload)["pockets"]["by_game"]
    assert len(payload) <= codec.MAX_PAYLOAD and kept == games[-len(kept) :]
    assert len(kept) >= 100 and feed.stats["trimmed"] >= 1


@pytest.mark.broker
def test_per_table_topics_and_the_index_are_retained_and_correct(broker):
    """Through mosquitto: a display that connects afterwards gets every table's summary and
    the venue index at once, retained, as the host last knew them."""
    out = MqttFeedsOutput(
        "127.0.0.1",
        broker.port,
        "railbird-host",
        "host-secret",
        discovery=False,
        venues=Venues(clock=lambda: EVENING),
    )
    out.start()
    try:
        for venue, n in (("club", 3), ("hall", HALL)):
            for i in range(n):
                out.on_node(venue, f"t{i}", "n1", {"state": "online" if i % 2 else "offline"})
                out.on_state(venue, f"t{i}", "9-ball", state(1, i, 1), None, [])
                out.on_shot(venue, f"t{i}", shot(1, i % 4))
        out.on_shot("club", "t1", shot(2, 5))  # the latest change must be what stays
        # the states, the shots (one more), at least a summary per table and 2 indexes
        n = 3 + HALL
        assert poll(lambda: out.stats["published"] >= n + (n + 1) + n + 2, timeout=10)
        # every summary and index sent (the feed thread's rounds, however late they run on
        # a loaded machine), seen twice a round apart (not caught inside a round) ...
        feed = out.summaries

        def sent() -> bool:
            return not feed.dirty and not feed.index_due

        wait_for(
            lambda: sent() and (time.sleep(2 * summaries.TABLE_PERIOD_S) or sent()),
            "every summary sent",
            30,
        )
        # ... and through the broker: its answer to a later publish on the same
        # connection comes after it has taken (and retained) those before
        out.client.publish("railbird/v1/club/t0/test-mark", b"", qos=1).wait_for_publish(10)

        got, retained = {}, {}
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        c.username_pw_set("railbird-display", "display-secret")

        def on_message(cl, u, m):
            got[m.topic] = codec.decode_message(m.topic, m.payload)[4]
            retained[m.topic] = m.retain

        c.on_message = on_message
        c.on_connect = lambda cl, u, f, rc, p=None: cl.subscribe(
            [("railbird/v1/+/summary", 1), ("railbird/v1/+/+/summary", 1)]
        )
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        try:
            assert poll(lambda: len(got) == 2 + n, timeout=10), sorted(got)
        finally:
            c.loop_stop()
            c.disconnect()
        assert all(retained.values())
        for venue, n in (("club", 3), ("hall", HALL)):
            for i in range(n):
                msg = got[f"railbird/v1/{venue}/t{i}/summary"]
                assert msg == out.venues.table_summary(venue, f"t{i}")
                assert msg["online"] is bool(i % 2) and msg["scores"] == [i, 1]
        assert got["railbird/v1/club/t1/summary"]["pocketed_today"] == 1 + 5
        club, hall = got["railbird/v1/club/summary"], got["railbird/v1/hall/summary"]
        assert club["complete"] is True and club["count"] == 3 and club["online_count"] == 1
        assert club["tables"]["t1"]["pocketed_today"] == 6 and club["pocketed_today"] == 8
        assert hall["complete"] is False and hall["tables"] == {} and hall["count"] == HALL
        assert hall["online_count"] == HALL // 2
        assert hall["pocketed_today"] == sum(i % 4 for i in range(HALL))
    finally:
        out.stop()


def chattering_shot(hits: int) -> dict:
    """A shot whose rail sensor chattered: `hits` rail hits with real table timestamps."""
    t0 = 1_734_000_000_000_000
    rails = [{"rail": codec.RAILS[i % 6], "t": t0 + 5_000 * i, "amp": 4000 - i % 900}
             for i in range(hits)]  # fmt: skip
    pocketed = [{"ball": None, "pocket": "FR", "t": t0 + 900_000, "source": "sensed"}]
    return {"table": "t1", "n": 7, "start": t0, "end": t0 + 1_500_000, "pocketed": pocketed,
            "rails": rails, "distinct_rails": 6, "object_balls_to_rail": 3}  # fmt: skip


def sent_shots(cap: Capture) -> list[dict]:
    return [json.loads(p) for t, p, _ in cap.take() if t.endswith("/shot")]


def test_a_shot_too_large_for_one_message_is_sent_thinned_not_dropped():
    """Issue 23, item 13: a shot past 16 KiB (about 300 rail hits) was journalled but never
    reached the shot feed ("too large"), so displays and Home Assistant missed it."""
    out, cap = feeds()
    big = chattering_shot(600)
    assert len(json.dumps(big, separators=(",", ":"))) > codec.MAX_PAYLOAD  # the case
    out.on_shot("club", "t1", big)
    (msg,) = sent_shots(cap)
    assert out.counts["rejected"] == 0
    assert msg["rails_total"] == 600
    assert 0 < len(msg["rails"]) < 600
    assert msg["rails"][0] == big["rails"][0] and msg["rails"][-1] == big["rails"][-1]
    assert msg["pocketed"] == big["pocketed"]  # the balls are never thinned
    assert (msg["distinct_rails"], msg["object_balls_to_rail"]) == (6, 3)  # of every hit
    assert len(codec.encode("shot", msg)) <= codec.MAX_PAYLOAD
    # evenly over the shot: no gap between kept hits is much wider than the average
    times = [r["t"] for r in msg["rails"]]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) <= 2 * (times[-1] - times[0]) / len(gaps)
    # past the protocol's 1024 hits too
    out.on_shot("club", "t1", chattering_shot(3000))
    (msg,) = sent_shots(cap)
    assert msg["rails_total"] == 3000 and len(msg["rails"]) <= 1024


def test_a_shot_that_fits_is_sent_whole():
    out, cap = feeds()
    small = chattering_shot(200)
    out.on_shot("club", "t1", small)
    (msg,) = sent_shots(cap)
    assert "rails_total" not in msg and msg["rails"] == small["rails"]
