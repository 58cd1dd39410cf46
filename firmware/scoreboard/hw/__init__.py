"""Scoreboard hardware layer: `esp32.RealHW` drives the real UART and MAX7219 chain
(imports machine: device only); `sim.SimHW` runs the same board logic on a pty under
CPython. Same convention as the sensor node's `rbnode/hw/` package: the only place that may
import machine; beyond it, only MicroPython's standard modules and the scoreboard's
max7219 and segfont."""
