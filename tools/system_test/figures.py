"""The system test's measured times: printed at the end, and with --write-docs put into
docs/install.md's "System test" section between its two marker lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path

BEGIN = "<!-- system-test figures: written by make test-system SYSTEM_TEST_ARGS=--write-docs -->"
END = "<!-- end of system-test figures -->"

CACHED = ("debootstrap_s", "wheelhouse_s")  # None there: made by an earlier run
LABELS = {
    "debootstrap_s": "debootstrap of the Debian 12 root (cached afterwards)",
    "wheelhouse_s": "the wheelhouse, made on the host (cached afterwards)",
    "copy_s": "a fresh copy of the cached root",
    "boot_s": "boot to `systemctl is-system-running`",
    "install_s": "clone, venv and `pip install` from the wheelhouse",
    "setup_s": "`railbird setup` for three tables (mosquitto installed by it)",
    "start_s": "`systemctl enable --now railbird-broker railbird` to the web answering",
    "kill_restart_s": "SIGKILLed host back (new process, web answering)",
    "reboot_s": "`systemctl reboot` to both services back (power off, boot again)",
    "upgrade_install_s": "upgrade: `git pull` and `pip install` of the newer build",
    "upgrade_restart_s": "upgrade: `systemctl restart railbird` to the web answering",
    "add_table_restart_s": "a table added: `systemctl restart railbird` to the web answering",
    "demo_s": "`make demo DEMO_SECONDS=20` from a fresh clone (venv included)",
    "total_s": "the whole run",
}


@dataclass
class Figures:
    debootstrap_s: float | None = None  # None: the cached root
    wheelhouse_s: float | None = None
    copy_s: float | None = None
    boot_s: float | None = None
    install_s: float | None = None
    setup_s: float | None = None
    start_s: float | None = None
    kill_restart_s: float | None = None
    reboot_s: float | None = None
    upgrade_install_s: float | None = None
    upgrade_restart_s: float | None = None
    add_table_restart_s: float | None = None
    demo_s: float | None = None
    total_s: float | None = None
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for f in fields(self):
            if f.name == "notes":
                continue
            value = getattr(self, f.name)
            if value is None:
                shown = "cached" if f.name in CACHED else "not reached"
            else:
                shown = f"{value:.1f} s"
            out.append(f"| {LABELS[f.name]} | {shown} |")
        return out

    def table(self) -> str:
        head = ["| step | time |", "|---|---|"]
        return "\n".join([*head, *self.lines(), *(f"\n{n}" for n in self.notes)])


def write_docs(doc: Path, figures: Figures, when: str) -> None:
    """Replace the figures between the markers in `doc` (the markers must be there)."""
    text = doc.read_text()
    block = f"{BEGIN}\n\nMeasured {when}:\n\n{figures.table()}\n\n{END}"
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{doc}: no system-test figure markers")
    doc.write_text(pattern.sub(lambda _m: block, text))
