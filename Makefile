# Cowboy — build, test and demo entry points. `make demo` and `make test`
# work from a clean clone; both run `make deps` first.
SHELL := /bin/bash
GO ?= go
BIN := bin
GOFLAGS ?= -buildvcs=false
export GOFLAGS
LDFLAGS := -X github.com/cowboy-foundation/cowboy/internal/version.Version=$(shell git describe --tags --always --dirty 2>/dev/null || echo dev)


.PHONY: all deps build test test-python test-short demo bench soak fuzz lint clean

all: build

# deps installs what the build, the tests and the demo need beyond Go:
# Debian packages (fuse3 for FUSE mounts, psmisc, nodejs/npm), and npm test
# peers pinned by package.json (the reference MCP server, into node_modules/).
deps:
	@./scripts/deps.sh

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

# test runs the Go suite through gotestsum (installed by make deps). A test
# that fails is rerun on its own, up to twice; it passes only if a rerun
# passes, and every rerun is listed at the end and in test-artifacts/rerun.txt,
# so flaky tests stay visible. More than 5 failures means a real breakage: no
# reruns then.
GOTESTSUM := $(BIN)/tools/gotestsum
test: deps
	$(GO) vet ./...
	@mkdir -p test-artifacts && rm -f test-artifacts/rerun.txt
	$(GOTESTSUM) --format standard-quiet --rerun-fails=2 --rerun-fails-max-failures=5 \
	  --rerun-fails-report=test-artifacts/rerun.txt --packages=./... -- -timeout 15m
	@if [ -s test-artifacts/rerun.txt ]; then echo "test: FLAKY — these failed, then passed on a rerun:"; cat test-artifacts/rerun.txt; fi
	$(MAKE) test-python

# test-python runs the cowboy-py tests (sdk/python/tests) under pytest against
# real cowboyd/cowboy/cowboy-relay binaries. The SDK is pure standard library,
# so any CPython >= 3.9 with pytest will do: python3 on PATH if it has pytest,
# else Debian's /usr/bin/python3 with python3-pytest (installed by make deps).
# mypy (Debian's, make deps) checks the type hints for Python 3.9 first.
# pytest exits 5 when it collects no tests: that is success only when the
# suite has no test files; with test files present it means they were lost.
PYTEST_PY = $(firstword $(foreach p,python3 /usr/bin/python3,$(shell $(p) -m pytest --version >/dev/null 2>&1 && echo $(p))))
test-python: build
	@test -n "$(PYTEST_PY)" || { echo "test-python: no python3 with pytest (run make deps)" >&2; exit 1; }
	cd sdk/python && mypy --strict --python-version 3.9 --no-incremental cowboy && \
	  MYPYPATH=tests mypy --python-version 3.9 --no-incremental tests ../../examples/python/agent.py
	@rc=0; COWBOY_BIN_DIR=$(CURDIR)/$(BIN) $(PYTEST_PY) -m pytest -q -p no:cacheprovider sdk/python/tests || rc=$$?; \
	if [ $$rc -eq 5 ]; then \
	  if ls sdk/python/tests/test_*.py >/dev/null 2>&1; then echo "test-python: pytest collected no tests from sdk/python/tests" >&2; exit 1; fi; \
	  echo "test-python: no tests"; exit 0; \
	fi; exit $$rc

test-short: deps
	$(GO) test -short -timeout 10m ./...

demo: deps build
	@./scripts/demo.sh

bench: deps build
	@./scripts/bench.sh

soak: deps build
	COWBOY_SOAK=1 $(GO) test -timeout 60m -run Soak ./...

fuzz:
	$(GO) test -run XXX -fuzz FuzzDecodeTx -fuzztime 60s ./chain/types/

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
