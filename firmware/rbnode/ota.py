"""Over-the-air firmware sets: install into the spare slot, boot selection, trial, rollback.

Pure state machine in the MicroPython/CPython common subset: it touches flash only through
the hardware layer's storage (rbnode.hw.storage; the simulated one cuts the power at any
write), fetches nothing itself (a driver feeds it the downloaded bytes: rbnode.updater on
the node over HTTP, a list of bytes in the tests), and never resets the board.

Layout on flash (paths relative to the storage root, "/" on the board):
    /                 the set flashed over USB (`make flash`): the last resort
    fw/a/, fw/b/      over-the-air sets, each with the manifest.json it was installed from
    fw/boot.json      the pointer: which set runs, the trial, the last update's outcome
A set is *complete* when its manifest.json is there and every file it lists has its size;
manifest.json is written last, after every file was downloaded and read back with the right
SHA-256, and the pointer is written after it. The pointer is replaced atomically (a
temporary file, then rename) and carries a checksum, so a power cut at any moment leaves
the old pointer or the new one; every state it can name is a complete set.

Pointer (JSON, then a line with the first 8 hex digits of its SHA-256):
    cur   the confirmed set: "" (root), "a" or "b"
    prev  the set confirmed before it (used when cur is found incomplete)
    try   null, or the set on trial: {slot, id, version, boots, max, trial_s}
    run   the set this boot runs (written by select())
    last  null, or the outcome of the latest update: {id, version, state, error}

Life of an update (the node's status.update.state in quotes):
1. Update(storage, cmd) picks the slot that is neither running nor confirmed, removes what
   it held ("downloading"), takes the manifest (its SHA-256 must be the command's
   manifest_sha256: the authenticated MQTT command vouches for the manifest, the manifest
   for every file), then every file, hashing as it streams; a wrong size or hash stops it
   ("failed") with nothing installed.
2. verify_step() reads every file back from flash and hashes it again ("verifying").
3. install() writes the slot's manifest.json, then the pointer with `try` ("installing");
   the caller resets the board ("rebooting").
4. select(), at the next boot, runs the set on trial and counts the boot ("trial"); after
   `max` trial boots without a commit it falls back to `cur` ("rolled_back"), and at once
   when the board was reset by its watchdog during the trial ("rolled_back"): boot.py arms
   the watchdog (TRIAL_WDT_MS) before it imports a set on trial, so a set that hangs while
   importing or before its node feeds the watchdog costs one watchdog period, not `max`
   power cycles.
5. The running node commit()s once it is healthy (connected, synced, a status published,
   every configured sensing channel alive: rbnode.updater) ("done"), or rollback()s when
   `trial_s` passed without that ("rolled_back") and resets.
"""

import json

try:
    import hashlib
except ImportError:  # very old MicroPython ports name it uhashlib
    import uhashlib as hashlib

FW = "fw"
POINTER = "fw/boot.json"
POINTER_TMP = "fw/boot.json.tmp"
MANIFEST = "manifest.json"
SLOTS = ("a", "b")
TRIAL_S = 300  # default deadline for the healthy status on trial
TRIAL_BOOTS = 3  # default boots on trial before falling back
TRIAL_WDT_MS = 10000  # the watchdog boot.py arms before importing a set on trial (= wdt_ms)
MAX_MANIFEST = 16384
MAX_FILES = 256
CHUNK = 1024
_HEX = "0123456789abcdef"
_NAME = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
# the top-level packages and modules of a set, dropped from sys.modules when a slot is
# activated (boot.py imported the selection code from the flashed set)
PACKAGES = ("rbnode", "rbproto", "pinmap_core")


