# Two commands set everything up: `make test` and `make demo`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
# pytest-xdist workers, each with its own local[2] SparkSession (two suit the 2-core CI machine)
TEST_WORKERS ?= 2

.PHONY: test demo lint check-java install clean bench

check-java:
	@command -v java >/dev/null 2>&1 || { echo "replicaflow needs Java 17+ for Spark: install it with 'apt-get install openjdk-17-jre-headless' (Debian/Ubuntu) or 'brew install openjdk@17' (macOS)."; exit 1; }
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1); \
	 [ -n "$$v" ] && [ "$$v" -ge 17 ] || { echo "replicaflow needs Java 17+ for Spark (found '$$v'): install openjdk-17 and put it first on PATH."; exit 1; }

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# the class archive of this Java and these Spark jars (`replicaflow setup`, docs/pipeline.md): under a minute, once
install: check-java $(STAMP)
	$(BIN)/replicaflow setup --if-missing

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo

test: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=15

demo: install
	$(BIN)/replicaflow demo

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_sim.py
	$(BIN)/python benchmarks/bench_pipeline.py

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache .import_linter_cache
