#!/usr/bin/env bash
# Runs the README's two commands as a new user would: in a bare `debootstrap --variant=minbase`
# root of Debian 13 (trixie) or 12 (bookworm), as root, with a clone of this checkout's HEAD in
# root's home (/root/trainyard), nothing else installed. Prints each command's time and result.
#
#   scripts/fresh-root.sh trixie|bookworm [--root DIR] [--only demo|test] [--nice N] [--keep]
#
#   --root DIR   where the root is made (default /var/tmp/trainyard-fresh-RELEASE). The first run
#                debootstraps DIR.base (minutes) and keeps it; every run starts from a fresh copy
#                of it, so each run is bare.
#   --only X     run only `bash scripts/demo.sh` or only `bash scripts/test.sh` (default: both,
#                demo first, as the README orders them).
#   --nice N     run the commands at this niceness (default 0).
#   --keep       leave DIR as it is after the run (default: removed, logs kept beside it).
#
# What the root gets beyond debootstrap's minbase, and why: the host's resolv.conf and hosts (name
# resolution), the host's local CA certificates and its pip/npm client settings (the root reaches
# the package registries the way this machine does), and a policy-rc.d that keeps the packages'
# daemons (slurmctld, munge, prometheus, ...) from starting inside the chroot while apt installs
# them. Containers cannot run inside a chroot: those suites skip there with podman's reason.
# Needs root, debootstrap and a Debian mirror (scripts/debian-mirror.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

die() {
  echo "fresh-root: error: $*" >&2
  exit 1
}
log() { echo "fresh-root: $(date +%T) $*" >&2; }

release=${1:-}
case $release in
  trixie | bookworm) shift ;;
  -h | --help | "") sed -n '2,21p' "$0"; exit 0 ;;
  *) die "unknown release '$release': give trixie (Debian 13) or bookworm (Debian 12)" ;;
esac
root=/var/tmp/trainyard-fresh-$release
only=""
niceness=0
keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --root) root=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --nice) niceness=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
case $only in "" | demo | test) ;; *) die "--only takes demo or test, not '$only'" ;; esac
[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot, bind mounts)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
[[ $root == /* ]] || root=$(realpath -m "$root")
case $root/ in "$repo"/*) die "--root $root is inside the checkout; put it outside" ;; esac
git -C "$repo" diff --quiet HEAD || log "note: uncommitted changes are not in the clone (it is of HEAD)"

# Processes left in the root (a demo server, a daemon) are ended, then every mount beneath it.
release_root() {
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [[ $(readlink "/proc/$pid/root" 2>/dev/null) == "$root" ]] && kill -9 "$pid" 2>/dev/null || true
  done
  awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null || true
}
cleanup() {
  release_root
  if [[ $keep == 0 && -d $root ]]; then rm -rf "$root"; fi
}
trap cleanup EXIT
release_root

base=$root.base
if [[ ! -f $base/.trainyard-debootstrap-done ]]; then
  mirror=$(bash scripts/debian-mirror.sh)
  log "debootstrap $release (minbase) into $base; this takes minutes"
  rm -rf "$base"
  mkdir -p "$base"
  debootstrap --variant=minbase "$release" "$base" "$mirror" >"$base.log" 2>&1 ||
    die "debootstrap failed (log: $base.log)
$(tail -20 "$base.log")"
  touch "$base/.trainyard-debootstrap-done"
fi
rm -rf "$root"
cp -a "$base" "$root"
rm -f "$root/.trainyard-debootstrap-done"

cp /etc/hosts "$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/usr/local/share/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
for f in /etc/pip.conf /etc/npmrc; do [[ -f $f ]] && cp "$f" "$root$f"; done
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
git clone -q --no-local "$repo" "$root/root/trainyard"
commit=$(git -C "$root/root/trainyard" rev-parse --short HEAD)

mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
mount -o remount,bind,ro "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mkdir -p "$root/dev/shm"
mount -t tmpfs tmpfs "$root/dev/shm"

logs=$root.logs
mkdir -p "$logs"
results=()
overall=0
# One README command in the root: its time, exit status and the lines that tell how it ended.
run_command() {
  local name=$1 command=$2 started rc=0 seconds tail_line
  log "running '$command' (log: $logs/$name.log)"
  started=$(date +%s)
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb nice -n "$niceness" bash -c "cd /root/trainyard && $command" \
    </dev/null >"$logs/$name.log" 2>&1 || rc=$?
  seconds=$(($(date +%s) - started))
  if [[ $name == test ]]; then
    tail_line=$(grep -E 'tests passed|tests failed' "$logs/$name.log" | tail -1 || true)
  else
    tail_line=$(grep -E 'SUCCEEDED|FAILED|state' "$logs/$name.log" | tail -1 || true)
  fi
  results+=("$(printf '%-22s %6ss  exit %-3s %s' "$command" "$seconds" "$rc" "$tail_line")")
  [[ $rc == 0 ]] || overall=1
}
[[ $only == test ]] || run_command demo "bash scripts/demo.sh"
[[ $only == demo ]] || run_command test "bash scripts/test.sh"
# With their reasons (scripts/skip-reasons.sh, printed by test.sh), else ctest's own lines.
skipped=$(grep -E '^skipped: ' "$logs/test.log" 2>/dev/null | sed 's/^skipped: /  /' ||
  grep -E '\*\*\*Skipped|Not Run' "$logs/test.log" 2>/dev/null | sed 's/^/  /' || true)

echo "== fresh-root $release: $(. "$root/etc/os-release" && echo "$PRETTY_NAME"), commit $commit =="
printf '%s\n' "${results[@]}"
[[ -z $skipped ]] || printf 'skipped tests:\n%s\n' "$skipped"
echo "logs: $logs"
exit $overall
