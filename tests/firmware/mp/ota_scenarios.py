# The over-the-air state machine (rbnode.ota) on the simulated flash (rbnode.hw.sim.SimStorage):
# an update succeeds, a corrupted file or manifest is refused before anything is installed,
# a power cut at every write step of an install, a boot, a commit and a rollback leaves a
# node that boots a complete old or new set, a set that never gets healthy is rolled back.
# Common subset: run by tests/firmware/test_ota.py under CPython (one test per scenario) and
# by run_ota.py in real MicroPython. Each scenario takes a fresh directory and raises
# AssertionError on a failure.
import json
import os

from rbnode import ota
from rbnode.hw.sim import PowerCut, SimStorage


def _mkdirs(path):
    cur = ""
    for part in path.split("/"):
        if not part:
            cur = "/"
            continue
        cur = part if not cur else (cur + part if cur.endswith("/") else cur + "/" + part)
        try:
            os.stat(cur)
        except OSError:
            os.mkdir(cur)


def make_set(version, n=5):
    """A firmware set -> (files {path: bytes}, manifest bytes). Sizes cross the 1 KiB chunk
    and the fetcher's 700-byte pieces; one file is empty."""
    sizes = (0, 1, 1023, 1024, 3001, 200, 4100)
    names = (
        "rbnode/__init__.py",
        "rbnode/node.mpy",
        "rbnode/hw/hal.mpy",
        "rbproto/codec.mpy",
        "pinmap_core.mpy",
        "rbnode/ota.mpy",
        "rbnode/mqtt.mpy",
    )
    files = {}
    entries = []
    for i in range(n):
        body = bytearray()
        seed = len(version) * 31 + i
        for _k in range(sizes[i]):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            body.append((seed >> 16) & 255)
        head = ("%s %d\n" % (version, i)).encode() if sizes[i] > 20 else b""
        data = bytes(head + body[len(head) :]) if sizes[i] else b""
        files[names[i]] = data
        entries.append({"path": names[i], "size": len(data), "sha256": ota.sha256_hex(data)})
    man = json.dumps({"schema": 1, "target": "node", "version": version, "files": entries})
    return files, man.encode()


def flash_root(root, version):
    """The set `make flash` put at the root of the file system."""
    files, man = make_set(version)
    _mkdirs(root)
    for p, data in files.items():
        d = root + "/" + p
        _mkdirs(d[: d.rfind("/")])
        with open(d, "wb") as f:
            f.write(data)
    with open(root + "/manifest.json", "wb") as f:
        f.write(man)


def command(version, man, **kw):
    c = {
        "v": 1,
        "id": "u-" + version,
        "version": version,
        "url": "http://h:1/fw/",
        "manifest_sha256": ota.sha256_hex(man),
    }
    for k in kw:
        c[k] = kw[k]
    return c


