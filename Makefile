# Two commands do everything on a fresh machine with only Python 3.11+:
#   make demo   set up .venv, then the main job (agents against the heuristics in the arena)
#   make test   set up .venv, then the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.deckgym-installed
DEMO_GAMES ?= 1000
OUT    ?= results

.PHONY: install demo test bench clean

# torch first and pinned: the CPU build of 2.13.0 lies on this machine's disk; any other
# torch request (e.g. one pulled in by stable-baselines3 or ray[rllib]) would download a
# multi-GB CUDA build. `.[dev]` includes the `rllib` extra (Ray), so `make test` runs its tests.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	mkdir -p $(OUT)
	$(BIN)/python -m evaluation.demo --games $(DEMO_GAMES) --out $(OUT)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

bench: $(STAMP)
	$(BIN)/python -m benchmarks.bench racko --json $(OUT)/bench_racko.json
	$(BIN)/python -m benchmarks.bench leastscore --json $(OUT)/bench_leastscore.json

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .hypothesis
