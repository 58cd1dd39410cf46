# Railbird sensor node: runs first at every reset, before main.py. Keep it minimal: a crash
# here would stop the board before the watchdog and the node start. Everything else is in
# main.py (see firmware/README.md).
import gc

gc.collect()
