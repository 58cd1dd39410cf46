# Runs under real MicroPython (tests/harness/mp_run.mjs, with protocol/ on the path): the
# codec against every vector of protocol/vectors/. Prints one "VECTORS ..." summary line;
# each failure is a "FAIL <name>: <why>" line. Also reports the codec's import cost.
import gc
import sys

gc.collect()
_before = gc.mem_alloc()
from rbproto import codec  # noqa: E402 - measured: heap in use before and after the import

gc.collect()
print("IMPORT_BYTES %d" % (gc.mem_alloc() - _before))

import json  # noqa: E402 - after the measurement, which must include the codec's own json


def find(name):
    for p in sys.path:
        try:
            with open(p + "/vectors/" + name) as f:
                return json.load(f)
        except OSError:
            pass
    raise OSError("vectors/" + name + " not found on sys.path")


failures = []


def fail(name, why):
    failures.append(name)
    print("FAIL %s: %s" % (name, why))


valid = find("valid.json")
ok_valid = 0
for v in valid:
    name = v["name"]
    kind = v["kind"]
    payload = v["payload"].encode("utf-8")
    try:
        msg = codec.decode(kind, payload)
        if msg != v["expect"]:
            fail(name, "decoded %r" % (msg,))
            continue
        if codec.decode(kind, v["payload"]) != v["expect"]:
            fail(name, "str payload decodes differently")
            continue
        again = codec.decode(kind, codec.encode(kind, msg))
        if again != v["expect"]:
            fail(name, "encode/decode round trip gave %r" % (again,))
            continue
        k, venue, table, node, m2 = codec.decode_message(v["topic"], payload)
        if k != kind or m2 != v["expect"]:
            fail(name, "decode_message gave kind %r" % (k,))
            continue
        if codec.topic(venue, table, k, node) != v["topic"]:
            fail(name, "topic() does not rebuild %s" % v["topic"])
            continue
        ok_valid += 1
    except Exception as e:  # noqa: BLE001 - any other error is this vector's FAIL line
        fail(name, "raised %s: %s" % (type(e).__name__, e))

invalid = find("invalid.json")
ok_invalid = 0
skipped = 0
for v in invalid:
    name = v["name"]
    if v.get("cpython_only"):
        skipped += 1
        continue
    if "payload_hex" in v:
        payload = bytes.fromhex(v["payload_hex"])
    else:
        payload = v["payload"].encode("utf-8")
    try:
        if "topic" in v:
            codec.decode_message(v["topic"], payload)
        else:
            codec.decode(v["kind"], payload)
        fail(name, "no error, expected " + v["error"])
    except codec.ProtocolError as e:
        if e.code != v["error"]:
            fail(name, "code %r, expected %r (%s)" % (e.code, v["error"], e.reason))
        elif v["reason_contains"] not in e.reason or str(e) != e.reason:
            fail(name, "reason %r lacks %r" % (e.reason, v["reason_contains"]))
        elif not isinstance(e, ValueError):
            fail(name, "ProtocolError is not a ValueError")
        else:
            ok_invalid += 1
    except Exception as e:  # noqa: BLE001 - any other error is this vector's FAIL line
        fail(name, "raised %s: %s" % (type(e).__name__, e))

print(
    "VECTORS valid=%d/%d invalid=%d/%d skipped=%d failures=%d"
    % (ok_valid, len(valid), ok_invalid, len(invalid) - skipped, skipped, len(failures))
)
