# phalanx developer entry points. Every target creates the virtual environment it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test
DEMO_DIR ?= out/demo

.PHONY: install demo test test-long bench scaling api-types api-types-check clean

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

# Tests in parallel, one worker per core, at most 8 (pytest-xdist; idle workers steal queued tests; each worker
# holds its own JAX, so a container that shows the host's cores must not start one per host core).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 8 ] && n=8; echo $$n)
test: install
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=15 tests

# The large property-test profile (>= 1,000 random clusters per plugin).
test-long: install
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal tests

bench: install
	$(PY) -m pytest bench --benchmark-only --benchmark-columns=min,mean,rounds -s

scaling: install           # us per pod against nodes, per mix, numpy and JAX-CPU, every node and adaptive sampling
	$(PY) bench/scaling.py --percentages 100,0 --out bench/scaling

# The Go type of every API field phalanx reads (phalanx/cluster_models/api_types.py), from upstream's OpenAPI:
#   make api-types SWAGGER=path/to/swagger.json REVISION='where it came from'
# api-types-check fails when the committed table is not what that swagger.json generates. The committed table is
# from release-1.36's swagger.json as kubernetes-client/python keeps it (commit ac0ee5091f0b, file
# kubernetes/swagger.json.unprocessed); every definition's fields and types there equal the v1.36.0 tag's.
REVISION ?= branch release-1.36 as of 2026-05-05 (kubernetes-client/python ac0ee5091f0b, kubernetes/swagger.json.unprocessed)
API_TYPES := phalanx/cluster_models/api_types.py
api-types: install
	$(PY) tools/gen_api_types.py $(SWAGGER) --revision '$(REVISION)' --out $(API_TYPES)

api-types-check: install
	$(PY) tools/gen_api_types.py $(SWAGGER) --revision '$(REVISION)' --check $(API_TYPES)

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis .benchmarks
