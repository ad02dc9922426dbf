#!/usr/bin/env bash
# Makes the project's Python venv (default .venv in the checkout; TRAINYARD_VENV overrides) with
# Debian's python3 and the pinned packages of scripts/venv/requirements.lock, from PyPI. Never
# installs anything system-wide. Safe to re-run: a venv whose lock matches is left as it is.
#
#   scripts/python-venv.sh            make or update the venv
#   scripts/python-venv.sh --relock   remake requirements.lock from requirements.in
#
# TRAINYARD_VENV_SET=NAME makes another set instead: scripts/venv/NAME.in and NAME.lock into
# .venv-NAME (e.g. sdk1: the Vertex SDK's 1.x major, which cannot share a venv with 2.x). A set
# with scripts/venv/NAME.options gets its venv_args for `python3 -m venv` and pip_args for the
# install (anchors: Debian's torch through --system-site-packages; its lock is written by hand).
#
# Where PyPI cannot be reached the venv is not made: the reason goes to stderr and into
# VENV.unavailable, which the tests that need it print when they report Skipped
# (scripts/venv-python.sh). With TRAINYARD_REQUIRE_PYPI=1 (CI) that is an error instead.
set -euo pipefail
cd "$(dirname "$0")/.."
set_name=${TRAINYARD_VENV_SET:-requirements}
if [[ $set_name == requirements ]]; then
  venv=${TRAINYARD_VENV:-$PWD/.venv}
else
  venv=${TRAINYARD_VENV:-$PWD/.venv-$set_name}
fi
lock=scripts/venv/$set_name.lock
[[ -f scripts/venv/$set_name.in ]] || { echo "python-venv: error: no scripts/venv/$set_name.in" >&2; exit 1; }
python=/usr/bin/python3
stamp=$venv/.trainyard-installed-lock
venv_args=()
pip_args=()
# shellcheck source=/dev/null
[[ -f scripts/venv/$set_name.options ]] && source "scripts/venv/$set_name.options"

die() {
  echo "python-venv: error: $*" >&2
  exit 1
}
[[ -x $python ]] || die "$python is missing: apt-get install python3 python3-venv"

if [[ ${1:-} == --relock ]]; then
  [[ ${#venv_args[@]} == 0 ]] || die "scripts/venv/$set_name.lock is written by hand (scripts/venv/$set_name.in)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$python" -m venv "$tmp/venv"
  "$tmp/venv/bin/python" -m pip install -q -r "scripts/venv/$set_name.in"
  { echo "# Made by scripts/python-venv.sh --relock from $set_name.in (pip freeze of a fresh venv)."
    "$tmp/venv/bin/python" -m pip freeze --all --exclude pip --exclude setuptools --exclude wheel
  } >"$lock.tmp"
  mv "$lock.tmp" "$lock"
  echo "python-venv: wrote $lock" >&2
  exit 0
fi

if [[ -f $stamp ]] && cmp -s "$lock" "$stamp" && "$venv/bin/python" -c '' 2>/dev/null; then
  exit 0
fi
# A venv without a matching stamp is incomplete or stale: it is made afresh.
rm -rf "$venv" "$venv.unavailable"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$python" -m venv "${venv_args[@]}" "$venv" >"$log" 2>&1; then
  die "could not make a venv with $python (apt-get install python3-venv): $(tail -3 "$log")"
fi
started=$(date +%s)
if ! "$venv/bin/python" -m pip install -q --no-input "${pip_args[@]}" -r "$lock" >"$log" 2>&1; then
  reason="pip could not install $lock from PyPI: $(grep -E 'ERROR|Error' "$log" | head -3 | tr '\n' ' ')"
  rm -rf "$venv"
  echo "$reason" >"$venv.unavailable"
  if [[ ${TRAINYARD_REQUIRE_PYPI:-0} == 1 ]]; then die "$reason"; fi
  echo "python-venv: $reason; the tests that need these packages will report Skipped" >&2
  exit 0
fi
cp "$lock" "$stamp"
echo "python-venv: installed $(grep -c '==' "$lock") pinned packages into $venv in $(($(date +%s) - started)) s" >&2
