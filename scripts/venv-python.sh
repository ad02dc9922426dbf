#!/usr/bin/env bash
# Runs a test with the project's venv python (scripts/python-venv.sh), for ctest:
#   scripts/venv-python.sh SCRIPT.py [ARGS...]
# Without a current venv it exits 77 (the tests' SKIP_RETURN_CODE) saying why and how to make it;
# where TRAINYARD_REQUIRE_PYPI=1 (CI) it exits 1 instead, so the test fails rather than skips.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# TRAINYARD_VENV_SET=NAME: the venv of scripts/venv/NAME.lock (.venv-NAME), as python-venv.sh.
set_name=${TRAINYARD_VENV_SET:-requirements}
if [[ $set_name == requirements ]]; then
  venv=${TRAINYARD_VENV:-$here/.venv}
else
  venv=${TRAINYARD_VENV:-$here/.venv-$set_name}
fi
lock=$here/scripts/venv/$set_name.lock
if [[ -x $venv/bin/python ]] && cmp -s "$lock" "$venv/.trainyard-installed-lock"; then
  exec "$venv/bin/python" "$@"
fi
if [[ -f $venv.unavailable ]]; then
  reason=$(cat "$venv.unavailable")
elif [[ -x $venv/bin/python ]]; then
  reason="the venv $venv does not match $lock; run TRAINYARD_VENV_SET=$set_name scripts/python-venv.sh"
else
  reason="the venv $venv is not made; run TRAINYARD_VENV_SET=$set_name scripts/python-venv.sh"
fi
if [[ ${TRAINYARD_REQUIRE_PYPI:-0} == 1 ]]; then
  echo "FAILED: this test needs the PyPI packages (TRAINYARD_REQUIRE_PYPI=1), but $reason"
  exit 1
fi
echo "SKIPPED: $reason"
exit 77
