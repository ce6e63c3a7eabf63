# Two entry points (see README.md): `make demo` runs the main job on the bundled tau-bench
# example; `make test` runs lint, type-check and the whole test suite. Both build their own
# virtual environment in .venv first: the demo installs only the core (its wheels, seconds),
# the tests every framework they test against.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core

.PHONY: demo test test-fast docs lint typecheck venv clean fuzz sdk-traces host-exports

venv: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh scripts/constraints.txt
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh
	touch $(STAMP)

$(CORE_STAMP): pyproject.toml scripts/install.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh core
	touch $(CORE_STAMP)

demo: $(CORE_STAMP)
	$(BIN)/trajcheck eval examples/tau_bench_airline/gpt-4o-airline.json --md demo-scorecard.md \
		--html demo-report.html

lint: $(STAMP)
	$(BIN)/ruff check core adapters promptfoo_provider tests bench examples

typecheck: $(STAMP)
	$(BIN)/mypy core

# The two files that run the promptfoo CLI go in a second, one-process pass: inside the 2-worker
# run (stop 32 and three clean-clone runs) promptfoo's trajectory:* assertions found no spans on
# a run whose provider had posted them with HTTP 200; alone they never failed.
PROMPTFOO_CLI_TESTS = tests/test_promptfoo_cli.py tests/test_promptfoo_hosts.py

test: lint typecheck docs
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=30 $(addprefix --ignore=,$(PROMPTFOO_CLI_TESTS))
	$(BIN)/python -m pytest -q --durations=10 $(PROMPTFOO_CLI_TESTS)

# The core's tests only (no host, engine, browser, SDK or slow tests; tests/conftest.py has
# the tiers): the quick loop while changing the core, on two workers as `make test`.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --core-only

# The docs site (mkdocs-material, API pages by mkdocstrings), every warning an error.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict -q

# The long run of tests/test_fuzz.py: 10,000 mutated traces of every format and 2,000 mutated
# dataset rows (random examples; the suite runs a fixed few hundred). Result in README.
fuzz: $(STAMP)
	TRAJCHECK_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz.py

# The host exports tests/test_host_exports.py reads (DeepEval test run, RAGAS dataset export,
# Inspect AI log), produced offline by each host's own evaluate/eval; CI reads the committed files.
host-exports: $(STAMP)
	$(BIN)/python scripts/host_exports.py

clean:
	rm -rf $(VENV) .cache

# Regenerate the traces real agent SDKs write for the scripted scenario (tests/data/sdk_traces,
# scripts/sdk_traces/): each SDK in its own pinned venv under .sdk-venvs. CI only reads them.
sdk-traces:
	bash scripts/sdk_traces/run.sh
