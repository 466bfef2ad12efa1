# Two commands do everything on a fresh machine with only Python 3.11+:
#   make demo   set up .venv, then the main job (agents against the heuristics in the arena)
#   make test   set up .venv, then the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.deckgym-installed
DEMO_GAMES ?= 1000
OUT    ?= results

.PHONY: install demo test test-portable bench clean browser docs docs-serve lint

# torch first and pinned: the CPU build of 2.13.0 lies on this machine's disk; any other
# torch request (e.g. one pulled in by stable-baselines3 or ray[rllib]) would download a
# multi-GB CUDA build. `.[dev]` includes the `rllib` extra (Ray), so `make test` runs its tests.
# editable_mode=strict links the modules into build/__editable__.*, a static path mypy, pyright and
# IDEs read (the default editable install's import hook is invisible to them). A NEW module is
# seen from outside the checkout only after `make install` runs again (touch pyproject.toml).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet --config-settings editable_mode=strict -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	mkdir -p $(OUT)
	$(BIN)/python -m deckgym.evaluation.demo --games $(DEMO_GAMES) --out $(OUT)

# The browser tests (tests/test_browser.py) drive Debian's Chromium: installed here when absent,
# where we are root with apt; elsewhere those tests fail, saying how to install it.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium and chromium-driver for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
			|| echo "could not install chromium: tests/test_browser.py will fail"; \
	else echo "chromium/chromedriver missing and not root with apt: tests/test_browser.py will fail (apt-get install chromium chromium-driver)"; fi

# The linter and the type checker over the package (configured in pyproject.toml, with each
# exception's reason there); make test runs them first, so a new finding fails it.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy -p deckgym -p racko_env -p leastscore_env

test: $(STAMP) browser lint
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The network tests again under a second BLAS kernel and two torch threads: a float32 matrix
# product rounds differently on another kernel, and these tests must hold on any processor
# (tests/float_bounds.py). MKL_CBWR=COMPATIBLE is the kernel that changes torch's float32 sums
# on x86 (the ISA switches alone did not); the kernels are lowered, never raised.
PORTABLE_TESTS := tests/test_policy_file.py tests/test_torchrl_policy.py tests/test_replay.py
test-portable: $(STAMP)
	if [ "$$(uname -m)" = x86_64 ]; then core=SandyBridge; else core=ARMV8; fi; \
	OPENBLAS_CORETYPE=$$core MKL_CBWR=COMPATIBLE ATEN_CPU_CAPABILITY=default \
	DECKGYM_TEST_TORCH_THREADS=2 $(BIN)/python -m pytest -p no:cacheprovider $(PORTABLE_TESTS)

bench: $(STAMP)
	$(BIN)/python -m deckgym.evaluation.bench racko --json $(OUT)/bench_racko.json
	$(BIN)/python -m deckgym.evaluation.bench leastscore --json $(OUT)/bench_leastscore.json

# The documentation site (mkdocs.yml), built offline into site/; tables, the game animations and
# several pages are generated from the code at build time (docs/hooks/). A broken link, a missing
# page or a dead anchor fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:8000

# `make clean` removes what these targets made and nothing else: OUT may be a folder of the user's
# own (exported, or given on the command line), so it is never removed whole, only the files the
# demo and bench targets write there, then the folders if that left them empty.
OUT_GAMES := racko leastscore
clean:
	rm -rf $(VENV) site .pytest_cache .hypothesis
	rm -f $(foreach g,$(OUT_GAMES),"$(OUT)/$(g).json" "$(OUT)/$(g).png" "$(OUT)/bench_$(g).json")
	rm -f "$(OUT)"/replays/*-deal[0-9][0-9][0-9][0-9][0-9]-rot[0-9].jsonl
	-rmdir "$(OUT)/replays" 2>/dev/null; rmdir "$(OUT)" 2>/dev/null; true
