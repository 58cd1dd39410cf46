"""The flash file system behind the hardware layer (hal.Hardware.storage()).

The over-the-air installer and the boot selection (rbnode.ota) touch flash only through
this interface, so the simulated layer (rbnode.hw.sim.SimStorage) can cut the power at any
single write and the same code runs on the board, under CPython and in real MicroPython.

Interface (stable): paths are relative to the storage's root, "/"-separated, no leading
slash ("fw/a/rbnode/node.mpy").
    path(p) -> the file system path (what sys.path and open() take)
    read(p) -> bytes                 OSError when missing
    open_read(p) -> binary file      the caller closes it
    open_write(p) -> writer          .write(bytes), .close(); creates or truncates
    rename(src, dst)                 replaces dst; atomic on littlefs and POSIX
    remove(p), rmdir(p)              OSError when missing
    mkdir(p)                         no error when it exists
    listdir(p) -> names              [] when missing
    size(p) -> bytes or None         None when missing or a directory
    isdir(p) -> bool
    free() -> bytes free or None     None when the port cannot tell
FileStorage(root) implements it with `os` (the board: root ""; a test: a directory).
"""

import os

_DIR = 0x4000  # stat mode bit of a directory (MicroPython has no stat.S_ISDIR)


class FileStorage:
    def __init__(self, root=""):
        self.root = root[:-1] if root.endswith("/") else root

    def path(self, p):
        return self.root + "/" + p if p else (self.root or "/")

    def read(self, p):
        with open(self.path(p), "rb") as f:
            return f.read()

    def open_read(self, p):
        return open(self.path(p), "rb")

    def open_write(self, p):
        return open(self.path(p), "wb")

    def rename(self, src, dst):
        try:
            os.rename(self.path(src), self.path(dst))
        except OSError:
            # a port whose rename does not replace (FAT): the reader of an atomically
            # replaced file (rbnode.ota) also looks at `src` while `dst` is missing
            if self.size(dst) is None:
                raise
            os.remove(self.path(dst))
            os.rename(self.path(src), self.path(dst))

    def remove(self, p):
        os.remove(self.path(p))

    def rmdir(self, p):
        os.rmdir(self.path(p))

    def mkdir(self, p):
        try:
            os.mkdir(self.path(p))
        except OSError:
            if not self.isdir(p):
                raise

    def listdir(self, p):
        try:
            return os.listdir(self.path(p))
        except OSError:
            return []

    def _stat(self, p):
        try:
            return os.stat(self.path(p))
        except OSError:
            return None

    def size(self, p):
        st = self._stat(p)
        if st is None or st[0] & _DIR:
            return None
        return st[6]

    def isdir(self, p):
        st = self._stat(p)
        return st is not None and bool(st[0] & _DIR)

    def free(self):
        try:
            v = os.statvfs(self.path(""))
        except (OSError, AttributeError):
            return None
        return v[4] * v[1]  # f_bavail * f_frsize
