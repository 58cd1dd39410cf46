"""The sensor node firmware in the MicroPython/CPython common subset: the application (node),
its MQTT client, the sensing path, buffers and the watchdog supervisor. May import rbproto
and MicroPython's standard modules; never machine, network or esp32 (only hw/ does) and
never the host's railbird."""
