#!/usr/bin/env bash
# Runs every test on a fresh Debian 12 machine: installs what is missing, fetches the sample
# data, builds, runs ctest (unit, slow and integration labels). Pass ctest args to narrow it,
# e.g. scripts/test.sh -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's time goes to stderr ("test: build took N s"): where a slow CI run spent it.
step() {
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "test: $name took $((SECONDS - start)) s" >&2
  return $rc
}
step install-deps bash scripts/install-deps.sh --test
step sample-data bash scripts/fetch-sample-data.sh
step build bash scripts/build.sh
# The official Google Cloud Node.js clients for the client-compatibility tests (npm registry);
# without them those tests report Skipped.
bash scripts/install-node-clients.sh build ||
  echo "test: Node clients not installed; node_*_client_test will be skipped" >&2
# Skipped tests say why (scripts/skip-reasons.sh reads ctest's JUnit file), pass or fail.
status=0
step ctest ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" \
  --output-junit "$PWD/build/Testing/ctest-junit.xml" "$@" || status=$?
bash scripts/skip-reasons.sh build/Testing/ctest-junit.xml || true
exit $status
