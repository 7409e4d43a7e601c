# Two entry points for a fresh machine with python3, bash and make:
#   make demo   - install into .venv and run the demo kernels through check, prove and run
#   make test   - install into .venv with test extras and run lint, types and every quick test (the
#                 quick part of the security-boundary suite first, then the rest), in parallel
#                 (pytest-xdist); the target is 90 s on an idle 2-core machine
#   make test-slow - the slow tests CI also runs (after make test): the slow part of the
#                 security-boundary suite, a bounded fuzz run (<= 3 min), then the other slow tests
#   make fuzz   - long local coverage-guided fuzzing (FUZZ_SECONDS per harness, default 600)
#   make serve-demo - the game-world server (dotboxd serve) and its sample client, on loopback
#   make mutation - mutation testing of the validator and the file facade (report in reports/)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo serve-demo test test-slow lint typecheck pytest pytest-quick security-boundary security-slow pytest-slow fuzz-ci fuzz mutation prover-soundness bench bench-distributed clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The editable install puts build/__editable__.*/dotboxd (folder links) on sys.path; tools/packaging/
# explains why (mypy and IDEs follow it). A new subpackage means a pyproject.toml edit, hence a reinstall.
$(STAMP): pyproject.toml tools/packaging/dotboxd_backend.py | $(BIN)/python
	bash tools/os-deps.sh
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== check: loot-score (validate against the default, pure-only policy)"
	$(BIN)/dotboxd check examples/loot-score.json
	@echo "== prove: loot-score budgets (Z3), then a deliberately over-budget kernel (exit 1 expected: REFUTED)"
	$(BIN)/dotboxd prove examples/loot-score.json
	$(BIN)/dotboxd prove examples/over-budget.json || test $$? -eq 1
	@echo "== run: loot-score main(3, 4), metered on the reference interpreter"
	$(BIN)/dotboxd run examples/loot-score.json --entry main --args '[3, 4]'
	@echo "== run: config-reader reads config/settings.json through the file.read facade, inside the granted root"
	$(BIN)/python -c 'import json, os; print(json.dumps({"grants": [{"id": "file.read", "parameters": {"root": os.path.realpath("examples/config-root"), "maxBytesPerRun": "4096"}}], "allowRuntimeAsync": True}))' > $(VENV)/config-reader.policy.json
	$(BIN)/dotboxd check examples/config-reader.json --policy $(VENV)/config-reader.policy.json
	$(BIN)/dotboxd run examples/config-reader.json --policy $(VENV)/config-reader.policy.json
	@echo "== lower: the loot-score kernel written in restricted Python (parsed, never run), then run it"
	$(BIN)/dotboxd lower examples/kernels/loot_score.py --to text
	$(BIN)/dotboxd run examples/kernels/loot_score.py --entry main --args '[3, 4]'
	@echo "== the game-world host: granted, denied at install, starved mid-run"
	$(BIN)/python examples/game_world_demo.py

# Starts the sample server on DEMO_PORT, runs the sample client against it (installs an event kernel,
# receives filtered events, runs a pushdown, calls RPCs), then stops the server.
DEMO_PORT ?= 8765
serve-demo: $(STAMP)
	@$(BIN)/dotboxd serve --config examples/game_server/server.toml --port $(DEMO_PORT) & server=$$!; \
	trap 'kill $$server 2>/dev/null; wait $$server 2>/dev/null || true' EXIT; \
	for i in $$(seq 100); do curl -sf http://127.0.0.1:$(DEMO_PORT)/health >/dev/null && break; sleep 0.1; done; \
	$(BIN)/python examples/game_server/client.py --url http://127.0.0.1:$(DEMO_PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	PYTHON=$(BIN)/python bash tools/typecheck.sh

# pytest-xdist workers for the parallel steps (tests use tmp_path, port 0 and no shared files; the
# security-boundary steps run in parallel too); PYTEST_WORKERS=0 runs them in this process, e.g. to
# debug one failure.
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS) --dist worksteal

# Bytecode for the test runs, kept in .venv/pycache: every pytest-xdist worker imports and
# assertion-rewrites ~560 modules while collecting, and every CLI or worker subprocess imports the
# library again; with PYTHONDONTWRITEBYTECODE set (as on our shared machines) all of that was
# recompiled each time, about half of each worker's collection CPU. The prefix keeps the source tree
# free of __pycache__ folders, and make clean removes it with the rest of .venv.
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache $(BIN)/python -m pytest

