# phalanx developer entry points. Every target creates the virtual environment it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test
DEMO_DIR ?= out/demo

.PHONY: install demo test test-long bench scaling clean

install: $(VENV)/.installed-$(EXTRAS)

$(VENV)/.installed-$(EXTRAS): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

# A real scheduling run: 2,000 generated nodes (a quarter of them 8-GPU), 10,000 pending pods of a GPU mix.
demo: install
	$(VENV)/bin/phalanx generate --out $(DEMO_DIR) --nodes 2000 --pods 10000 --mix gpu --seed 7 --force
	$(VENV)/bin/phalanx schedule --cluster $(DEMO_DIR)

# Tests in parallel, one worker per core (pytest-xdist; idle workers steal queued tests).
test: install
	$(PY) -m pytest -n auto --dist worksteal --durations=15 tests

# The large property-test profile (>= 1,000 random clusters per plugin).
test-long: install
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -n auto --dist worksteal tests

bench: install
	$(PY) -m pytest bench --benchmark-only --benchmark-columns=min,mean,rounds -s

scaling: install           # us per pod against nodes, per mix, numpy and JAX-CPU (bench/scaling.{json,md,png})
	$(PY) bench/scaling.py --out bench/scaling

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis .benchmarks
