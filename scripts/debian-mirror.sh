#!/usr/bin/env bash
# Prints the Debian mirror to fetch packages and roots from: $DEBIAN_MIRROR if set, else the one
# apt uses on this machine (a deb822 `URIs:` line, or a one-line `deb` entry; security, Google
# Cloud and NodeSource entries skipped). No mirror is written in here: a machine whose apt names
# none must say which with DEBIAN_MIRROR. The one owner of that choice for build-images.sh,
# gpu-debs.sh and libtorch2-check.sh.
set -euo pipefail
if [[ -n ${DEBIAN_MIRROR:-} ]]; then echo "$DEBIAN_MIRROR"; exit 0; fi
uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' || true)
[[ -n $uri ]] || uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
  awk '$0 !~ /security|cloud.google|nodesource/ {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' || true)
if [[ -z $uri ]]; then
  echo "debian-mirror: apt names no Debian mirror here (/etc/apt/sources.list, sources.list.d);" \
    "set DEBIAN_MIRROR=URL of the Debian archive to use" >&2
  exit 1
fi
echo "$uri"
