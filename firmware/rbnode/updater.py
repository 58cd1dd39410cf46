"""The node's side of over-the-air updates (firmware/README.md "Over-the-air updates"): the
`update` command (SPEC.md), the download over HTTP into rbnode.ota, the trial of a new set
and `status.update`.

- A retained `update`, an unsigned one or one another key signed (on a board with a venue
  key), and one naming an older version than the running one without the owner's forced
  `downgrade` are refused before anything is downloaded (rbnode.trust), counted in
  `counters.update_rejected` and reported as "failed" with the reason.
- An `update` naming the version this node runs is answered "done"; one naming another
  starts the download (a task: sensing and publishing go on) into the spare slot; a second
  command while one runs, or during a trial, is refused (`counters.update_rejected`).
- After the install the node publishes its status ("rebooting"), parks its events in the
  flash spill and resets; the boot selection (boot.py, rbnode.ota.select) runs the new set
  on trial.
- On trial the set is healthy once a status published after the boot's first time-sync
  sample, with every configured beam and rail channel alive (Node.sensing_dead: a beam
  that has read clear and is not jammed, a rail whose idle ADC is not at full scale), is
  acknowledged by the broker (so: connected, synced, sensing, status out): then it is
  committed ("done"). While a channel is dead the trial's status.update names it and the
  status goes out again once all are alive. If that has not happened `trial_s` after the
  boot, the node rolls back ("rolled_back", naming the dead channels) and resets into the
  previous set.
"""

try:
    import asyncio
except ImportError:  # older MicroPython names it uasyncio
    import uasyncio as asyncio

from rbnode import http, ota, trust
from rbproto import codec

FINAL = ("done", "failed", "rolled_back")
REBOOT_WAIT_MS = 5000  # at most this long for the "rebooting" status to be acknowledged


def _sleep_ms(ms):
    s = getattr(asyncio, "sleep_ms", None)
    return s(ms) if s is not None else asyncio.sleep(ms / 1000)


