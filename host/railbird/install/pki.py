"""The installation's small local CA (`--tls`), with the `openssl` binary like
`railbird.broker`'s test CA: a CA (10 years), the broker's server certificate (825 days,
the names and addresses clients dial as subjectAltName) and one client certificate per node
(CN = node id, for a broker that requires them; the project config does not: protocol/
SPEC.md "Security").

Made once: a second run issues certificates only for new nodes, and a new server
certificate only when the broker's names changed. The CA key stays in `tls/`, readable by
root only, since new nodes need it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from railbird.broker import BrokerError, make_ca, make_server_cert

from .hostconf import SetupError

CA_DAYS = 3650
CERT_DAYS = 825  # the longest validity clients such as Apple's accept for a server


def _openssl(*args: str, cwd: Path) -> str:
    exe = shutil.which("openssl")
    if exe is None:
        raise SetupError("--tls needs openssl: apt-get install -y openssl")
    r = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        raise SetupError(f"openssl {args[0]} failed: {r.stderr.strip()}")
    return r.stdout


def san_names(crt: Path) -> set[str]:
    """The subjectAltName entries of a certificate, as `make_server_cert` takes them."""
    out = _openssl("x509", "-in", str(crt), "-noout", "-ext", "subjectAltName", cwd=crt.parent)
    names = set()
    for line in out.splitlines()[1:]:
        for entry in line.split(","):
            _kind, _, name = entry.strip().partition(":")
            if name:
                names.add(name)
    return names


RENEW_DAYS = 60  # a server certificate that expires within this is made anew by setup


def expires_within(crt: Path, days: int) -> bool:
    """Whether the certificate expires within `days` (openssl x509 -checkend)."""
    exe = shutil.which("openssl")
    if exe is None:
        raise SetupError("--tls needs openssl: apt-get install -y openssl")
    r = subprocess.run(
        [exe, "x509", "-in", str(crt), "-noout", "-checkend", str(days * 86400)],
        capture_output=True,
        text=True,
    )
    return r.returncode != 0  # 0: still valid then; 1: expired by then (or unreadable)


def ensure(tls: Path, venue: str, names: list[str], nodes: list[str]) -> list[str]:
    """The CA, the server certificate for `names` and a certificate per node in `tls`;
    -> the files made (paths relative to `tls`). A server certificate for other names, or
    one that expires within RENEW_DAYS, is made anew."""
    tls.mkdir(parents=True, exist_ok=True)
    made = []
    ca_crt, ca_key = tls / "ca.crt", tls / "ca.key"
    try:
        if not (ca_crt.exists() and ca_key.exists()):
            make_ca(tls, cn=f"Railbird {venue} CA", days=CA_DAYS)
            made += ["ca.crt", "ca.key"]
        server = tls / "server.crt"
        # a server certificate lasts CERT_DAYS: every run of setup renews one that is near
        # its end (the same CA, so no board needs its CA again), the renewal command
        if not (
            server.exists()
            and set(names) <= san_names(server)
            and not expires_within(server, RENEW_DAYS)
        ):
            make_server_cert(tls, ca_crt, ca_key, names=tuple(names), days=CERT_DAYS)
            made += ["server.crt", "server.key"]
    except BrokerError as e:
        raise SetupError(str(e)) from None
    for leftover in ("server.csr", "server.ext"):
        (tls / leftover).unlink(missing_ok=True)
    (tls / "nodes").mkdir(exist_ok=True)
    for node in nodes:
        if not (tls / "nodes" / f"{node}.crt").exists():
            _node_cert(tls, node)
            made += [f"nodes/{node}.crt", f"nodes/{node}.key"]
    return made


def what(name: str) -> str:
    """What a file `ensure` made is, for setup's report."""
    stem = Path(name).stem
    whose = {"ca": "the local CA's", "server": "the broker's"}.get(stem, f"node {stem}'s")
    return f"{whose} TLS {'key' if name.endswith('.key') else 'certificate'}"


def _node_cert(tls: Path, node: str) -> None:
    d = tls / "nodes"
    ext = d / f"{node}.ext"
    ext.write_text(
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=clientAuth\nsubjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
    )
    key, csr = f"{node}.key", f"{node}.csr"
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    try:
        _openssl("req", *ec, "-keyout", key, "-out", csr, "-subj", f"/CN={node}", cwd=d)
        (d / key).chmod(0o600)
        _openssl(
            "x509",
            "-req",
            "-in",
            csr,
            "-CA",
            str(tls / "ca.crt"),
            "-CAkey",
            str(tls / "ca.key"),
            "-CAcreateserial",
            "-out",
            f"{node}.crt",
            "-days",
            str(CERT_DAYS),
            "-extfile",
            ext.name,
            cwd=d,
        )
    finally:
        ext.unlink(missing_ok=True)
        (d / csr).unlink(missing_ok=True)
