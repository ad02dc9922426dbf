#!/usr/bin/env bash
# Fails (exit 1) when a tracked C++ file differs from clang-format's layout (.clang-format,
# Google base). Fix with: git ls-files '*.h' '*.cc' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "check-format: clang-format is not installed (apt-get install clang-format)" >&2
  exit 1
fi
files=()
while IFS= read -r f; do files+=("$f"); done < <(git ls-files '*.h' '*.cc' 2>/dev/null || find src tools bench -name '*.h' -o -name '*.cc')
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/check-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/check-format.$$ | cut -d: -f1 | sort -u | sed 's/^/check-format: not formatted: /' >&2
  echo "check-format: fix with: git ls-files '*.h' '*.cc' | xargs clang-format -i" >&2
  rm -f /tmp/check-format.$$
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files formatted"
