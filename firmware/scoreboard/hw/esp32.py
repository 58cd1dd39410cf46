"""ESP32 hardware layer of the scoreboard node (MicroPython only).

Pins are those of hardware/scoreboard.md: SPI(2) SCK=GPIO18 MOSI=GPIO23, CS=GPIO27,
UART2 TX=GPIO17 RX=GPIO16 at 115200 8N1 to the host's USB-serial adapter.
"""

import os
import time

from machine import SPI, UART, Pin

from max7219 import Max7219Chain

PIN_SCK = 18
PIN_MOSI = 23
PIN_CS = 27
PIN_TX = 17
PIN_RX = 16
BAUD = 115200
MODULES = 4


class RealHW:
    def __init__(self, modules=MODULES):
        self.uart = UART(2, baudrate=BAUD, tx=PIN_TX, rx=PIN_RX, rxbuf=1024, timeout=0)
        spi = SPI(2, baudrate=5000000, polarity=0, phase=0,
                  sck=Pin(PIN_SCK), mosi=Pin(PIN_MOSI))
        self.display = Max7219Chain(spi, Pin(PIN_CS, Pin.OUT, value=1), modules, 8)

    def boot_id(self):
        b = os.urandom(2)
        return (b[0] << 8) | b[1]

    def ticks_ms(self):
        return time.ticks_ms()

    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)

    def ticks_add(self, a, n):
        return time.ticks_add(a, n)

    def read(self):
        if self.uart.any():
            return self.uart.read()
        return None

    def write(self, data):
        self.uart.write(data)
