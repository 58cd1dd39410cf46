"""Scoreboard node entry point on the ESP32: poll the UART, redraw, feed the watchdog."""

import time

from machine import WDT

from board import Board
from hw.esp32 import RealHW


def run():
    board = Board(RealHW())
    wdt = WDT(timeout=5000)
    while True:
        board.poll()
        wdt.feed()
        time.sleep_ms(5)


run()
