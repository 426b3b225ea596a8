# anyurl: `make demo` and `make test` set up everything on a fresh Debian machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: all deps venv test unit integration lint demo bench clean

all: test

deps:
	bash fixtures/install-debian.sh

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: venv
	$(BIN)/ruff check src tests fixtures bench
	$(BIN)/mypy src

test: deps venv lint
	$(BIN)/python -m pytest -q

unit: venv
	$(BIN)/python -m pytest -q tests/unit

integration: deps venv
	$(BIN)/python -m pytest -q tests/integration

demo: deps venv
	$(BIN)/python -m fixtures.demo

bench: deps venv
	$(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
