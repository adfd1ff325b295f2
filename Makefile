# Pushgate. `make run` and `make test` set up everything they need on a fresh Debian 12 machine that
# has the Swift toolchain: Debian packages (scripts/install-deps.sh) and a Python venv for the
# gRPC interop tests (.venv).
SHELL := /bin/bash
SWIFT ?= swift
VENV := .venv
PY := $(VENV)/bin/python
ARGS ?=
FUZZ_SECONDS ?= 30

.PHONY: all deps venv build release run test unit interop proto check-proto check-deps check-links lint format clean help bench \
	bench-smoke fuzz console check-console \
	test-faults crash-loop test-asan test-tsan soak scale bench-scale fuzz-long

# The tests that need PostgreSQL get a private server (scripts/pg-test-server.sh: temporary data
# directory, free port, stopped afterwards) unless PUSHGATE_TEST_PG_URL already names one.
WITH_PG := scripts/pg-test-server.sh run --

all: build

help:
	@echo "make run          install deps, build (release), start the gateway on its defaults"
	@echo "make test         install deps, check generated code, check-deps, check-links, lint, unit and interop tests"
	@echo "make check-deps   Package.swift dependencies == imports; the module map (docs/architecture.md) == Package.swift"
	@echo "make check-links  every relative link and #anchor in README.md, *.md and docs/*.md resolves"
	@echo "make lint         swift format lint (.swift-format);  make format: rewrite the files in place"
	@echo "make proto        regenerate the protobuf code from proto/;  make console: re-embed console/ after editing it"
	@echo "make build        debug build;  make release: release build (cross-module and link-time optimized)"
	@echo "make bench        load benchmarks on a release build; writes BENCHMARKS.md (~30 min; a private PostgreSQL for its rows)"
	@echo "make fuzz         libFuzzer targets in Fuzz/, FUZZ_SECONDS (30) each"
	@echo "make fuzz-long    every target to FUZZ_RUNS (10,000,000) executions, at most FUZZ_LONG_SECONDS (1800) each"
	@echo "make test-faults  the fault suite's long form (the short form is part of make test)"
	@echo "make crash-loop   kill -9 the gateway during fan-outs and SendStreams, restart, reconcile"
	@echo "make test-asan    unit tests and interop under AddressSanitizer (own build dir)"
	@echo "make test-tsan    unit tests and interop under ThreadSanitizer (own build dir)"
	@echo "make soak         release build, steady load with faults, SOAK_SECONDS (600); RELIABILITY.md"
	@echo "make scale        kill-one-instance test at 100,000 subscribers, 3 instances on one PostgreSQL"
	@echo "make bench-scale  Publish with 1, 2, 3 instances on one PostgreSQL; 1M subscribers on SQLite and PostgreSQL"
	@echo "                  (TEN_MILLION=1: and 10M); BENCHMARKS.md sections"

deps:
	@scripts/install-deps.sh

venv: deps $(VENV)/.installed

$(VENV)/.installed: scripts/requirements.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
	touch $@

build: deps
	$(SWIFT) build

# Release builds are optimized across modules (Package.swift) and at link time: the delivery path
# crosses a dozen modules and the C shims (docs/development.md).
RELEASE_FLAGS := -c release --experimental-lto-mode=full

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

run: release
	.build/release/pushgate serve $(ARGS)

proto: venv
	PYTHON=$(PY) scripts/gen-proto.sh

check-proto: venv
	PYTHON=$(PY) scripts/check-proto.sh

# The operator's console (console/) is embedded in the binary as generated Swift: `make console`
# after editing it; make test checks the generated file is current and every module parses.
console:
	python3 scripts/gen-console.py

