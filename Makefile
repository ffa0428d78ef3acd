# The two commands of the README: `make demo` (the main job on the bundled sample data) and
# `make test`. Each installs what it needs on a fresh Debian machine: system packages with
# apt-get (as root), Python packages into .venv.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
VENV ?= .venv
PY := $(VENV)/bin/python
# pip's notes about this machine's local indexes are noise, not errors
PIPQUIET := grep -v -e 'is ignored: it is neither' -e '^$$' || true
APT_PACKAGES := perl libxml-dom-perl wordnet-base wordnet-sense-index chromium fonts-dejavu-core
STAMP := $(VENV)/.installed

.PHONY: install system test bench demo run clean

install: $(STAMP)

system:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

NATIVE_SRC := setup.py $(wildcard src/textgen_metrics/_native/*.cpp src/textgen_metrics/_native/*.hpp)

# the editable install also builds the compiled core in place (src/textgen_metrics/_native)
$(STAMP): setup.cfg pyproject.toml $(NATIVE_SRC) | system
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip wheel setuptools 2>&1 | { $(PIPQUIET); }
	$(PY) -m pip install -q -e '.[test]' 2>&1 | { $(PIPQUIET); }
	touch $@

test: install system
	$(PY) -m pytest -q

bench: install system
	$(PY) benchmarks/run.py

demo: install system
	$(PY) -m textgen_metrics score data/sample_summaries.jsonl --metrics rouge,bleu,google_bleu,meteor,bertscore \
	    --option rouge.use_stemmer=true --out reports/sample_report.json --html reports/sample_report.html

run: demo

clean:
	rm -rf $(VENV) reports build *.egg-info src/*.egg-info src/textgen_metrics/_native/*.so
