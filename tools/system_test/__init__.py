"""`make test-system` (issue 24): Railbird installed on a Debian 12 machine booted under
systemd-nspawn, exactly as docs/install.md says, with no network inside; the figures are
printed and belong in docs/install.md ("System test"). It imports the standard library only
(it runs under the host's python3, as root, without the venv), and nothing imports it;
`player` runs inside the machine and imports the installed railbird and its firmware copy.

Modules:
- `__main__`: the command line (`python3 -m tools.system_test`, as root), the run in order.
- `host`: the host's side: root check, `apt-get` of debootstrap and systemd-container.
- `rootfs`: the Debian root from `debootstrap`, cached by version, copied for each run.
- `wheelhouse`: every wheel the install and `make demo` need, made on the host beforehand.
- `machine`: boot the root with systemd-nspawn, run commands in it (nsenter), power off.
- `journey`: the install journey, step by step, each step a check.
- `player`: run inside the machine by its own Python: simulated boards play shots.
- `figures`: the measured times, printed and written into docs/install.md.
"""
