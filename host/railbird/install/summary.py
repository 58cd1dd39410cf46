"""What `railbird setup` prints: what it wrote or kept, where each secret is (never the secret
itself: terminals and logs keep what they show) and what to do next."""

from __future__ import annotations

import textwrap

from railbird.tableorder import natural_sorted

from . import units
from .apply import Report
from .brokerconf import ANY, LOOPBACK
from .layout import SERVICE_USER
from .portholder import Holder
from .system import ADD_USER, DISTRIBUTION_UNIT, INSTALL_MOSQUITTO

PLAINTEXT_WARNING = (
    "WARNING: MQTT WITHOUT TLS. Every board's broker password, every event and every "
    "command crosses the venue network in clear: anyone on that Wi-Fi can read them, log in "
    "as a board and pose as the broker. Turn TLS on with `railbird setup --tls`, then "
    "provision every board again (docs/install.md, 'TLS')."
)
_BANNER = "!" * 78


def _web_address(r: Report) -> str:
    web = r.host.get("outputs", {}).get("web") or {}
    host = web.get("host", ANY)
    return r.choices.get("broker_address", "HOST") if host in (ANY, "") else host


def _security(r: Report) -> list[str]:
    """What the network sees (issue 23, defect 8): always said, whatever was chosen."""
    c, L = r.choices, r.layout
    if "listen_address" not in c:  # a report without setup's choices (none to state)
        return []
    listen = c["listen_address"]
    where = "every interface (0.0.0.0)" if listen == ANY else listen
    if c.get("tls"):
        mqtt = (
            f"  MQTT: TLS on {where} port {c['tls_port']}, the broker's certificate from the "
            f"local CA {L.tls / 'ca.crt'} (provisioning puts it on every board); plain MQTT "
            f"on {LOOPBACK} port {c['broker_port']} only, for this machine's own clients"
        )
    else:
        plain = where if listen in (ANY, LOOPBACK) else f"{LOOPBACK} and {listen}"
        mqtt = f"  MQTT: PLAIN, NO TLS (--no-tls), on {plain} port {c['broker_port']}"
    out = [mqtt]
    web = r.host.get("outputs", {}).get("web")
    if web is not None:
        host = web.get("host", ANY)
        at = "every interface (0.0.0.0)" if host in (ANY, "") else host
        out.append(
            f"  Web server: HTTP, not HTTPS, on {at} port {web.get('port', 8080)}: the referee "
            "PIN and the sign-in cookie cross the venue Wi-Fi unencrypted (HTTPS through a "
            "reverse proxy with the local CA: docs/install.md, 'HTTPS for the web pages')"
        )
    if listen == ANY and not c.get("docker"):
        out.append(
            "  Listening on every interface: give --listen-address with the venue "
            "interface's address to serve only the venue network"
        )
    return out


def _files(r: Report) -> list[str]:
    shown = [(s, p, w) for s, p, w in r.files if s != "unchanged"]
    width = max((len(str(p)) for _s, p, _w in shown), default=0)
    out = [f"  {s:<8} {p!s:<{width}}  {what}" for s, p, what in shown]
    same = len(r.files) - len(shown)
    if same:
        out.append(f"  unchanged: {same} file{'s' if same != 1 else ''}")
    return out


def _secrets(r: Report) -> list[str]:
    L = r.layout
    rows = [
        (L.secrets, "every secret: the broker logins, the referee PIN, the Wi-Fi password"),
        (
            L.host_toml,
            "the host's broker password ([broker] password), the referee PIN (referee_token)",
        ),
        (L.nodes / "<node>.json", "each node's broker password and the Wi-Fi password"),
        (L.passwd, "the broker's password hashes (one line per login)"),
    ]
    if r.choices.get("tls"):
        rows += [
            (L.tls / "ca.key", "the local CA's key: it signs new nodes' certificates"),
            (L.tls / "server.key", "the broker's TLS key"),
            (L.tls / "nodes" / "<node>.key", "each node's TLS client key"),
        ]
    width = max(len(str(p)) for p, _ in rows)
    out = [f"  {p!s:<{width}}  {what}" for p, what in rows]
    new = ", ".join(r.new_secrets) or "none"
    out.append(f"  Every one is a 0600 file. New this run: {new}.")
    if r.kept_secrets:
        out.append(f"  Kept as they were: {len(r.kept_secrets)} ({', '.join(r.kept_secrets)}).")
    if r.other_logins:
        out.append("  Kept in the password file, not made by setup: " + ", ".join(r.other_logins))
    return out


def _taken(h: Holder, system: bool) -> str:
    line = f"port {h.port} is taken by {h.describe()}; the broker cannot listen beside it. "
    if h.unit == DISTRIBUTION_UNIT:
        line += (
            "It is the distribution's own mosquitto: stop it with "
            f"`{'sudo ' if system else ''}systemctl disable --now mosquitto` "
            "(or run setup again with --stop-other-mosquitto), or "
        )
    else:
        line += "Stop it, or "
    return line + (
        "give the broker another port: railbird setup --broker-port N (the boards then "
        "need the new port: provision them again)"
    )