check-console: deps
	python3 scripts/gen-console.py --check
	for f in console/*.js; do node --check $$f || exit 1; done

# Every target's dependencies in Package.swift equal the modules its files import; every file uses what it imports.
check-deps: venv
	$(PY) scripts/check-deps.py
	$(PY) scripts/check-imports.py

# Every relative link and #anchor in the documentation resolves (Python's standard library only).
check-links:
	python3 scripts/check-links.py

# Serial: several suites wait on semaphores inside tests, which on a 2-core machine can starve the
# two cooperative threads that the timing-sensitive async suites (deadlines, PING) need.
unit: deps
	$(SWIFT) build --build-tests
	$(WITH_PG) $(SWIFT) test --skip-build --no-parallel

# The twelve slowest tests are listed at the end: make test must stay under 15 minutes on 2 cores.
interop: venv build
	PUSHGATE_BIN=$$($(SWIFT) build --show-bin-path)/pushgate $(WITH_PG) $(PY) -m pytest -q --durations=12 Tests/interop

# The committed .swift-format configuration, with the toolchain's swift-format; generated code
# (Sources/PushProto/Generated) is left out. `make format` rewrites the files in place.
SWIFT_FILES = $$(find Sources Tests Fuzz/Sources -name '*.swift' -not -path '*/Generated/*') Package.swift Fuzz/Package.swift

lint:
	$(SWIFT) format lint --strict --configuration .swift-format --parallel $(SWIFT_FILES)

format:
	$(SWIFT) format format --in-place --configuration .swift-format --parallel $(SWIFT_FILES)

test: check-proto check-console check-deps check-links lint unit interop

# Benchmarks (release build): h2load ceiling, Pushgate rows, aioapns peer; writes BENCHMARKS.md.
bench: release venv
	$(WITH_PG) scripts/bench.sh

# The multi-instance kill test in its long form: 100,000 subscribers, 3 instances (release build).
scale: release venv
	PUSHGATE_SCALE_SUBSCRIBERS=100000 PUSHGATE_BIN=.build/release/pushgate $(WITH_PG) \
		$(PY) -m pytest -q -s Tests/interop/test_multi_instance.py -k kill

# A 100,000-subscriber Publish on 1, 2, 3 instances sharing one PostgreSQL, and one Publish to 1M
# subscribers on SQLite and PostgreSQL (TEN_MILLION=1: and 10M on SQLite); each writes its own
# section of BENCHMARKS.md (release build).
bench-scale: release venv
	$(WITH_PG) $(PY) scripts/bench/scale.py
	TEN_MILLION=$(TEN_MILLION) $(WITH_PG) $(PY) scripts/bench/audience_scale.py

# A 3-second `pushgate bench` run against mock-apns and a 5-second one against mock-fcm (what the
# interop suite's test_bench_smoke.py also checks).
bench-smoke: release
	.build/release/pushgate bench --duration 3 --tokens-per-send 100
	.build/release/pushgate bench --provider fcm --duration 5 --tokens-per-send 100

# libFuzzer targets (Fuzz/, a separate package): each runs FUZZ_SECONDS on a copy of its corpus.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) SWIFT=$(SWIFT) scripts/fuzz.sh

# Off CI: every target to 10 million executions (or FUZZ_LONG_SECONDS each, whichever comes first);
# RELIABILITY.md records the counts of the last run.
FUZZ_RUNS ?= 10000000
FUZZ_LONG_SECONDS ?= 1800
fuzz-long: deps
	FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) SWIFT=$(SWIFT) scripts/fuzz.sh

# The fault suite's long form (FAULTS_LONG=1: 20,000-token batches, a 30 s provider outage).
test-faults: venv build
	rm -f .build/faults-figures.jsonl
	FAULTS_LONG=1 FAULTS_FIGURES=$(CURDIR)/.build/faults-figures.jsonl \
		PUSHGATE_BIN=$$($(SWIFT) build --show-bin-path)/pushgate $(PY) -m pytest -q Tests/interop/test_faults.py
	@echo "figures per fault: .build/faults-figures.jsonl"

# Kill -9 the gateway during Publish fan-outs and SendStream batches, restart it on the same store,
# and reconcile what the mock received (CRASH_ARGS, e.g. "--kills 10 --subscribers 20000").
CRASH_ARGS ?=
crash-loop: venv build
	PUSHGATE_BIN=$$($(SWIFT) build --show-bin-path)/pushgate $(PY) scripts/crash-loop.py $(CRASH_ARGS)

# Soak: release build, steady load with faults for SOAK_SECONDS (600); figures into RELIABILITY.md.
SOAK_SECONDS ?= 600
soak: release venv
	SOAK_SECONDS=$(SOAK_SECONDS) PUSHGATE_BIN=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/pushgate $(PY) scripts/soak.py

# Sanitizers (own build dirs .build-asan / .build-tsan): unit tests + interop; any report fails.
# Not part of make test: a sanitized build and run take far longer than CI's budget.
test-asan: deps venv
	SWIFT=$(SWIFT) PY=$(PY) scripts/sanitize.sh address

# test-tsan brings its own PostgreSQL (WITH_PG) so the PostgreSQL store's connection pool and the
# multi-instance tests run under the race detector too.
test-tsan: deps venv
	$(WITH_PG) env SWIFT=$(SWIFT) PY=$(PY) scripts/sanitize.sh thread

clean:
	rm -rf .build .build-asan .build-tsan $(VENV) Tests/interop/gen Fuzz/.build Fuzz/artifacts
