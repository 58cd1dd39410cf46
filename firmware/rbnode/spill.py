"""Bounded, append-only flash spill for events the RAM ring cannot hold (DESIGN §1.2, §4:
littlefs on flash for a bounded, append-only spill).

Interface (stable):
    Spill(root, capacity=10240, seg_records=512, policy="newest")
        root: a directory (hw.fs_root() + "/spill"; created if missing)
    .append(boot, seq, t, kind, ch, val) -> True, or False when full (policy "newest":
                        the new record is dropped; "oldest": the oldest segment is deleted
                        to make room). Every lost record counts in .dropped.
    .flush()            make appended records durable (call after a batch of appends)
    .peek(n) -> list of up to n (boot, seq, t, kind, ch, val), oldest first, not consumed
    .consume(n)         mark the n oldest as delivered (cursor persisted; a fully
                        consumed segment file is deleted, reclaiming its flash)
    len(spill), .capacity, .dropped, .spilled (appended this run), .close()

Format: segment files s00000000.bin, s00000001.bin ... of fixed 24-byte records
"<BBBBIIQI": magic 0xA7, kind, ch, check, boot, seq, t (u64), val; check = XOR of the
other 23 bytes. Records carry `boot` because a spill outlives a reboot and its events must
go out with the boot they happened in. The read cursor "cur" holds (segment, index) as
"<II". On open, a torn tail (partial record or bad check from a power cut mid-write) ends
that segment. Capacity 10240 records = 20 segments x 512 = 240 KiB of flash plus one
partial segment's slack. Appends go to an open file; flush() closes/reopens nothing, it
calls f.flush() (littlefs commits on flush/close).
"""

import os
import struct

_FMT = "<BBBBIIQI"
REC = 24
_MAGIC = 0xA7


def _check(b):
    x = 0
    i = 0
    while i < REC:
        if i != 3:
            x ^= b[i]
        i += 1
    return x


class Spill:
    def __init__(self, root, capacity=10240, seg_records=512, policy="newest"):
        self.root = root
        self.seg_records = seg_records
        self.capacity = capacity
        self.policy = policy
        self.dropped = 0
        self.spilled = 0
        self._buf = bytearray(REC)
        self._wf = None
        try:
            os.mkdir(root)
        except OSError:
            pass
        self._segs = []  # [number, records] oldest first
        for name in sorted(os.listdir(root)):
            if name.startswith("s") and name.endswith(".bin"):
                n = int(name[1:-4])
                self._segs.append([n, self._valid_records(n)])
        self._rseg, self._ridx = self._load_cursor()
        # Drop segments the cursor says were consumed (deletion may have been cut short).
        while self._segs and self._segs[0][0] < self._rseg:
            self._remove(self._segs.pop(0)[0])
        if self._segs and self._segs[0][0] != self._rseg:
            self._rseg, self._ridx = self._segs[0][0], 0
        if not self._segs:
            self._ridx = 0

    # --- files ---
    def _path(self, n):
        return "%s/s%08d.bin" % (self.root, n)

    def _remove(self, n):
        try:
            os.remove(self._path(n))
        except OSError:
            pass

    def _valid_records(self, n):
        k = 0
        try:
            with open(self._path(n), "rb") as f:
                while k < self.seg_records:
                    b = f.read(REC)
                    if len(b) < REC or b[0] != _MAGIC or b[3] != _check(b):
                        break
                    k += 1
        except OSError:
            pass
        return k

    def _load_cursor(self):
        try:
            with open(self.root + "/cur", "rb") as f:
                b = f.read(8)
            if len(b) == 8:
                s, i = struct.unpack("<II", b)
                return s, i
        except OSError:
            pass
        return (self._segs[0][0] if self._segs else 0), 0

    def _save_cursor(self):
        tmp = self.root + "/cur.tmp"
        with open(tmp, "wb") as f:
            f.write(struct.pack("<II", self._rseg, self._ridx))
        os.rename(tmp, self.root + "/cur")  # atomic on littlefs and POSIX

    # --- API ---
    def __len__(self):
        n = 0
        for s in self._segs:
            n += s[1]
        if self._segs:
            n -= self._ridx
        return n

    def append(self, boot, seq, t, kind, ch, val):
        if len(self) >= self.capacity:
            if self.policy != "oldest" or len(self._segs) < 2:
                self.dropped += 1
                return False
            s = self._segs.pop(0)
            self.dropped += s[1] - self._ridx
            self._remove(s[0])
            self._rseg, self._ridx = self._segs[0][0], 0
            self._save_cursor()
        if not self._segs or self._segs[-1][1] >= self.seg_records or self._wf is None:
            self._open_writer()
        b = self._buf
        struct.pack_into(_FMT, b, 0, _MAGIC, kind, ch, 0, boot, seq, t, val)
        b[3] = _check(b)
        self._wf.write(b)
        self._segs[-1][1] += 1
        self.spilled += 1
        return True

    def _open_writer(self):
        if self._wf is not None:
            self._wf.close()
            self._wf = None
        if self._segs and self._segs[-1][1] < self.seg_records:
            n = self._segs[-1][0]
            # Append after the last valid record: rewrite the file without a torn tail.
            size = self._segs[-1][1] * REC
            try:
                st = os.stat(self._path(n))[6]
            except OSError:
                st = 0
            if st != size:
                with open(self._path(n), "rb") as f:
                    data = f.read(size)
                with open(self._path(n), "wb") as f:
                    f.write(data)
        else:
            n = self._segs[-1][0] + 1 if self._segs else self._rseg
            self._segs.append([n, 0])
            if len(self._segs) == 1:
                self._rseg, self._ridx = n, 0
        self._wf = open(self._path(n), "ab")

    def flush(self):
        if self._wf is not None:
            self._wf.flush()

    def peek(self, n):
        self.flush()
        out = []
        i = 0
        while i < len(self._segs) and len(out) < n:
            num, cnt = self._segs[i]
            start = self._ridx if i == 0 else 0
            if start < cnt:
                with open(self._path(num), "rb") as f:
                    f.seek(start * REC)
                    k = start
                    while k < cnt and len(out) < n:
                        b = f.read(REC)
                        _, kind, ch, _, boot, seq, t, val = struct.unpack(_FMT, b)
                        out.append((boot, seq, t, kind, ch, val))
                        k += 1
            i += 1
        return out

    def consume(self, n):
        done = 0
        while n > 0 and self._segs:
            num, cnt = self._segs[0]
            k = cnt - self._ridx
            if k > n:
                k = n
            self._ridx += k
            n -= k
            done += k
            full = cnt >= self.seg_records
            if self._ridx >= cnt and (full or len(self._segs) > 1):
                if len(self._segs) == 1 and self._wf is not None:
                    self._wf.close()
                    self._wf = None
                self._segs.pop(0)
                self._remove(num)
                self._rseg = self._segs[0][0] if self._segs else num + 1
                self._ridx = 0
            elif k == 0:
                break
        self._save_cursor()
        return done

    def close(self):
        if self._wf is not None:
            self._wf.close()
            self._wf = None
