"""`railbird setup` without a broker: what it refuses (before writing anything), what a
second run leaves alone, how it takes secrets back when secrets.toml is gone, the Docker
variant, and its two writers (mosquitto password hashes, TOML)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from railbird.broker import free_port
from railbird.install import mqttpass, tomlout
from railbird.install.hostconf import SetupError, parse_table

from .setuprun import setup

REPO = Path(__file__).resolve().parents[2]
FIRST = ["--venue", "club", "--table", "t1:10-ball:t1-a", "--table", "t2:14.1"]


def snapshot(root: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_second_identical_run_changes_nothing(tmp_path):
    inst, _ = setup(tmp_path / "root", *FIRST)
    before = snapshot(inst.root)
    _, out = setup(tmp_path / "root", *FIRST, port=inst.port)
    assert snapshot(inst.root) == before
    assert "created" not in out.stdout and "updated" not in out.stdout, out.stdout
    assert "New this run: none." in out.stdout


def test_next_steps_name_the_provisioning_command_that_works_under_sudo(tmp_path):
    """Issue 24, item 4: "Next" pointed at `CONFIG=... make flash` "from the repository"
    (which the documented install does not keep) and not at `railbird node provision`; and
    `sudo railbird` is "not found" (sudo's secure_path): the command is given by its path."""
    inst, out = setup(tmp_path / "root", *FIRST)
    step = next(ln for ln in out.stdout.splitlines() if "provision each node" in ln)
    assert "make flash" not in out.stdout
    exe = str(Path(sys.executable).parent / "railbird")
    assert f"{exe} node provision --node t1-a --port /dev/ttyUSB0 --root {inst.root}" in step
    # and it is a command that runs
    r = subprocess.run([exe, "node", "provision", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--node" in r.stdout, r.stderr
    _, out = setup(tmp_path / "docker", *FIRST, "--docker")
    assert "railbird:local node provision --node t1-a" in out.stdout


def test_the_users_edits_of_host_toml_are_kept(tmp_path):
    inst, _ = setup(tmp_path / "root", *FIRST)
    toml = inst.etc / "host.toml"
    edited = toml.read_text().replace('journal = "', 'stats_period_s = 10\njournal = "')
    toml.write_text(edited + "\n[outputs.feeds]\nenabled = false\n")
    setup(tmp_path / "root", "--table", "t3", port=inst.port)
    host = inst.host()
    assert host["stats_period_s"] == 10
    assert host["outputs"]["feeds"] == {"enabled": False}
    assert host["outputs"]["web"] == {"host": "127.0.0.1", "port": 8080}
    assert set(host["tables"]) == {"t1", "t2", "t3"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--venue", "club"], "no tables"),
        (["--table", "t1"], "no venue"),
        (["--venue", "Club Bar", "--table", "t1"], "venue"),
        (["--venue", "club", "--table", "t1:snooker"], "unknown game 'snooker'"),
        (["--venue", "club", "--table", "t1:14.1", "--race-to", "5"], "14.1 is played to points"),
        (["--venue", "club", "--table", "t1:9-ball:n1", "--table", "t2:9-ball:n1"], "n1"),
        (["--venue", "club", "--table", "t1:9-ball:n1:Ann"], "players"),
    ],
)
def test_refused_before_anything_is_written(tmp_path, args, says):
    root = tmp_path / "root"
    _, r = setup(root, *args, check=False)
    assert r.returncode == 2, r.stdout + r.stderr
    assert says in r.stderr, r.stderr
    assert not root.exists() or snapshot(root) == {}


def test_the_venue_is_not_changed_by_a_later_run(tmp_path):
    inst, _ = setup(tmp_path / "root", *FIRST)
    before = snapshot(inst.root)
    _, r = setup(tmp_path / "root", "--venue", "other", "--table", "t3", check=False)
    assert r.returncode == 2 and "this installation's venue is 'club'" in r.stderr, r.stderr
    assert snapshot(inst.root) == before


def test_without_secrets_toml_the_secrets_come_back_from_the_files_that_hold_them(tmp_path):
    inst, _ = setup(tmp_path / "root", *FIRST)
    old = inst.secrets()
    passwd = (inst.etc / "passwd").read_text().splitlines()
    (inst.etc / "secrets.toml").unlink()
    _, out = setup(tmp_path / "root", port=inst.port)
    new = inst.secrets()
    # the host's password, the PIN and the nodes' passwords are in host.toml and the node
    # configs; the referee and display logins exist only as hashes: those are made anew
    for user in ("railbird-host", "t1-a", "t2-node"):
        assert new["mqtt"][user] == old["mqtt"][user], user
    assert new["referee"] == old["referee"]
    for user in ("railbird-referee", "railbird-display"):
        assert new["mqtt"][user] != old["mqtt"][user]
        assert f"broker login {user}" in out.stdout.split("New this run:")[1].split("\n")[0]
    kept = [line for line in (inst.etc / "passwd").read_text().splitlines() if line in passwd]
    assert sorted(k.split(":")[0] for k in kept) == ["railbird-host", "t1-a", "t2-node"]


def test_docker_variant(tmp_path):
    inst, out = setup(tmp_path / "root", *FIRST, "--docker", "--tls", "--tls-port", "8883")
    host = inst.host()
    assert host["broker"]["host"] == "broker"  # the compose service name
    assert not (inst.root / "etc" / "systemd").exists()
    conf = (inst.etc / "mosquitto.conf").read_text()
    assert "\nuser " not in conf  # the compose file starts mosquitto as its user already
    # the containers' own interfaces: TLS on all of them (the host container dials it),
    # plain MQTT on the broker container's loopback only
    assert f"listener {inst.port} 127.0.0.1\n" in conf and "listener 8883 0.0.0.0\n" in conf
    assert (host["broker"]["port"], host["broker"]["tls"]) == (8883, True)
    assert "docker compose up -d" in out.stdout and "systemctl" not in out.stdout
    if shutil.which("openssl"):
        crt = str(inst.etc / "tls" / "server.crt")
        cmd = ["openssl", "x509", "-in", crt, "-noout", "-ext", "subjectAltName"]
        san = subprocess.run(cmd, capture_output=True, text=True).stdout
        assert "DNS:broker" in san, san
    # the compose file runs what setup wrote, where it wrote it
    compose = (REPO / "docker-compose.yml").read_text()
    for needed in ("/etc/railbird/mosquitto.conf", "/etc/railbird", "/var/lib/railbird"):
        assert needed in compose, needed
    assert "deploy/docker/Dockerfile" in compose
    # which address of the Docker host they are reached at is the compose file's
    assert '"${RAILBIRD_LISTEN:-0.0.0.0}:8883:8883"' in compose
    _, out = setup(tmp_path / "other", *FIRST, "--docker", "--listen-address", "127.0.0.1",
                   check=False)  # fmt: skip
    assert out.returncode == 2 and "RAILBIRD_LISTEN=127.0.0.1" in out.stderr, out.stderr


def test_password_hashes_are_mosquittos_format(tmp_path):
    """Both ways against mosquitto's own tool: a line `mosquitto_passwd` writes verifies
    with our check, and ours has its shape (the broker test logs in with ours)."""
    exe = shutil.which("mosquitto_passwd")
    if exe is None:
        pytest.fail("mosquitto_passwd is not installed (apt-get install -y mosquitto)")
    f = tmp_path / "passwd"
    f.write_text("")
    subprocess.run([exe, "-b", str(f), "ann", "s3cret pw"], check=True)
    theirs = mqttpass.parse(f.read_text())["ann"]
    assert mqttpass.verify("s3cret pw", theirs)
    assert not mqttpass.verify("s3cret pW", theirs)
    ours = mqttpass.hash_password("s3cret pw")
    assert ours.split("$")[:3] == theirs.split("$")[:3] == ["", "7", "101"]
    assert len(ours) == len(theirs)
    assert mqttpass.verify("s3cret pw", ours) and not mqttpass.verify("x", ours)
    assert not mqttpass.verify("x", "$6$garbage") and not mqttpass.verify("x", "$7$1$!!$zz")


def test_password_file_merge_keeps_lines_and_others():
    a = mqttpass.hash_password("pa")
    existing = {"admin": "$7$101$handmade", "a": a, "b": mqttpass.hash_password("old")}
    out, changed = mqttpass.merged(existing, {"a": "pa", "b": "new", "c": "pc"})
    assert out["a"] == a and out["admin"] == "$7$101$handmade"
    assert changed == ["b", "c"]
    assert mqttpass.verify("new", out["b"]) and mqttpass.verify("pc", out["c"])
    assert mqttpass.parse(mqttpass.render(out)) == out


def test_toml_round_trip():
    doc = {
        "venue": "club",
        "referee_token": '48"\\\n27',
        "subscribe": [],
        "broker": {"port": 8883, "tls": True, "password": "é ü"},
        "tables": {
            "t1": {"players": ["Ann", "Bob"], "nodes": ["t1-a"], "options": ["x"]},
            "t 2": {"nodes": [], "options": {"a": True, "b": 3}},
        },
        "outputs": {"web": {}, "serial": [{"table": "t1", "port": "/dev/a"}, {"table": "t2"}]},
        "default_table": {},
    }
    text = tomlout.dumps(doc, "a header\nof two lines")
    assert text.startswith("# a header\n# of two lines\n")
    assert tomllib.loads(text) == doc
    assert tomllib.loads(tomlout.dumps({})) == {}


def test_table_specs():
    s = parse_table("t1:14.1:t1-a, t1-b:Ann,Bob")
    assert (s.id, s.game, s.nodes, s.players) == ("t1", "14.1", ["t1-a", "t1-b"], ["Ann", "Bob"])
    s = parse_table("t1::t1-c")
    assert (s.game, s.nodes, s.players) == (None, ["t1-c"], None)
    assert parse_table("t2").nodes == []
    for bad in ("", ":10-ball", "t1:pool", "t1:9-ball:a:b,c:extra"):
        with pytest.raises(SetupError):
            parse_table(bad)


def test_a_home_directory_closed_to_the_service_user_is_found(tmp_path):
    """Issue 24, item 4: run from a clone in a home directory (Debian makes them 0700),
    setup wrote an ExecStart the `railbird` user cannot execute; the unit then failed at
    every start. Setup now refuses on a system install, naming the directory and the fix."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's own tmp_path is under a 0700 dir
    try:
        _closed_home(base)
    finally:
        shutil.rmtree(base)


def _closed_home(base: Path) -> None:
    from railbird.install.units import blocked_on_the_way

    home = base / "home" / "ann"
    exe = home / "railbird" / ".venv" / "bin" / "python"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    exe.chmod(0o755)
    for d in (base, base / "home"):
        d.chmod(0o755)
    home.chmod(0o700)
    owner = home.stat().st_uid
    stranger = 64000 if owner != 64000 else 64001
    assert blocked_on_the_way(exe, stranger, set()) == home
    assert blocked_on_the_way(exe, None, set()) == home  # a user not made yet
    assert blocked_on_the_way(exe, owner, set()) is None  # its owner passes
    assert blocked_on_the_way(exe, 0, set()) is None
    home.chmod(0o750)
    assert blocked_on_the_way(exe, stranger, {home.stat().st_gid}) is None  # by its group
    home.chmod(0o711)
    assert blocked_on_the_way(exe, stranger, set()) is None  # search is enough


def test_a_new_port_names_the_boards_whose_settings_changed(tmp_path):
    """Issue 24, item 5: a second setup with a new port rewrote every node config without
    saying that the boards still have the old one."""
    inst, out = setup(tmp_path / "root", *FIRST)
    assert "settings changed" not in out.stdout
    _, out = setup(tmp_path / "root", *FIRST, "--wifi-ssid", "club-5g", port=inst.port)
    step = next(ln for ln in out.stdout.splitlines() if "settings changed" in ln)
    assert "t1-a (Wi-Fi network)" in step and "`net` command" in step, step
    assert "provision it again" in step
    new_port = str(free_port())  # the TLS port: the one the boards dial (TLS, the default)
    args = [*FIRST, "--wifi-ssid", "club-5g", "--tls-port", new_port]
    _, out = setup(tmp_path / "root", *args, port=inst.port)
    step = next(ln for ln in out.stdout.splitlines() if "settings changed" in ln)
    assert "t1-a (broker port)" in step, step
    assert inst.node("t1-a")["broker"]["port"] == int(new_port)
    # and an identical run names none
    _, out = setup(tmp_path / "root", *args, port=inst.port)
    assert "settings changed" not in out.stdout


def test_the_boards_find_the_broker_by_name_and_fall_back_on_its_address(tmp_path):
    """Issue 24, item 5: a board dials the host's name first (a router's new lease does not
    strand it) and keeps the address to fall back on; a TLS certificate carries the name,
    so the board can verify the broker it reached by name. A later run keeps the name, and
    dropping it names the boards whose settings changed."""
    from railbird.install import pki

    args = [*FIRST, "--tls", "--broker-name", "pool-host.local"]
    inst, out = setup(tmp_path / "root", *args)
    b = inst.node("t1-a")["broker"]
    assert (b["host"], b["addr"]) == ("pool-host.local", "127.0.0.1"), b
    assert "as pool-host.local and fall back on 127.0.0.1" in out.stdout, out.stdout
    assert "pool-host.local" in pki.san_names(inst.etc / "tls" / "server.crt")

    _, again = setup(tmp_path / "root", *FIRST, port=inst.port)
    assert inst.node("t1-a")["broker"]["host"] == "pool-host.local"
    assert "settings changed" not in again.stdout, again.stdout

    _, dropped = setup(tmp_path / "root", *FIRST, "--broker-name", "", port=inst.port)
    b = inst.node("t1-a")["broker"]
    assert (b["host"], b["addr"]) == ("127.0.0.1", None), b
    assert "t1-a (broker address, broker fallback address)" in dropped.stdout, dropped.stdout


@pytest.mark.parametrize(
    ("hostname", "name"),
    [
        ("bar-pi", "bar-pi.local"),
        ("BarPi.lan", "barpi.local"),  # the first label, as mDNS announces it
        ("localhost", ""),
        ("pool_host", ""),  # not a DNS label: no resolver would find it
        ("-pi", ""),
    ],
)
def test_the_guessed_name_is_one_a_resolver_takes(hostname, name):
    from railbird.install.apply import guess_name

    assert guess_name(hostname) == name