def fetcher(files, man, corrupt=None, piece=700):
    def get(path, sink):
        data = man if path == "manifest.json" else files[path]
        if path == corrupt:
            b = bytearray(data)
            b[len(b) // 2] ^= 0x01
            data = bytes(b)
        for i in range(0, len(data), piece):
            sink(data[i : i + piece])

    return get


def boot_check(root, allowed, cause="power"):
    """A reboot (reset cause `cause`): select a set on fresh (powered) flash and check it is
    complete: every file its manifest lists reads back with its SHA-256. -> (version,
    running dict)."""
    st = SimStorage(root)
    r = ota.select(st, cause)
    m = ota.load_manifest(st, r["dir"])
    assert m is not None, "no manifest in the selected set %r" % (r["dir"],)
    for f in m["files"]:
        p = r["dir"] + "/" + f["path"] if r["dir"] else f["path"]
        assert ota.sha256_hex(st.read(p)) == f["sha256"], "bad file %s in %r" % (p, r["dir"])
    assert m["version"] in allowed, "booted %s, allowed %r" % (m["version"], allowed)
    return m["version"], r


def update(st, version, **kw):
    files, man = make_set(version)
    return ota.install_sync(st, command(version, man, **kw), fetcher(files, man))


# --- scenarios ------------------------------------------------------------------------
def success(root):
    flash_root(root, "v1")
    assert boot_check(root, ("v1",))[0] == "v1"
    st = SimStorage(root)
    u = update(st, "v2")
    assert u.state == "rebooting", (u.state, u.error)
    assert u.slot == "a" and u.total == 1 + 1023 + 1024 + 3001
    _v, r = boot_check(root, ("v2",))
    assert r["trial"] is not None and r["trial"]["boots"] == 1 and r["slot"] == "a"
    st = SimStorage(root)
    assert ota.running(st)["trial"] is not None
    assert ota.commit(st)
    assert not ota.commit(st)  # nothing on trial any more
    _v, r = boot_check(root, ("v2",))
    assert r["trial"] is None and r["last"]["state"] == "done" and r["last"]["id"] == "u-v2"
    # the next update goes to the other slot and keeps the confirmed one
    u = update(SimStorage(root), "v3")
    assert u.slot == "b" and u.state == "rebooting"
    assert boot_check(root, ("v3",))[1]["trial"] is not None
    assert ota.commit(SimStorage(root))
    s = ota.read_state(SimStorage(root))
    assert s["cur"] == "b" and s["prev"] == "a"
    return "v1 -> v2 (slot a) -> v3 (slot b), each committed"


def corrupt_file_refused(root):
    flash_root(root, "v1")
    files, man = make_set("v2")
    st = SimStorage(root)
    u = ota.install_sync(st, command("v2", man), fetcher(files, man, corrupt="rbproto/codec.mpy"))
    assert u.state == "failed" and "rbproto/codec.mpy: sha256 mismatch" in u.error, u.error
    assert st.size("fw/a/manifest.json") is None  # never marked complete
    assert not [x for x in st.log if "boot.json" in x], st.log  # the pointer never touched
    _v, r = boot_check(root, ("v1",))
    assert r["trial"] is None and r["slot"] == ""
    return u.error


def corrupt_manifest_refused(root):
    flash_root(root, "v1")
    files, man = make_set("v2")
    st = SimStorage(root)
    cmd = command("v2", man)
    cmd["manifest_sha256"] = ota.sha256_hex(b"another manifest")
    u = ota.install_sync(st, cmd, fetcher(files, man))
    assert u.state == "failed" and u.error.startswith("manifest: sha256"), u.error
    assert not [x for x in st.log if x.startswith("open")], st.log  # no file written
    assert boot_check(root, ("v1",))[0] == "v1"
    return u.error


def short_file_refused(root):
    flash_root(root, "v1")
    files, man = make_set("v2")
    files["rbnode/hw/hal.mpy"] = files["rbnode/hw/hal.mpy"][:-10]
    u = ota.install_sync(SimStorage(root), command("v2", man), fetcher(files, man))
    assert u.state == "failed" and "1013 bytes, the manifest says 1023" in u.error, u.error
    assert boot_check(root, ("v1",))[0] == "v1"
    return u.error


def no_space_refused(root):
    flash_root(root, "v1")
    files, man = make_set("v2")
    st = SimStorage(root, free_bytes=3000)
    u = ota.install_sync(st, command("v2", man), fetcher(files, man))
    assert u.state == "failed" and u.error.startswith("no space"), u.error
    assert boot_check(root, ("v1",))[0] == "v1"
    return u.error


def deadline_rollback(root):
    """The set on trial never reports healthy: at its deadline the node rolls back."""
    flash_root(root, "v1")
    assert update(SimStorage(root), "v2", trial_s=60).state == "rebooting"
    _v, r = boot_check(root, ("v2",))
    assert r["trial"]["trial_s"] == 60
    assert ota.rollback(SimStorage(root), "no healthy status within 60 s")
    _v, r = boot_check(root, ("v1",))
    assert r["trial"] is None and r["last"]["state"] == "rolled_back"
    assert r["last"]["error"] == "no healthy status within 60 s" and r["last"]["version"] == "v2"
    return r["last"]["error"]


def crash_loop_rollback(root):
    """The set on trial crashes before it can tell: after `max` boots the old set runs."""
    flash_root(root, "v1")
    assert update(SimStorage(root), "v2", trial_boots=2).state == "rebooting"
    assert boot_check(root, ("v2",))[1]["trial"]["boots"] == 1
    assert boot_check(root, ("v2",))[1]["trial"]["boots"] == 2
    _v, r = boot_check(root, ("v1",))
    assert r["last"]["state"] == "rolled_back" and "2 boots" in r["last"]["error"], r["last"]
    assert boot_check(root, ("v1",))[1]["trial"] is None
    return r["last"]["error"]


def watchdog_rollback(root):
    """The set on trial hangs (boot.py armed the watchdog before importing it): the reset by
    the watchdog ends the trial at once, however many trial boots were left; a watchdog
    reset of the confirmed set, or before the trial's first boot, ends nothing."""
    flash_root(root, "v1")
    assert update(SimStorage(root), "v2", trial_boots=3).state == "rebooting"
    # the reset that starts the trial is no trial boot yet, whatever its cause
    assert boot_check(root, ("v2",), "wdt")[1]["trial"]["boots"] == 1
    _v, r = boot_check(root, ("v1",), "wdt")
    assert r["trial"] is None and r["last"]["state"] == "rolled_back", r["last"]
    assert r["last"]["error"] == "watchdog reset on trial boot 1", r["last"]
    assert boot_check(root, ("v1",), "wdt")[1]["last"]["state"] == "rolled_back"
    # the next update commits; a later watchdog reset keeps the confirmed set
    assert update(SimStorage(root), "v3").state == "rebooting"
    boot_check(root, ("v3",))
    assert ota.commit(SimStorage(root))
    _v, r = boot_check(root, ("v3",), "wdt")
    assert r["slot"] == "a" and r["last"]["state"] == "done"
    return "rolled back after one watchdog reset"


def busy_on_trial(root):
    flash_root(root, "v1")
    update(SimStorage(root), "v2")
    boot_check(root, ("v2",))
    err = None
    try:
        update(SimStorage(root), "v3")
    except ota.UpdateError as e:
        err = e.reason
    assert err is not None and err.startswith("busy"), err
    return err


def _run_cut(root, version, finish, cut):
    """Install `version`, boot, finish (commit/rollback), boot, with the power cut at global
    write step `cut` (None: never). -> steps used, or None when the cut happened."""
    files, man = make_set(version)
    used = 0
    st = SimStorage(root, cut_at=cut)
    try:
        u = ota.install_sync(st, command(version, man), fetcher(files, man))
        assert u.state == "rebooting", (u.state, u.error)
        used += st.steps
        st = SimStorage(root, cut_at=None if cut is None else cut - used)
        ota.select(st)
        used += st.steps
        st = SimStorage(root, cut_at=None if cut is None else cut - used)
        if finish == "commit":
            assert ota.commit(st)
        else:
            assert ota.rollback(st, "not healthy")
        used += st.steps
        st = SimStorage(root, cut_at=None if cut is None else cut - used)
        ota.select(st)
        used += st.steps
    except PowerCut:
        return None
    return used


def _prepare(root, history):
    flash_root(root, "v1")
    for v in history:
        update(SimStorage(root), v)
        boot_check(root, (v,))
        assert ota.commit(SimStorage(root))


def power_cuts(base, history=(), finish="commit"):
    """For every write step k of an update: cut the power at k, reboot, and check the node
    boots a complete set, the old or the new; then the update is run again and succeeds."""
    old = history[-1] if history else "v1"
    new = "v%d" % (len(history) + 2) + "n"
    _prepare(base + "/count", history)
    total = _run_cut(base + "/count", new, finish, None)
    assert total and total > 20, total
    seen = {}
    for k in range(1, total + 1):
        root = base + "/k%d" % k
        _prepare(root, history)
        assert _run_cut(root, new, finish, k) is None, "no cut at step %d" % k
        v = boot_check(root, (old, new))[0]
        seen[v] = seen.get(v, 0) + 1
        # a second boot (another power cycle) agrees, and a retried update completes
        r2 = boot_check(root, (old, new))[1]
        if r2["trial"] is not None:
            ota.rollback(SimStorage(root), "retry")
            boot_check(root, (old,))
        assert _run_cut(root, new, finish, None), "the retried update failed after cut %d" % k
        want = new if finish == "commit" else old
        assert boot_check(root, (want,))[1]["trial"] is None
    if finish == "commit":
        assert seen.get(old) and seen.get(new), seen
    return "%d cuts: %r" % (total, seen)


def activate(base):
    """boot.py's switch: the selected slot's modules win over the flashed set's, even when
    the flashed set's package was imported first (the selection code comes from it)."""
    import sys

    for d, v in ((base + "/flash", "flashed"), (base + "/fw/a", "slot a")):
        _mkdirs(d + "/fwprobe")
        with open(d + "/fwprobe/__init__.py", "w") as f:
            f.write("WHO = %r\n" % v)
    saved = list(sys.path)
    sys.path.insert(0, base + "/flash")
    try:
        import fwprobe

        assert fwprobe.WHO == "flashed"
        ota.activate(SimStorage(base), "fw/a", ("fwprobe",))
        import fwprobe as again

        assert again.WHO == "slot a", again.WHO
        ota.activate(SimStorage(base), "", ("fwprobe",))  # the flashed set: nothing to do
        assert sys.path[0] == base + "/fw/a"
    finally:
        sys.path[:] = saved
        if "fwprobe" in sys.modules:
            del sys.modules["fwprobe"]
    return "slot a imported"


SCENARIOS = (
    "success",
    "corrupt_file_refused",
    "corrupt_manifest_refused",
    "short_file_refused",
    "no_space_refused",
    "deadline_rollback",
    "crash_loop_rollback",
    "watchdog_rollback",
    "busy_on_trial",
    "activate",
)
CUTS = (
    ("from_flash_commit", (), "commit"),
    ("from_slot_commit", ("v2",), "commit"),
    ("over_prev_commit", ("v2", "v3"), "commit"),
    ("from_slot_rollback", ("v2",), "rollback"),
)