def _next(r: Report, first: bool, mosquitto: bool, user: bool, taken: list[Holder]) -> list[str]:
    L, c = r.layout, r.choices
    host, venue = r.host, r.host["venue"]
    steps = [_taken(h, L.system) for h in taken]
    if c.get("docker"):
        steps.append(
            "start both containers from the repository: docker compose up -d "
            "(docs/install.md, 'Docker')"
        )
    elif not L.system:
        steps.append(
            f"this installation lives under {L.root}: try it with "
            f"`mosquitto -c {L.mosquitto_conf}` and "
            f"`railbird run --config {L.host_toml}`; for the real one run setup as root "
            "without --root"
        )
    else:
        if not mosquitto:
            steps.append(f"install mosquitto: {INSTALL_MOSQUITTO}")
        if not user:
            steps.append(f"add the service user: {ADD_USER}")
        if first:
            steps.append(
                "start the services: "
                "systemctl daemon-reload && systemctl enable --now railbird-broker railbird"
            )
        else:
            if r.changed(L.mosquitto_conf):
                # mosquitto keeps its listeners on a reload (SIGHUP rereads logins and ACL
                # only): a new port or TLS listener needs a restart
                steps.append(
                    "restart the broker for its new listeners, logins and ACL: "
                    "systemctl restart railbird-broker"
                )
            elif any(r.changed(p) for p in (L.passwd, L.acl)):
                steps.append(
                    "let the broker reread its logins and ACL: systemctl reload railbird-broker"
                )
            if r.changed(L.host_toml):
                steps.append("restart the host for its new tables: systemctl restart railbird")
    nodes = natural_sorted(n for t in host["tables"].values() for n in t.get("nodes", []))
    if r.boards_changed:
        steps.append(_boards_changed_step(r))
    if nodes:
        steps.append(_provision_step(r, nodes))
    web = host.get("outputs", {}).get("web")
    if web is not None:
        table = natural_sorted(host["tables"])[0]
        addr = _web_address(r)
        steps.append(
            f"scoreboard: http://{addr}:{web.get('port', 8080)}/v/{venue}/ ; referee app "
            f"per table: http://{addr}:{web.get('port', 8080)}/v/{venue}/t/{table}/referee "
            f"(the PIN is [referee] pin in {L.secrets})"
        )
    return [f"  {i}. {s}" for i, s in enumerate(steps, 1)]


def _boards_changed_step(r: Report) -> str:
    """The boards whose written config changed what they dial with: they still run the old
    settings, so they must get the new ones before they can reach the broker again."""
    rows = "; ".join(f"{n} ({', '.join(what)})" for n, what in sorted(r.boards_changed))
    if any("TLS" in what for _n, what in r.boards_changed):
        # the CA certificate is a file on the board: only provisioning puts it there
        turned = "on" if r.choices.get("tls") else "off"
        return (
            f"TLS is now {turned} and these boards still have the old settings: {rows}. "
            "Once the broker restarts they cannot reach it: provision each one again "
            "(below; it copies the CA), right after restarting the broker"
        )
    return (
        f"these boards' settings changed and the boards still have the old ones: {rows}. "
        "While a board still reaches the broker, send it the new broker address or Wi-Fi "
        "over MQTT with `railbird nodes net` (the `net` command: the board tries them and goes "
        "back to the old ones if they do not work); otherwise provision it again (below)"
    )


def _provision_step(r: Report, nodes: list[str]) -> str:
    c, L = r.choices, r.layout
    listed = ", ".join(nodes)
    if c.get("docker"):
        return (
            f"provision each node ({listed}) with the image, the board on this machine's USB: "
            "docker run --rm -it --user root --device /dev/ttyUSB0 -v "
            '"$PWD/railbird-data/etc:/etc/railbird:ro" railbird:local node provision '
            f"--node {nodes[0]} --port /dev/ttyUSB0 (docs/install.md, Docker)"
        )
    root = "" if L.system else f" --root {L.root}"
    # by its full path: `sudo railbird` is "not found" after the documented /opt/railbird
    # install, because sudo's secure_path leaves /opt/railbird/bin out
    sudo = "sudo " if L.system else ""
    return (
        f"provision each node ({listed}), the board on this machine's USB: "
        f"{sudo}{units.railbird_command()} node provision --node {nodes[0]} --port /dev/ttyUSB0"
        f"{root} (it reads {L.nodes}/<node>.json{', copies the CA' if c.get('tls') else ''} "
        "and checks the host will accept the board; MicroPython must be on the board first: "
        "hardware/installation.md)"
    )


def summary(
    r: Report, *, first: bool, mosquitto: bool, user: bool, taken: list[Holder] | None = None
) -> str:
    """`taken`: the processes on the broker's ports that are not its own broker (first
    among the next steps: nothing else works until the port is free)."""
    tables = ", ".join(
        f"{t} ({', '.join(tc.get('nodes', []))})" for t, tc in r.host["tables"].items()
    )
    plain = r.choices.get("tls") is False
    warning = [_BANNER, *_wrapped(PLAINTEXT_WARNING), _BANNER, ""] if plain else []
    lines = [
        *warning,
        f"Railbird installation in {r.layout.root}: venue {r.host['venue']}; tables {tables}",
        "",
        "Security:",
        *_security(r),
        "",
        "Files:",
        *_files(r),
        "",
        "Secrets:",
        *_secrets(r),
    ]
    if r.notes:
        lines += ["", "Notes:", *(f"  - {n}" for n in r.notes)]
    lines += ["", "Next:", *_next(r, first, mosquitto, user, taken or [])]
    if not user and r.layout.system and not r.choices.get("docker"):
        lines.append(f"  (the units run as {SERVICE_USER})")
    if plain:
        lines += ["", *warning[:-1]]  # at the end too: the last thing on the terminal
    return "\n".join(lines)


def _wrapped(text: str) -> list[str]:
    return [f"!! {line}" for line in textwrap.wrap(text, 74)]
