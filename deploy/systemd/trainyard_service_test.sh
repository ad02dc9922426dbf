#!/usr/bin/env bash
# deploy/systemd/trainyard.service is a unit systemd accepts (`systemd-analyze verify`, with
# ExecStart pointing at the built binary), and it keeps what running it as a service relies on:
# a stop signals the server alone (KillMode=process; the default would kill every job's
# replicas), the unit's cgroup is delegated to the server (Delegate=yes, --cgroup-delegated:
# server and replicas in sibling leaves), reload is SIGHUP (which the server answers by
# reloading, not dying), a stop timeout and a file-descriptor limit. Where systemd is 254 or
# later, the DelegateSubgroup= drop-in verifies with it. Exit 77 (ctest: Skipped) without
# systemd-analyze.
#   deploy/systemd/trainyard_service_test.sh BUILT_TRAINYARD
set -euo pipefail
here=$(dirname "$0")
unit=$here/trainyard.service
binary=${1:?usage: trainyard_service_test.sh BUILT_TRAINYARD}
command -v systemd-analyze >/dev/null ||
  { echo "SKIPPED: systemd-analyze is not installed (Debian: systemd)"; exit 77; }
fail=0
for want in '^KillMode=process$' '^Delegate=yes$' '^ExecReload=/bin/kill -HUP \$MAINPID$' \
            '^TimeoutStopSec=' '^LimitNOFILE=' '^ExecStart=/usr/local/bin/trainyard server ' \
            '^    --cgroup-delegated$'; do
  grep -q -- "$want" "$unit" || { echo "FAILED: $unit has no line matching $want"; fail=1; }
done
grep -q '^DelegateSubgroup=server$' "$here/trainyard.service.d/delegate-subgroup.conf" ||
  { echo "FAILED: the drop-in does not set DelegateSubgroup=server"; fail=1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|/usr/local/bin/trainyard|$(realpath "$binary")|" "$unit" >"$dir/trainyard.service"
version=$(systemd-analyze --version | awk 'NR == 1 { print $2 }')
if ((version >= 254)); then
  cp -r "$here/trainyard.service.d" "$dir/"
else
  echo "note: systemd $version predates DelegateSubgroup= (254): the drop-in is not verified here"
fi
if ! out=$(systemd-analyze verify "$dir/trainyard.service" 2>&1); then
  echo "FAILED: systemd-analyze verify: $out"
  fail=1
elif [[ -n $out ]]; then
  echo "FAILED: systemd-analyze verify warns: $out"
  fail=1
fi
[[ $fail == 0 ]] && echo "PASSED: $unit verifies, delegates, stops, reloads and limits as documented"
exit $fail
