"""`railbird node provision` and `make flash`: a sensor board gets the firmware and the node
config that `railbird setup` wrote for it, over USB with mpremote (docs/install.md, step 4).
May import `railbird.install` (password hashes) and `railbird.hardware` (pin maps), never the
daemon or the outputs; only `railbird.commands.node` imports it.

Modules: `nodeconf` (the node's config from the installation, checked against the host
config and the broker's password file, so the host accepts the board), `source` (where the
firmware sources are: the checkout, else the copy pip installed under share/railbird; the
build tools/build_firmware.py loaded from there), `board` (a build onto a board with
mpremote, every file read back; also `python -m railbird.provision.board` for
tools/flash.sh), `improv` (Improv Wi-Fi over serial: `railbird node wifi`).
"""
