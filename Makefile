# anyurl: `make demo` and `make test` set up everything on a fresh Debian machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: all deps venv test test-containers unit integration integration-uvloop integration-h2 lint demo bench clean

all: test

deps:
	bash fixtures/install-debian.sh

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,dev,http3]'
	touch $(STAMP)

venv: $(STAMP)

lint: venv
	$(BIN)/ruff check src tests fixtures bench
	$(BIN)/mypy src

test: deps venv lint
	$(BIN)/python -m pytest -q
	$(MAKE) integration-uvloop
	$(MAKE) integration-h2

# the http tests once more against nginx's https listener, where anyurl speaks HTTP/2 (with jh2's
# compiled HPACK); then the HTTP/2 tests on pure-Python h2, the fallback where jh2 has no wheel
integration-h2: deps venv
	ANYURL_HTTP_TESTS=h2 $(BIN)/python -m pytest -q tests/integration/test_http.py
	ANYURL_H2_LIBRARY=h2 $(BIN)/python -m pytest -q tests/integration/test_http2.py tests/hostile/test_hostile_http2.py \
		tests/unit/handlers/test_http2_writes.py tests/unit/handlers/test_http2_imports.py tests/unit/handlers/test_http2_codec.py

# The integration suite once more on uvloop (`pip install anyurl[fast]`), long transfers left out.
integration-uvloop: deps venv
	ANYURL_LOOP=uvloop $(BIN)/python -m pytest -q -m "not slow" tests/integration tests/hostile

# the integration suite against the servers as containers (Docker, else podman): fixtures/containers.sh
test-containers: venv
	bash fixtures/containers.sh test

unit: venv
	$(BIN)/python -m pytest -q tests/unit

integration: deps venv
	$(BIN)/python -m pytest -q tests/integration

demo: deps venv
	$(BIN)/python -m fixtures.demo

# the bench runs anyurl from its own venv (bench/.venv), installed as a wheel with bytecode;
# BENCH_ARGS: groups and flags for bench.run, e.g. `make bench BENCH_ARGS="http ftp --quick"`
bench: deps
	$(PY) bench/make_venv.py
	bench/.venv/bin/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) bench/.venv build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
