"""Screenshots of the demo for the README (`railbird demo --screenshots DIR`).

- `demo-web.png`: the web scoreboard's venue page, in headless Chromium;
- `demo-termboard.png`: the terminal board, rendered to HTML with its ANSI colours
  (`TermBoard.render_html`) and shot in the same headless Chromium;
- `demo-termboard.txt`: the terminal board as plain text.

Chromium: /usr/bin/chromium (Debian package `chromium`; `sudo apt-get install -y chromium`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path


def chromium() -> str:
    for c in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        shutil.which("google-chrome"),
    ):
        if c and Path(c).exists():
            return c
    raise RuntimeError("chromium is not installed: sudo apt-get install -y chromium")


def shoot(url: str, png: Path, size=(1280, 800), wait_ms: int = 5000) -> Path:
    """Headless Chromium screenshot of `url` into `png`, taken `wait_ms` after loading
    (`--timeout`; a page with a live event stream never finishes loading, so
    `--virtual-time-budget` would wait for ever)."""
    png = Path(png).resolve()
    if png.exists():
        png.unlink()
    with tempfile.TemporaryDirectory(prefix="railbird-chromium-") as prof:
        cmd = [
            chromium(),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={prof}",
            f"--timeout={wait_ms}",
            f"--screenshot={png}",
            f"--window-size={size[0]},{size[1]}",
            url,
        ]
        p = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            p.wait(wait_ms / 1000 + 30)
        finally:  # chromium leaves helpers behind if it is not asked to go
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if not png.exists():
        raise RuntimeError(f"chromium made no screenshot of {url}")
    return png


def take(out: Path, web_url: str | None, venue: str, board, work: Path) -> list:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    made, errors = [], []
    if web_url:
        for url, name, size in (
            (f"{web_url}/v/{venue}/", "demo-web.png", (1280, 420)),
            (f"{web_url}/v/{venue}/t2/", "demo-web-table.png", (1280, 800)),
        ):
            try:
                made.append(shoot(url, out / name, size))
            except Exception as e:  # noqa: BLE001 - the others may still work
                errors.append(f"{name}: {e}")
    text = board.render(100, color=False)
    (out / "demo-termboard.txt").write_text(text + "\n")
    made.append(out / "demo-termboard.txt")
    page = Path(work) / "termboard.html"
    page.write_text(board.render_html(100))
    lines = text.count("\n") + 1
    try:
        made.append(
            shoot(
                page.resolve().as_uri(),
                out / "demo-termboard.png",
                (900, 40 + 19 * lines),
                wait_ms=500,
            )
        )
    except Exception as e:  # noqa: BLE001 - reported with the others below
        errors.append(f"demo-termboard.png: {e}")
    if errors:
        raise RuntimeError("; ".join(errors) + f" (made: {', '.join(map(str, made))})")
    return made
