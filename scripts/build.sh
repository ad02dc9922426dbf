#!/usr/bin/env bash
# Configures and builds everything into build/ (RelWithDebInfo). Extra args go to cmake --build.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake --preset default >/dev/null
fi
cmake --build build -j"$jobs" "$@"
