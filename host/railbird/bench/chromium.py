"""A headless Chromium driver (Debian chromium + chromium-driver), the one launch the screen
benchmark and the display tests (tests/harness/browser.py) share: the same flags, so a page
measured in `make bench` is the page the tests drive."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
PHONE = (390, 844)  # the phone width the referee app and table page are held to
TV = (1920, 1080)
FLAGS = (
    "--headless=new",
    "--no-sandbox",  # the tests and benches run as root in a container
    "--disable-gpu",
    "--disable-dev-shm-usage",  # a small /dev/shm in containers crashes the renderer
    "--no-first-run",
    # nothing but the page under test on the network, and no background CPU
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def launch(profile_dir: Path, size: tuple[int, int]):
    """A Chromium driver with its own profile and a window of `size` (the caller quits it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile_dir}", f"--window-size={size[0]},{size[1]}"):
        opts.add_argument(flag)
    return webdriver.Chrome(options=opts, service=Service(DRIVER))
