# Two entry points (see README.md): `make demo` runs the main job on the bundled tau-bench
# example; `make test` runs lint, type-check and the whole test suite. Both build their own
# virtual environment in .venv first: the demo installs only the core (four small packages,
# seconds), the tests every framework they test against.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core

.PHONY: demo test lint typecheck venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh
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

test: lint typecheck
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .cache
