"""The nodes of `make bench`'s end-to-end runs: a QoS 1 publisher in a process of its own.

The nodes are boards of their own, so nothing of theirs runs in the daemon's process. A
publisher thread in the benchmark's process did: it held 26 % of the interpreter lock's
samples in the end-to-end run (py-spy --gil, docs/performance.md, 4 December), time the
daemon's worker waited for and no installation has. The baseline, the floor and the daemon
are each timed from the moment a publisher already connected is told to go until its last
message is acknowledged by the broker (and, for the three consumers, received), so starting
the process is never timed.

`python -m railbird.bench.publisher FILE`: FILE a pickle of (port, user, password, topic,
payloads, client id). The child says `ready` once connected, publishes every payload at
QoS 1 when it reads a line, says `done` and the CPU seconds that took once the broker has
acknowledged them all, and exits.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import tempfile
import time

from railbird.childenv import child_env

PUBLISH_TIMEOUT_S = 120.0


class Publisher:
    """A connected publisher process, waiting to be told to go (`run`)."""

    def __init__(self, port: int, user: str, password: str, topic: str, payloads, client_id):
        fd, self._path = tempfile.mkstemp(prefix="railbird-bench-pub-", suffix=".pickle")
        with os.fdopen(fd, "wb") as f:
            pickle.dump((port, user, password, topic, list(payloads), client_id), f)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "railbird.bench.publisher", self._path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(),
            text=True,
        )
        self._expect("ready")

    def _expect(self, word: str) -> list[str]:
        """The child's next line, which must start with `word`: the words after it."""
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().split()
        if line[:1] != [word]:
            self.close()
            raise RuntimeError(f"bench publisher: expected {word!r}, got {line!r}")
        return line[1:]

    def run(self) -> float:
        """Publish every payload; return once the broker has acknowledged them all. ->
        the CPU seconds the publisher's process spent on it."""
        assert self._proc.stdin is not None
        self._proc.stdin.write("go\n")
        self._proc.stdin.flush()
        (cpu,) = self._expect("done")
        self.close()
        return float(cpu)

    def close(self) -> None:
        try:
            self._proc.wait(PUBLISH_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for f in (self._proc.stdin, self._proc.stdout):
            if f is not None:
                f.close()
        with contextlib.suppress(FileNotFoundError):  # closed once already
            os.unlink(self._path)


def _main(path: str) -> int:
    from railbird.mqttclient import BrokerLogin, new_client

    with open(path, "rb") as f:
        port, user, password, topic, payloads, client_id = pickle.load(f)
    login = BrokerLogin(port=port, user=user, password=password)
    c, _ = new_client("bench", login, client_id=client_id)
    c.max_inflight_messages_set(100)
    c.max_queued_messages_set(0)
    c.connect("127.0.0.1", port)
    c.loop_start()
    print("ready", flush=True)
    if not sys.stdin.readline():
        return 1  # the benchmark went away before it said go
    c0 = time.process_time()
    infos = [c.publish(topic, p, qos=1) for p in payloads]
    for i in infos:
        i.wait_for_publish(PUBLISH_TIMEOUT_S)
    c.disconnect()
    c.loop_stop()
    print("done", time.process_time() - c0, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1]))
