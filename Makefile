# Cowboy — build, test and demo entry points. `make demo` and `make test`
# work from a clean clone; both run `make deps` first.
SHELL := /bin/bash
GO ?= go
BIN := bin
GOFLAGS ?= -buildvcs=false
export GOFLAGS
LDFLAGS := -X github.com/cowboy-foundation/cowboy/internal/version.Version=$(shell git describe --tags --always --dirty 2>/dev/null || echo dev)


.PHONY: all deps build test test-short demo bench soak fuzz lint clean

all: build

# deps installs what the build, the tests and the demo need beyond Go:
# Debian packages (fuse3 for FUSE mounts, psmisc, nodejs/npm), and npm test
# peers pinned by package.json (the reference MCP server, into node_modules/).
deps:
	@./scripts/deps.sh

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

test: deps
	$(GO) vet ./...
	$(GO) test -timeout 15m ./...

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
