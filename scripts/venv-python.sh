#!/usr/bin/env bash
# Runs a test with the project's venv python (scripts/python-venv.sh), for ctest:
#   scripts/venv-python.sh SCRIPT.py [ARGS...]
# Without a current venv it exits 77 (the tests' SKIP_RETURN_CODE) saying why and how to make it;
# where TRAINYARD_REQUIRE_PYPI=1 (CI) it exits 1 instead, so the test fails rather than skips.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${TRAINYARD_VENV:-$here/.venv}
if [[ -x $venv/bin/python ]] && cmp -s "$here/scripts/venv/requirements.lock" "$venv/.trainyard-installed-lock"; then
  exec "$venv/bin/python" "$@"
fi
if [[ -f $venv.unavailable ]]; then
  reason=$(cat "$venv.unavailable")
elif [[ -x $venv/bin/python ]]; then
  reason="the venv $venv does not match scripts/venv/requirements.lock; run scripts/python-venv.sh"
else
  reason="the venv $venv is not made; run scripts/python-venv.sh"
fi
if [[ ${TRAINYARD_REQUIRE_PYPI:-0} == 1 ]]; then
  echo "FAILED: this test needs the PyPI packages (TRAINYARD_REQUIRE_PYPI=1), but $reason"
  exit 1
fi
echo "SKIPPED: $reason"
exit 77