class UpdateError(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _hex(b):
    out = []
    for x in b:
        out.append(_HEX[x >> 4] + _HEX[x & 15])
    return "".join(out)


def sha256_hex(data):
    h = hashlib.sha256()
    h.update(data)
    return _hex(h.digest())  # digest() finalises the hash on MicroPython: call it once


def slot_dir(slot):
    return FW + "/" + slot if slot else ""


def _join(d, p):
    return d + "/" + p if d else p


# --- the pointer ------------------------------------------------------------------------
def _empty():
    return {"cur": "", "prev": None, "try": None, "run": "", "last": None}


def _parse(raw):
    text = (raw.decode() if isinstance(raw, (bytes, bytearray)) else raw).strip()
    i = text.rfind("\n")
    if i < 0 or sha256_hex(text[:i].encode())[:8] != text[i + 1:].strip():
        raise ValueError("pointer checksum")
    s = json.loads(text[:i])
    if not isinstance(s, dict) or s.get("cur") not in ("", "a", "b"):
        raise ValueError("pointer shape")
    out = _empty()
    for k in out:
        if k in s:
            out[k] = s[k]
    t = out["try"]
    if t is not None and (not isinstance(t, dict) or t.get("slot") not in SLOTS):
        out["try"] = None
    return out


def read_state(st):
    """The pointer; while a replace is under way on a file system whose rename cannot
    replace (FAT: remove, then rename), the complete temporary file; else the empty state
    (the flashed set)."""
    for p in (POINTER, POINTER_TMP):
        try:
            return _parse(st.read(p))
        except (OSError, ValueError, KeyError, TypeError, UnicodeError):
            pass
    return _empty()


def write_state(st, s):
    text = json.dumps(s)
    st.mkdir(FW)
    w = st.open_write(POINTER_TMP)
    try:
        w.write((text + "\n" + sha256_hex(text.encode())[:8] + "\n").encode())
    finally:
        w.close()
    st.rename(POINTER_TMP, POINTER)


# --- sets -----------------------------------------------------------------------------------
def check_manifest(m):
    """A decoded manifest.json -> its file list [(path, size, sha256)], or UpdateError."""
    if not isinstance(m, dict):
        raise UpdateError("manifest: not an object")
    v = m.get("version")
    if type(v) is not str or not 0 < len(v) <= 32:
        raise UpdateError("manifest: bad version")
    files = m.get("files")
    if not isinstance(files, list) or not 0 < len(files) <= MAX_FILES:
        raise UpdateError("manifest: bad file list")
    out = []
    seen = {}
    for f in files:
        if not isinstance(f, dict):
            raise UpdateError("manifest: bad file entry")
        p, n, h = f.get("path"), f.get("size"), f.get("sha256")
        if not _safe_path(p) or p in seen:
            raise UpdateError("manifest: bad path %r" % (p,))
        if type(n) is not int or n < 0:
            raise UpdateError("manifest: %s: bad size" % p)
        if type(h) is not str or len(h) != 64 or [c for c in h if c not in _HEX]:
            raise UpdateError("manifest: %s: bad sha256" % p)
        seen[p] = 1
        out.append((p, n, h))
    return out


def _safe_path(p):
    """A relative path below the set: names of [A-Za-z0-9_.-], no "." or ".." parts, not the
    set's own manifest.json."""
    if type(p) is not str or not 0 < len(p) <= 96 or p == MANIFEST:
        return False
    for part in p.split("/"):
        if not part or part == "." or part == "..":
            return False
        for c in part:
            if c not in _NAME:
                return False
    return True


def load_manifest(st, d):
    """The manifest of the set in directory d ("" = the flashed set) or None."""
    try:
        m = json.loads(st.read(_join(d, MANIFEST)))
        check_manifest(m)
        return m
    except (OSError, ValueError, UpdateError):
        return None


def complete(st, d):
    """True when the set in d has its manifest and every file it lists, with its size."""
    m = load_manifest(st, d)
    if m is None:
        return False
    for f in m["files"]:
        if st.size(_join(d, f["path"])) != f["size"]:
            return False
    return True


def version(st, d):
    m = load_manifest(st, d)
    return m["version"] if m is not None else None


# --- boot -----------------------------------------------------------------------------------
def _outcome(t, state, error=None):
    return {"id": t.get("id"), "version": t.get("version"), "state": state, "error": error}


def select(st, reset_cause=None):
    """At every boot, before the firmware is imported: choose the set to run and record the
    choice (and the trial boot) in the pointer. reset_cause (hal RESET_CAUSES): "wdt" after
    a trial boot ends the trial (the set hung). -> running(st). Never raises for a bad
    pointer or set: the worst case is the flashed set."""
    s = read_state(st)
    before = json.dumps(s)
    run = None
    t = s["try"]
    if t is not None:
        if reset_cause == "wdt" and t.get("boots", 0) >= 1:
            s["last"] = _outcome(t, "rolled_back", "watchdog reset on trial boot %d"
                                 % t.get("boots", 0))
            s["try"] = None
        elif t.get("boots", 0) >= t.get("max", TRIAL_BOOTS):
            s["last"] = _outcome(t, "rolled_back", "no healthy status in %d boots"
                                 % t.get("boots", 0))
            s["try"] = None
        elif not complete(st, slot_dir(t["slot"])):
            s["last"] = _outcome(t, "failed", "set on trial incomplete")
            s["try"] = None
        else:
            t["boots"] = t.get("boots", 0) + 1
            run = t["slot"]
    if run is None:
        run = ""
        for cand in (s["cur"], s["prev"]):
            if cand in SLOTS and complete(st, slot_dir(cand)):
                run = cand
                break
    s["run"] = run
    if json.dumps(s) != before:
        try:
            write_state(st, s)
        except OSError:
            # the trial boot could not be counted: a set that crashes would then be tried
            # forever, so run the confirmed one
            if s["try"] is not None and run == s["try"]["slot"]:
                run = s["cur"] if s["cur"] in SLOTS and complete(st, slot_dir(s["cur"])) \
                    else ""
            return _running(st, s, run)
    return _running(st, s, run)


def _running(st, s, run):
    t = s["try"]
    trial = t if t is not None and t["slot"] == run else None
    return {"slot": run, "dir": slot_dir(run), "version": version(st, slot_dir(run)),
            "trial": trial, "last": s["last"]}


def running(st):
    """What this boot runs, as select() recorded it: {slot, dir, version (None when the set
    has no manifest), trial (the try entry while on trial, else None), last}."""
    s = read_state(st)
    return _running(st, s, s["run"] if s["run"] in SLOTS else "")


def commit(st):
    """The set on trial reached a healthy status: it becomes the confirmed set. -> True when
    a trial was committed."""
    s = read_state(st)
    t = s["try"]
    if t is None or s["run"] != t["slot"]:
        return False
    s["prev"] = s["cur"]
    s["cur"] = t["slot"]
    s["try"] = None
    s["last"] = _outcome(t, "done")
    write_state(st, s)
    return True


def rollback(st, reason):
    """End the trial: the next boot runs the confirmed set again. -> True when there was a
    trial."""
    s = read_state(st)
    t = s["try"]
    if t is None:
        return False
    s["try"] = None
    s["last"] = _outcome(t, "rolled_back", reason[:200])
    write_state(st, s)
    return True


def activate(st, d, packages=PACKAGES):
    """boot.py: put the set in directory d first on sys.path and forget the flashed set's
    modules imported so far (the selection code itself), so main.py imports d's."""
    if not d:
        return
    import sys
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            del sys.modules[name]
    sys.path.insert(0, st.path(d))


# --- install ----------------------------------------------------------------------------------
def _rmtree(st, d):
    for name in st.listdir(d):
        p = d + "/" + name
        if st.isdir(p):
            _rmtree(st, p)
        else:
            st.remove(p)
    if st.isdir(d):
        st.rmdir(d)


class Update:
    """One install of the set named by an `update` command (SPEC.md `update`) into the spare
    slot. Drive it: p = next() -> the path to fetch below the command's url (manifest.json
    first), write(chunk) its bytes as they arrive, done() at its end, until next() is None;
    then verify_step() until it returns False, then install(). Every step raises
    UpdateError (or OSError from flash): call fail(reason), and nothing is installed.
    Progress: .state, .bytes, .total, .error."""

    def __init__(self, st, cmd):
        self.st = st
        self.cmd = cmd
        self.id = cmd["id"]
        self.version = cmd["version"]
        self.state = "downloading"
        self.error = None
        self.bytes = 0
        self.total = 0
        s = read_state(st)
        if s["try"] is not None:
            raise UpdateError("busy: %s is on trial" % s["try"].get("version"))
        self.slot = self._spare(s)
        self.dir = slot_dir(self.slot)
        self.files = None  # [(path, size, sha256)] once the manifest is in
        self._raw = None  # the manifest's bytes
        self._i = -1  # index of the file being fetched (-1: the manifest)
        self._w = None
        self._h = None
        self._n = 0
        self._v = 0  # next file to verify

    def _spare(self, s):
        for x in SLOTS:
            if x != s["run"] and x != s["cur"]:
                return x
        for x in SLOTS:
            if x != s["run"]:
                return x
        return SLOTS[0]

    def _clear(self):
        # the spare slot is named by no pointer state that select() would run (its
        # manifest goes first, so it is never taken for complete while emptied)
        st = self.st
        st.mkdir(FW)
        if st.size(_join(self.dir, MANIFEST)) is not None:
            st.remove(_join(self.dir, MANIFEST))
        _rmtree(st, self.dir)
        st.mkdir(self.dir)

    # -- fetching --
    def next(self):
        if self._i == -1 and self._raw is None:
            self._clear()  # here, not in __init__: the node builds an Update in its MQTT
            self._h = hashlib.sha256()  # callback and runs the steps in a task
            self._raw = []
            self._n = 0
            return MANIFEST
        if self.files is None:
            raise UpdateError("manifest not taken")
        self._i += 1
        if self._i >= len(self.files):
            return None
        p = self.files[self._i][0]
        parts = p.split("/")
        d = self.dir
        for name in parts[:-1]:
            d = d + "/" + name
            self.st.mkdir(d)
        self._h = hashlib.sha256()
        self._n = 0
        self._w = self.st.open_write(_join(self.dir, p))
        return p

    def write(self, chunk):
        self._n += len(chunk)
        if self.files is None:
            if self._n > MAX_MANIFEST:
                raise UpdateError("manifest: over %d bytes" % MAX_MANIFEST)
            self._raw.append(bytes(chunk))
            self._h.update(chunk)
            return
        p, size, _ = self.files[self._i]
        if self._n > size:
            raise UpdateError("%s: more than its %d bytes" % (p, size))
        self._h.update(chunk)
        self._w.write(chunk)
        self.bytes += len(chunk)

    def done(self):
        got = _hex(self._h.digest())
        self._h = None
        if self.files is None:
            if got != self.cmd["manifest_sha256"]:
                raise UpdateError("manifest: sha256 %s, the command says %s"
                                  % (got[:12], self.cmd["manifest_sha256"][:12]))
            self._raw = b"".join(self._raw)
            try:
                m = json.loads(self._raw)
            except ValueError:
                raise UpdateError("manifest: not JSON")
            self.files = check_manifest(m)
            if m["version"] != self.version:
                raise UpdateError("manifest: version %s, the command says %s"
                                  % (m["version"], self.version))
            t = 0
            for f in self.files:
                t += f[1]
            self.total = t
            free = self.st.free()
            if free is not None and free < t + len(self._raw) + 4096:
                raise UpdateError("no space: the set needs %d bytes, %d free" % (t, free))
            return
        w = self._w
        self._w = None
        w.close()
        p, size, want = self.files[self._i]
        if self._n != size:
            raise UpdateError("%s: %d bytes, the manifest says %d" % (p, self._n, size))
        if got != want:
            raise UpdateError("%s: sha256 mismatch" % p)

    # -- before the switch --
    def verify_step(self):
        """Read the next installed file back and check its hash -> False when all are."""
        self.state = "verifying"
        if self._v >= len(self.files):
            return False
        p, size, want = self.files[self._v]
        h = hashlib.sha256()
        n = 0
        f = self.st.open_read(_join(self.dir, p))
        try:
            buf = bytearray(CHUNK)
            while True:
                k = f.readinto(buf)
                if not k:
                    break
                h.update(buf if k == CHUNK else buf[:k])
                n += k
        finally:
            f.close()
        if n != size or _hex(h.digest()) != want:
            raise UpdateError("%s: reads back wrong from flash" % p)
        self._v += 1
        return self._v < len(self.files)

    def install(self):
        """The switch: the slot's manifest (the completeness mark), then the pointer with the
        trial. After a power cut before the pointer's rename the old set boots, after it
        the new one on trial."""
        if self._v < len(self.files):
            raise UpdateError("install before every file was verified")
        self.state = "installing"
        st = self.st
        tmp = _join(self.dir, MANIFEST + ".tmp")
        w = st.open_write(tmp)
        try:
            w.write(self._raw)
        finally:
            w.close()
        st.rename(tmp, _join(self.dir, MANIFEST))
        s = read_state(st)
        cmd = self.cmd
        s["try"] = {"slot": self.slot, "id": self.id, "version": self.version, "boots": 0,
                    "max": cmd.get("trial_boots") or TRIAL_BOOTS,
                    "trial_s": cmd.get("trial_s") or TRIAL_S}
        s["last"] = _outcome(s["try"], "rebooting")
        write_state(st, s)
        self.state = "rebooting"

    def fail(self, reason):
        self.state = "failed"
        self.error = reason[:200]
        w = self._w
        self._w = None
        if w is not None:
            try:
                w.close()
            except OSError:
                pass


def install_sync(st, cmd, get):
    """Run an Update to its end with a synchronous fetcher get(path, sink) that calls
    sink(bytes) for every chunk of the file at `path` below the command's url (tests, and
    anything without asyncio). -> the Update (state "rebooting" or "failed"); raises
    UpdateError when no update may start (a trial is running)."""
    try:
        u = Update(st, cmd)
    except UpdateError as e:
        u = None
        err = e.reason
    else:
        err = None
        try:
            p = u.next()
            while p is not None:
                get(p, u.write)
                u.done()
                p = u.next()
            while u.verify_step():
                pass
            u.install()
        except UpdateError as e:
            u.fail(e.reason)
        except OSError as e:
            u.fail("flash: %r" % (e,))
    if u is None:
        raise UpdateError(err)
    return u
