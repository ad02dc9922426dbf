#!/usr/bin/env bash
# Runs every test on a fresh Debian 12 machine: installs what is missing, fetches the sample
# data, builds, runs ctest (unit, slow and integration labels). Pass ctest args to narrow it,
# e.g. scripts/test.sh -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
bash scripts/fetch-sample-data.sh
bash scripts/build.sh
# The official Google Cloud Node.js clients for the client-compatibility tests (npm registry);
# without them those tests report Skipped.
bash scripts/install-node-clients.sh build ||
  echo "test: Node clients not installed; node_*_client_test will be skipped" >&2
ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
