#!/usr/bin/env bash
# Installs the system packages and npm test peers Cowboy's build, tests and
# demo need. Safe to run repeatedly: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# FUSE mount (fuse/): fusermount3 and the programs its tests and benchmarks run.
command -v fusermount3 >/dev/null 2>&1 || need_apt+=(fuse3)
command -v fio >/dev/null 2>&1 || need_apt+=(fio)
command -v sqlite3 >/dev/null 2>&1 || need_apt+=(sqlite3)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v rsync >/dev/null 2>&1 || need_apt+=(rsync)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
# Peer encrypted FUSE mounts that `make bench` measures beside the CBFS mount.
command -v gocryptfs >/dev/null 2>&1 || need_apt+=(gocryptfs)
command -v rclone >/dev/null 2>&1 || need_apt+=(rclone)
command -v python3.11 >/dev/null 2>&1 || command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
# Multi-host tests (internal/netns, e2e/netns_test.go): ip netns.
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
# Headless Chromium drives the explorer's browser tests (e2e/explorer_test.go).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# cowboy-py tests (make test-python): pytest for some CPython. Debian's
# python3-pytest serves /usr/bin/python3; python3-venv lets the packaging test
# build a venv with it (ensurepip is offline).
if ! python3 -m pytest --version >/dev/null 2>&1 && ! /usr/bin/python3 -m pytest --version >/dev/null 2>&1; then
  need_apt+=(python3-pytest)
fi
if ! python3 -m pytest --version >/dev/null 2>&1 && ! /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
command -v mypy >/dev/null 2>&1 || need_apt+=(mypy)  # type-checks cowboy-py in make test-python
# Node.js and npm run the reference MCP server (@modelcontextprotocol/server-everything).
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing Debian packages: ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "deps: missing ${need_apt[*]} (install them, or run as root with apt-get available)" >&2
  fi
fi

# npm test peers, pinned by package.json and package-lock.json, installed
# into ./node_modules: the reference MCP server used by runner tests, the MCP
# conformance suite (@modelcontextprotocol/conformance) the MCP client is
# tested against, ethers (the independent signer of the signature tests),
# and the Node 22 they require (the npm package `node`, whose install script
# fetches the node-<os>-<arch> binary package from the npm registry;
# Debian's nodejs may be older). Tests put node_modules/.bin first
# on PATH when they run the suite.
if [ -f package.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -d node_modules ] || [ package.json -nt node_modules ] || [ package-lock.json -nt node_modules ] ||
     [ ! -f node_modules/@modelcontextprotocol/server-everything/dist/index.js ] ||
     [ ! -x node_modules/.bin/conformance ] || [ ! -x node_modules/.bin/node ] ||
     [ ! -f node_modules/ethers/package.json ]; then
    echo "deps: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    touch node_modules
  fi
  if ! node_modules/.bin/node --version >/dev/null 2>&1; then
    echo "deps: node_modules/.bin/node (Node 22 from the npm package 'node') did not install; its install script must be allowed to run" >&2
    exit 1
  fi
fi

# Go modules (offline afterwards).
go mod download

# gotestsum runs `make test`: it prints go test's output and reruns a failed
# test (only that test) up to twice, listing every test that needed a rerun in
# test-artifacts/rerun.txt so a flaky test is reported, not hidden. Installed
# into bin/tools so the module's own dependency graph is untouched.
if [ ! -x bin/tools/gotestsum ]; then
  echo "deps: go install gotest.tools/gotestsum@v1.13.0"
  GOBIN="$PWD/bin/tools" go install gotest.tools/gotestsum@v1.13.0
fi

# geth (go-ethereum at the version go.mod pins) runs a `--dev` Ethereum chain
# for the bridge tests and the demo (ethrelay/, docs/ETHEREUM.md). Installed
# into bin/tools, rebuilt when go.mod's go-ethereum version changes.
GETH_VERSION=$(go list -m -f '{{.Version}}' github.com/ethereum/go-ethereum)
if [ ! -x bin/tools/geth ] || ! bin/tools/geth version 2>/dev/null | grep -q "^Version: ${GETH_VERSION#v}"; then
  echo "deps: go install github.com/ethereum/go-ethereum/cmd/geth@${GETH_VERSION}"
  GOBIN="$PWD/bin/tools" go install "github.com/ethereum/go-ethereum/cmd/geth@${GETH_VERSION}"
fi
