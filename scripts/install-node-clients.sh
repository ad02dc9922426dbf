#!/usr/bin/env bash
# Installs the official Google Cloud Node.js clients the client-compatibility tests drive
# (test/node/package.json, pinned by its package-lock.json) into a build-local folder:
#   scripts/install-node-clients.sh [BUILD_DIR]     (default: build)
# -> BUILD_DIR/node-clients/node_modules. Needs npm and the npm registry; safe to re-run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
dest="$build/node-clients"
mkdir -p "$dest"
cp "$here/test/node/package.json" "$here/test/node/package-lock.json" "$dest/"
if [[ -f "$dest/node_modules/.package-lock.json" ]] &&
   cmp -s "$dest/package-lock.json" "$dest/node_modules/.installed-lock.json" 2>/dev/null; then
  exit 0
fi
(cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts)
cp "$dest/package-lock.json" "$dest/node_modules/.installed-lock.json"
echo "install-node-clients: installed into $dest/node_modules" >&2
