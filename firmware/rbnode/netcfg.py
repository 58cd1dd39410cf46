"""The node's network settings (Wi-Fi and broker) and their trial-and-revert (SPEC.md `net`).

`Net(hw, dev)` holds the settings in use, `cur`: {"ssid", "password", "host", "port",
"addr"}. `host` is what the node dials, a name (mDNS `.local`, a DHCP host name) or an
address; `addr` the last address the name resolved to when the broker was reached (the
fallback when the name does not resolve: `dial()`).

They start as the device config's (`dev["wifi"]`, `dev["broker"]`), and a change the host
sent (`begin()`) replaces them on trial: the node uses the new settings at once, and when
it has not reached the broker with them (`connected()`) within the command's `trial_s`,
`tick()` puts the old ones back ("reverted"). A reset during a trial reverts too (the next
boot starts with the settings that last worked).

Persistence: `<fs_root>/rbnet.json` through hw.storage() (temporary file + rename, as
rbnode.ota does), only once the device config's own settings were overridden. The file
records a checksum of the device config's settings (`base`): a board provisioned again
over USB with other settings drops the file, so the new config.json wins.
"""

import json

from rbnode import config as rbconfig

FILE = "rbnet.json"
TRIAL_S = 60


def _from_dev(dev):
    w = dev.get("wifi") or {}
    b = dev.get("broker") or {}
    return {"ssid": w.get("ssid") or "", "password": w.get("password") or "",
            "host": b.get("host") or "", "port": b.get("port") or 1883,
            "addr": b.get("addr")}


def _base(s):
    return "%08x" % rbconfig.crc32(rbconfig.canonical(s).encode())


class Net:
    def __init__(self, hw, dev):
        self.hw = hw
        self.st = hw.storage()
        dev_net = _from_dev(dev)
        self.base = _base(dev_net)
        self.cur = dev_net
        self.prev = None  # the settings to go back to while a trial runs
        self.trial = None  # {"id", "trial_s", "t0"} while one runs
        self.report = None  # status.net
        self.rejected = 0
        self.dialed = None  # the address the client dialed last
        self._load()

    # -- persistence -----------------------------------------------------------------------
    def _load(self):
        try:
            d = json.loads(self.st.read(FILE))
        except (OSError, ValueError):
            return  # none yet, or unreadable: the device config's settings
        if not isinstance(d, dict) or d.get("base") != self.base:
            return  # provisioned again since: config.json wins
        cur = d.get("cur")
        if isinstance(cur, dict):
            for k in self.cur:
                if k in cur:
                    self.cur[k] = cur[k]
        self.report = d.get("report")
        if d.get("trial") is not None and isinstance(d.get("prev"), dict):
            # reset in the middle of a trial: back to what worked
            self.cur = d["prev"]
            t = d["trial"]
            self.report = self._report(t.get("id"), "reverted", "reset during the trial")
            self._save()

    def _save(self):
        d = {"base": self.base, "cur": self.cur, "prev": self.prev, "trial": self.trial,
             "report": self.report}
        tmp = FILE + ".tmp"
        f = self.st.open_write(tmp)
        try:
            f.write(rbconfig.canonical(d).encode())
        finally:
            f.close()
        self.st.rename(tmp, FILE)

    def _save_quiet(self):
        try:
            self._save()
        except OSError:
            pass  # flash trouble: the settings hold in RAM until the next boot

    def _report(self, cid, state, error=None):
        r = {"state": state, "host": self.cur["host"], "port": self.cur["port"],
             "ssid": self.cur["ssid"], "error": error}
        if cid is not None:
            r["id"] = cid
        return r

    # -- the command -----------------------------------------------------------------------
    def begin(self, cmd, now_us):
        """A decoded `net` command -> (wifi_changed, broker_changed); (False, False) when
        nothing is to be tried (refused, counted, or the settings already in use)."""
        cid = cmd["id"]
        if self.trial is not None:
            if self.trial["id"] != cid:
                self.rejected += 1  # one trial at a time; the running one keeps its report
            return False, False
        new = {}
        for k in self.cur:
            new[k] = self.cur[k]
        b = cmd.get("broker")
        if b is not None:
            if b["host"] != new["host"]:
                new["addr"] = None  # another name: the old one's address says nothing
            new["host"] = b["host"]
            new["port"] = b.get("port", 1883)
            if b.get("addr"):
                new["addr"] = b["addr"]
        w = cmd.get("wifi")
        if w is not None:
            new["ssid"] = w["ssid"]
            new["password"] = w["password"]
        wifi = new["ssid"] != self.cur["ssid"] or new["password"] != self.cur["password"]
        broker = new["host"] != self.cur["host"] or new["port"] != self.cur["port"] or \
            new["addr"] != self.cur["addr"]
        if not wifi and not broker:
            self.report = self._report(cid, "done")
            return False, False
        self.prev = self.cur
        self.cur = new
        self.trial = {"id": cid, "trial_s": cmd.get("trial_s") or TRIAL_S, "t0": now_us}
        self.report = self._report(cid, "trial")
        self._save_quiet()
        return wifi, broker

    def refuse(self, reason):
        self.rejected += 1
        self.report = {"state": "failed", "error": reason[:200]}

    def connected(self):
        """The broker accepted the node with `cur` (CONNACK) -> True when that ended a
        trial ("done")."""
        done = False
        if self.trial is not None:
            self.report = self._report(self.trial["id"], "done")
            self.trial = None
            self.prev = None
            done = True
        if self.dialed is not None and self.dialed != self.cur["addr"] and \
                self.dialed != self.cur["host"]:
            self.cur["addr"] = self.dialed  # the last good address of the name
            done = True
        if done:
            self._save_quiet()
        return done

    def tick(self, now_us, why=None):
        """-> (wifi_changed, broker_changed) when the trial ran out and the old settings are
        back, else None."""
        t = self.trial
        if t is None or now_us - t["t0"] < t["trial_s"] * 1000000:
            return None
        new, old = self.cur, self.prev
        self.cur = old
        self.prev = None
        self.trial = None
        err = "no broker within %d s with the new settings" % t["trial_s"]
        if why:
            err += ": " + why
        self.report = self._report(t["id"], "reverted", err[:200])
        self._save_quiet()
        return (new["ssid"] != old["ssid"] or new["password"] != old["password"],
                new["host"] != old["host"] or new["port"] != old["port"])

    # -- dialing -----------------------------------------------------------------------------
    def dial(self, host):
        """The address to dial for `host` (the MQTT client's resolver): the name resolved
        now (hw.resolve), else the last good address; OSError when neither."""
        try:
            a = self.hw.resolve(host, self.cur["port"])
        except OSError:
            a = self.cur["addr"] if host == self.cur["host"] else None
            if not a:
                raise
        self.dialed = a
        return a
