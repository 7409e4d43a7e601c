# Two entry points for a fresh machine with python3, bash and make:
#   make demo   - install into .venv and run the demo kernels through check, prove and run
#   make test   - install into .venv with test extras and run lint, types and the whole test suite
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench bench-distributed clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
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
	@echo "== the game-world host: granted, denied at install, starved mid-run"
	$(BIN)/python examples/game_world_demo.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	PYTHON=$(BIN)/python bash tools/typecheck.sh

pytest: $(STAMP)
	$(BIN)/python -m pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m pytest tests/benchmarks --benchmark-enable --benchmark-only --benchmark-columns=min,median,mean,rounds

# events/s of a predicate on a LocalCluster of 1 and 2 workers next to one process (200k records by
# default; DOTBOXD_DIST_RECORDS=10000000 for the 10M run)
bench-distributed: $(STAMP)
	$(BIN)/python -m pytest tests/benchmarks/test_bench_distributed.py -p no:logging --benchmark-enable --benchmark-only --benchmark-columns=min,rounds -s --benchmark-json=$(VENV)/bench-distributed.json
	$(BIN)/python -c 'import json; [print(b["name"], b["extra_info"]) for b in json.load(open("$(VENV)/bench-distributed.json"))["benchmarks"]]'

clean:
	rm -rf $(VENV) .typecheck .pytest_cache .mypy_cache .ruff_cache .hypothesis .benchmarks