# Every test, quick and slow, in one run.
pytest: $(STAMP)
	$(PYTEST) $(XDIST)

# The quick tests, in one run: every test not marked "slow", the security-boundary suite's quick part
# among them. One run because each pytest-xdist worker collects the whole tree (seconds of CPU), and
# the run still closes with the suite's own count, "security-boundary: N passed" (tests/conftest.py).
pytest-quick: $(STAMP)
	$(PYTEST) -m "not slow" $(XDIST)

# The tests the threat tables name (tests/conftest.py marks them): the whole suite, or its slow part
# as make test-slow's first step. Each closes with "security-boundary: N passed". Pytest's exit 5 (no
# test collected) is a failure here: an empty security suite must never pass.
security-boundary: $(STAMP)
	$(PYTEST) -m security_boundary $(XDIST)

security-slow: $(STAMP)
	$(PYTEST) -m "security_boundary and slow" $(XDIST)

# The other slow tests (marker "slow": tests/slow_tests.txt says which and why; the prover corpus
# and soundness runs, benchmarks, the corpus-wide worker agreement, load and soak runs, mypy over
# the install, and every test over about a second of CPU). pytest-quick, security-slow and
# pytest-slow together run each test exactly once.
pytest-slow: $(STAMP)
	$(PYTEST) -m "slow and not security_boundary" $(XDIST)

# Coverage-guided fuzzing (atheris) of the importer, text parser, validator, prover and both backends
# differentially, over the committed corpus in fuzz/; any finding fails the step (see fuzz/run.py).
FUZZ_SECONDS ?= 600
fuzz-ci: $(STAMP)
	$(BIN)/python -m fuzz.run --seconds 25 --budget 175

fuzz: $(STAMP)
	$(BIN)/python -m fuzz.run --seconds $(FUZZ_SECONDS) --work .fuzz-work

# Mutation testing (not part of make test): writes reports/mutation-results.json and reports/mutation.md.
MUTATION_BUDGET ?= 3000
mutation: $(STAMP)
	nice $(BIN)/python tools/mutation.py --budget $(MUTATION_BUDGET)
	$(BIN)/python tools/mutation_report.py

# The prover's soundness run over 10,000 generated programs (not part of make test; CI runs the small
# profile in tests/prover/test_soundness_run.py). Prints the counts; exits 1 on any violation.
SOUNDNESS_GENERATED ?= 5000
SOUNDNESS_LOOPS ?= 5000
prover-soundness: $(STAMP)
	nice $(BIN)/python -m tests.prover.soundness_run --generated $(SOUNDNESS_GENERATED) --loops $(SOUNDNESS_LOOPS) --json reports/prover-soundness.json

# The quick answer: lint, then the types and every quick test (security-boundary ones included) side
# by side. mypy is one process: run before the tests it left the second core idle for its whole run
# (seconds with a warm .mypy_cache, ~25 s of CPU cold, as in a fresh clone or CI). No output sync, so
# pytest's progress still streams; mypy prints its verdict (or its errors) when it finishes, and
# either failing fails make test.
test: lint
	@$(MAKE) --no-print-directory -j2 typecheck pytest-quick

# What CI runs after make test (.ci/run), so that nothing is dropped: the slow security tests, the
# bounded fuzz run, then the other slow tests.
test-slow: security-slow fuzz-ci pytest-slow

bench: $(STAMP)
	$(BIN)/python -m pytest tests/benchmarks --benchmark-enable --benchmark-only --benchmark-columns=min,median,mean,rounds

# events/s of a predicate on a LocalCluster of 1 and 2 workers next to one process (200k records by
# default; DOTBOXD_DIST_RECORDS=10000000 for the 10M run)
bench-distributed: $(STAMP)
	$(BIN)/python -m pytest tests/benchmarks/test_bench_distributed.py -p no:logging --benchmark-enable --benchmark-only --benchmark-columns=min,rounds -s --benchmark-json=$(VENV)/bench-distributed.json
	$(BIN)/python -c 'import json; [print(b["name"], b["extra_info"]) for b in json.load(open("$(VENV)/bench-distributed.json"))["benchmarks"]]'

clean:
	rm -rf $(VENV) build .typecheck .pytest_cache .mypy_cache .ruff_cache .hypothesis .benchmarks
