# The two commands a newcomer needs:
#   make run   - start the server on the embedded store (installs what it needs)
#   make test  - run every check and test (installs what it needs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run run-production test setup generate check-generated lint typecheck unit bench bench-production bench-context-window bench-appends bench-etcd services clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' -e 'clients/python[langgraph,openai-agents,mcp,adk]'
	touch $(STAMP)

setup: $(STAMP)

# --migrate-on-start: a developer's ./data from an earlier checkout is brought to
# the current schemas instead of refused (serve alone refuses an older schema).
run: $(STAMP)
	$(BIN)/statekeeper serve --migrate-on-start $(ARGS)

test: $(STAMP)
	scripts/test.sh

generate: $(STAMP)
	scripts/generate.sh

check-generated: $(STAMP)
	scripts/check-generated.sh

lint: $(STAMP)
	$(BIN)/ruff check server tests bench scripts
	$(BIN)/ruff format --check server tests bench scripts
	$(BIN)/buf lint

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench.sessions
	$(BIN)/python -m bench.blackboard
	$(BIN)/python -m bench.checkpoints
	$(BIN)/python -m bench.memory

# Production tier (PostgreSQL + Redis) vs raw asyncpg INSERT / Redis GET.
# Starts its own Redis and PostgreSQL unless STATEKEEPER_TEST_* point at some.
bench-production: $(STAMP)
	$(BIN)/python -m bench.production $(ARGS)

# Sessions at scale, both backends (own PostgreSQL + Redis unless
# STATEKEEPER_TEST_* point at some): GetContextWindow at 100/1k/10k messages
# and under load; AppendMessages at 1/8/64 clients vs raw asyncpg INSERT.
bench-context-window: $(STAMP)
	$(BIN)/python -m bench.context_window $(ARGS)

bench-appends: $(STAMP)
	$(BIN)/python -m bench.session_appends $(ARGS)

# The blackboard vs etcd (installed from Debian when missing), one Go driver:
# embedded and production (2 replicas, own PostgreSQL + Redis). ARGS go to
# the driver, e.g. ARGS="-rounds 5".
bench-etcd: $(STAMP)
	scripts/etcd.sh install
	$(BIN)/python -m bench.versus_etcd $(ARGS)

# The production tier of docker-compose.yml as local processes (PostgreSQL,
# Redis, migrate, two replicas on one port): `make run-production DIR=/tmp/sk`.
run-production: $(STAMP)
	scripts/run-production.sh $(or $(DIR),/tmp/statekeeper-production) -- $(ARGS)

# Redis + PostgreSQL on loopback for local runs: `make services DIR=/tmp/sk`,
# then `. /tmp/sk/env`; stop with `scripts/services.sh stop /tmp/sk`.
services:
	scripts/services.sh start $(or $(DIR),/tmp/statekeeper-services)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