class Updater:
    def __init__(self, node, fallback_version, timeout_ms=30000):
        self.node = node
        self.st = node.hw.storage()
        self.timeout_ms = timeout_ms
        r = ota.running(self.st)
        self.slot = r["slot"]
        self.version = r["version"] or fallback_version
        self.trial = r["trial"]
        self.job = None  # ota.Update while one downloads
        self.report = None  # what status.update says when no job runs
        self.rejected = 0
        self.rebooting = False
        self._commit_pid = None
        self._dead = None  # the channels found dead by the last healthy-looking status
        t, last = self.trial, r["last"]
        if t is not None:
            self.report = {"id": t.get("id"), "version": t.get("version"), "state": "trial",
                           "error": None}
        elif last is not None and last.get("state") in FINAL:
            self.report = last

    # -- status --------------------------------------------------------------------------
    def status(self):
        """status.update: the running download, else the latest outcome, else None."""
        j = self.job
        if j is not None:
            d = {"id": j.id, "version": j.version, "state": j.state, "error": j.error}
            if j.total:
                d["bytes"] = j.bytes
                d["total"] = j.total
            return d
        r = self.report
        if r is None:
            return None
        d = {"state": r["state"], "error": r.get("error")}
        for k in ("id", "version"):
            if r.get(k) is not None:
                d[k] = r[k]
        return d

    # -- the command ---------------------------------------------------------------------
    def on_command(self, payload, retained=False):
        """An `update` message -> True when status.update changed (publish a status)."""
        if retained:
            self.rejected += 1
            self.report = {"state": "failed", "error": trust.RETAINED_UPDATE}
            return True
        try:
            cmd = codec.decode("update", payload)
        except codec.ProtocolError as e:
            self.rejected += 1
            self.report = {"state": "failed", "error": e.reason[:200]}
            return True
        cid = cmd["id"]
        if self.job is not None and self.job.id == cid:
            return False  # the same command delivered again
        r = self.report
        if self.job is None and r is not None and r.get("id") == cid and r["state"] in FINAL:
            return True  # asked again: say again how it ended
        if self.job is not None or self.rebooting or self.trial is not None:
            self.rejected += 1  # busy: the running update or trial keeps its report
            return False
        why = self.node.trust.update(cmd, False, self.node.boot, self.version)
        if why is not None:
            self.rejected += 1  # unsigned, another key's, or older: nothing downloaded
            self._failed(cmd, why)
            return True
        if cmd["version"] == self.version:
            self.report = {"id": cid, "version": cmd["version"], "state": "done", "error": None}
            return True
        try:
            self.job = ota.Update(self.st, cmd)
        except ota.UpdateError as e:
            self._failed(cmd, e.reason)
            return True
        except OSError as e:
            self._failed(cmd, "flash: %r" % (e,))
            return True
        asyncio.create_task(self._run(self.job, cmd["url"]))
        return True

    def _failed(self, cmd, reason):
        self.report = {"id": cmd["id"], "version": cmd["version"], "state": "failed",
                       "error": reason[:200]}

    async def _run(self, u, url):
        try:
            p = u.next()
            while p is not None:
                await http.get(url + p, u.write, self.timeout_ms)
                u.done()
                p = u.next()
            while u.verify_step():
                await _sleep_ms(0)
            u.install()
        except ota.UpdateError as e:
            u.fail(e.reason)
        except http.HTTPError as e:
            u.fail(e.reason)
        except asyncio.TimeoutError:
            u.fail("download: no data for %d ms" % self.timeout_ms)
        except OSError as e:
            u.fail("download: %r" % (e,))
        except Exception as e:  # noqa: BLE001 - an update must never stop the node
            u.fail("error: %r" % (e,))
        self.report = {"id": u.id, "version": u.version, "state": u.state, "error": u.error}
        self.job = None
        self.node._status_now.set()
        if u.state == "rebooting":
            self.rebooting = True
            await self._reboot()

    async def _reboot(self):
        n = self.node
        waited = 0
        n._status_now.set()
        await _sleep_ms(50)
        while waited < REBOOT_WAIT_MS and (n._status_now.is_set() or n.mqtt.inflight_count()):
            await _sleep_ms(100)
            waited += 100
        n.reboot()

    # -- the trial -----------------------------------------------------------------------
    def tick(self, now_us):
        """Every status-task round: roll back a trial past its deadline."""
        t = self.trial
        if t is None or self.rebooting:
            return
        if self._dead is not None and not self.node.sensing_dead():
            self._dead = None
            self.node._status_now.set()  # sensing alive now: the next status may commit
        limit = t.get("trial_s") or ota.TRIAL_S
        if now_us < limit * 1000000:
            return
        reason = "no healthy status within %d s" % limit
        if self._dead:
            reason += ": sensing: %s not alive" % ", ".join(self._dead)
        try:
            ota.rollback(self.st, reason)
        except OSError:
            pass  # not recorded: the next boot counts another trial boot instead
        self.report = {"id": t.get("id"), "version": t.get("version"), "state": "rolled_back",
                       "error": reason}
        self.trial = None
        self.rebooting = True
        asyncio.create_task(self._reboot())

    def on_status(self, pid, synced):
        """A status went out (pid); on trial with a sync sample in it, its PUBACK commits.
        -> True when that happened already (the PUBACK can beat publish()'s return)."""
        if self.trial is None or not synced or self._commit_pid is not None:
            return False
        dead = self.node.sensing_dead()
        if dead:
            t = self.trial
            self._dead = dead
            err = "sensing: %s not alive" % ", ".join(dead)
            if self.report is None or self.report.get("error") != err[:200]:
                self.report = {"id": t.get("id"), "version": t.get("version"),
                               "state": "trial", "error": err[:200]}
                return True  # say which, in the next status
            return False
        self._commit_pid = pid
        for e in self.node.mqtt.inflight:
            if e[0] == pid:
                return False
        return self.on_puback(pid)

    def on_puback(self, pid):
        """-> True when this acknowledgement made the set on trial the confirmed one."""
        if pid != self._commit_pid or self.trial is None:
            return False
        self._commit_pid = None
        t = self.trial
        try:
            ota.commit(self.st)
        except OSError as e:
            self.report = {"id": t.get("id"), "version": t.get("version"), "state": "trial",
                           "error": "commit: %r" % (e,)}
            return True  # still on trial: the next status tries again
        self.trial = None
        self.report = {"id": t.get("id"), "version": t.get("version"), "state": "done",
                       "error": None}
        return True
