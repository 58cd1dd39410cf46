"""Screenshots of the demo for the README (`railbird demo --screenshots DIR`).

- `demo-web.png`: the web scoreboard's venue page, in headless Chromium;
- `demo-termboard.png`: the terminal board, rendered to HTML with its ANSI colours
  (`TermBoard.render_html`) and shot in the same headless Chromium;
- `demo-termboard.txt`: the terminal board as plain text.

Chromium: /usr/bin/chromium (Debian package `chromium`; `sudo apt-get install -y chromium`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path


def chromium() -> str:
    for c in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"),
              shutil.which("google-chrome")):
        if c and Path(c).exists():
            return c
    raise RuntimeError("chromium is not installed: sudo apt-get install -y chromium")


def shoot(url: str, png: Path, size=(1280, 800), wait_ms: int = 3000) -> Path:
    """Headless Chromium screenshot of `url` into `png`."""
    png = Path(png).resolve()
    with tempfile.TemporaryDirectory(prefix="railbird-chromium-") as prof:
        cmd = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--hide-scrollbars", f"--user-data-dir={prof}",
               f"--virtual-time-budget={wait_ms}", f"--screenshot={png}",
               f"--window-size={size[0]},{size[1]}", url]
        subprocess.run(cmd, capture_output=True, timeout=60, start_new_session=True)
    if not png.exists():
        raise RuntimeError(f"chromium made no screenshot of {url}")
    return png


def take(out: Path, web_url: str | None, venue: str, board, work: Path) -> list:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    made = []
    if web_url:
        made.append(shoot(f"{web_url}/v/{venue}/", out / "demo-web.png", (1280, 800)))
    text = board.render(100, color=False)
    (out / "demo-termboard.txt").write_text(text + "\n")
    made.append(out / "demo-termboard.txt")
    page = Path(work) / "termboard.html"
    page.write_text(board.render_html(100))
    lines = text.count("\n") + 1
    made.append(shoot(page.resolve().as_uri(), out / "demo-termboard.png",
                      (900, 40 + 19 * lines), wait_ms=500))
    return made
