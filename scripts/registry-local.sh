#!/usr/bin/env bash
# A Docker Registry v2 on loopback for Trainyard's container images (demo, tests, CI): Debian's
# docker-registry package (CNCF distribution 2.8), no systemd needed, started and stopped here by
# the PID this script recorded. See docs/containers.md.
#
#   scripts/registry-local.sh start [--port P]   # P defaults to a free port
#   scripts/registry-local.sh stop               # stops it and removes the insecure-registry entry
#   scripts/registry-local.sh status             # exit 0 up, 3 stopped
#   scripts/registry-local.sh env                # prints `export TRAINYARD_REGISTRY=127.0.0.1:P`
#
# The registry speaks plain HTTP on 127.0.0.1 only. podman is told so the standard way, with a
# drop-in /etc/containers/registries.conf.d/trainyard-local.conf (`insecure = true` for that
# host:port), so `podman push/pull 127.0.0.1:P/...` work without --tls-verify flags. start is
# idempotent: on a running registry it only prints its address.
#
# Environment: REGISTRY_LOCAL_DIR (default /tmp/trainyard-registry: config, blobs, log, PID),
#              REGISTRIES_CONF_D (default /etc/containers/registries.conf.d).
set -euo pipefail

BASE=${REGISTRY_LOCAL_DIR:-/tmp/trainyard-registry}
CONF_D=${REGISTRIES_CONF_D:-/etc/containers/registries.conf.d}
DROPIN=$CONF_D/trainyard-local.conf
PIDFILE=$BASE/registry.pid
PORTFILE=$BASE/port

die() {
  echo "registry-local: error: $*" >&2
  exit 1
}
log() { echo "registry-local: $*" >&2; }
usage() {
  sed -n '6,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

running() { [[ -s $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd_start() {
  local port=""
  while [[ $# -gt 0 ]]; do
    case $1 in
      --port) port=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  if running; then
    log "already running on 127.0.0.1:$(cat "$PORTFILE") (pid $(cat "$PIDFILE"))"
    return 0
  fi
  command -v docker-registry >/dev/null ||
    die "docker-registry is not installed: apt-get install docker-registry (scripts/install-deps.sh --test)"
  port=${port:-$(free_port)}
  mkdir -p "$BASE/data"
  cat >"$BASE/config.yml" <<CONF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $BASE/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
CONF
  docker-registry serve "$BASE/config.yml" >>"$BASE/registry.log" 2>&1 &
  echo $! >"$PIDFILE"
  echo "$port" >"$PORTFILE"
  local deadline=$(($(date +%s) + 20))
  until curl -sf "http://127.0.0.1:$port/v2/" >/dev/null 2>&1; do
    if ! running; then die "docker-registry exited; see $BASE/registry.log"; fi
    if [[ $(date +%s) -ge $deadline ]]; then die "registry not answering on 127.0.0.1:$port after 20 s"; fi
    sleep 0.1
  done
  mkdir -p "$CONF_D"
  cat >"$DROPIN.tmp" <<CONF
# Written by trainyard scripts/registry-local.sh: the loopback registry speaks plain HTTP.
[[registry]]
location = "127.0.0.1:$port"
insecure = true
CONF
  mv "$DROPIN.tmp" "$DROPIN"
  log "running on 127.0.0.1:$port (pid $(cat "$PIDFILE")); trusted via $DROPIN"
}

cmd_stop() {
  if running; then
    local pid
    pid=$(cat "$PIDFILE")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    log "stopped (pid $pid)"
  fi
  rm -f "$PIDFILE" "$DROPIN"
}

case ${1:-} in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status)
    if running; then echo "registry on 127.0.0.1:$(cat "$PORTFILE") (pid $(cat "$PIDFILE"))"; else
      echo "stopped"; exit 3; fi ;;
  env)
    running || die "not running; scripts/registry-local.sh start"
    echo "export TRAINYARD_REGISTRY=127.0.0.1:$(cat "$PORTFILE")" ;;
  *) usage ;;
esac
