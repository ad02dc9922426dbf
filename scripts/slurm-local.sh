#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for Trainyard's Slurm executor tests, CI and demos.
# Debian 12 packages (slurm-wlm 22.05, munge; MariaDB + slurmdbd for accounting), no systemd
# needed: every daemon is started here, as root, and stopped by the PID this script recorded.
# See docs/slurm.md.
#
#   scripts/slurm-local.sh start [--nodes N] [--gpus-per-node G] [--accounting dbd|jobcomp|none]
#                                [--timeout SECONDS]
#   scripts/slurm-local.sh stop      # cancels the cluster's jobs, then stops its daemons
#   scripts/slurm-local.sh status    # daemons, nodes, queue; exit 0 up, 1 degraded, 3 stopped
#   scripts/slurm-local.sh env       # prints `export SLURM_CONF=...` for eval
#   scripts/slurm-local.sh purge     # stop, then delete $SLURM_LOCAL_DIR (job state, accounting DB)
#   scripts/slurm-local.sh daemon stop|kill|start NAME  # one daemon: slurmctld, slurmdbd, slurmd-nI
#   scripts/slurm-local.sh slurmd-timeout SECONDS       # SlurmdTimeout, applied with reconfigure
#   scripts/slurm-local.sh heal      # restart dead daemons, SlurmdTimeout=30, resume, wait idle
#
# start installs missing packages (apt-get), writes $SLURM_LOCAL_DIR/etc/slurm.conf with this
# host's cores and memory, N nodes "n1".."nN" (one slurmd each, `slurmd -N nI`, own port, all on
# 127.0.0.1), G fake GPUs per node as GRES backed by character devices (clones of /dev/null, so
# Slurm sets CUDA_VISIBLE_DEVICES), accounting (dbd: full `sacct` through slurmdbd + a private
# MariaDB; jobcomp: `sacct -c` from a text file; none), then waits until every node is idle.
# It is idempotent: `start` on a running cluster with the same settings only prints its status.
#
# Environment: SLURM_LOCAL_DIR (default /tmp/trainyard-slurm; config, state, logs, PIDs),
#              SLURM_LOCAL_PORT_BASE (default 16800; ports BASE+6 .. BASE+30+N are used),
#              SLURM_LOCAL_TRACE=1 (timestamped shell trace).
set -euo pipefail

BASE=${SLURM_LOCAL_DIR:-/tmp/trainyard-slurm}
PORT_BASE=${SLURM_LOCAL_PORT_BASE:-16800}
CONF=$BASE/etc/slurm.conf
SYSTEM_CONF=/etc/slurm/slurm.conf
CTLD_PORT=$((PORT_BASE + 17))
DBD_PORT=$((PORT_BASE + 19))
DB_PORT=$((PORT_BASE + 6))
SLURMD_PORT0=$((PORT_BASE + 30))
export SLURM_CONF=$CONF
if [ -n "${SLURM_LOCAL_TRACE:-}" ]; then # timestamped trace of every step, to find slow ones
  PS4='+ ${EPOCHREALTIME} '
  set -x
fi

die() {
  echo "slurm-local: error: $*" >&2
  exit 1
}
log() { echo "slurm-local: $*" >&2; }
usage() {
  sed -n '7,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_for SECONDS WHAT CMD...: polls CMD every 0.2 s; returns 1 after SECONDS.
wait_for() {
  local deadline=$(($(date +%s) + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "timed out waiting for $what"
      return 1
    fi
    sleep 0.2
  done
}

# True while PID runs; a zombie (exited, parent not yet reaped it) counts as gone.
alive() {
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null &&
    [ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)" != Z ]
}
pid_of() { cat "$BASE/pids/$1.pid" 2>/dev/null || true; }

# spawn NAME CMD...: runs a foreground daemon detached in its own session, records its PID.
spawn() {
  local name=$1
  shift
  setsid "$@" >"$BASE/log/$name.out" 2>&1 </dev/null &
  echo $! >"$BASE/pids/$name.pid"
}

# Stops a recorded daemon: SIGTERM, up to 15 s, then SIGKILL.
stop_daemon() {
  local name=$1 pid
  pid=$(pid_of "$name")
  rm -f "$BASE/pids/$name.pid"
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 75); do
    alive "$pid" || {
      log "stopped $name (pid $pid)"
      return 0
    }
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  log "killed $name (pid $pid): it did not stop within 15 s of SIGTERM"
}

setting() { sed -n "s/^$1=//p" "$BASE/settings" 2>/dev/null || true; }

install_if_missing() {
  local accounting=$1 pkgs=() need=0
  command -v slurmctld >/dev/null || pkgs+=(slurmctld)
  command -v slurmd >/dev/null || pkgs+=(slurmd)
  command -v sinfo >/dev/null || pkgs+=(slurm-client)
  command -v munged >/dev/null || pkgs+=(munge)
  if [ "$accounting" = dbd ]; then
    command -v slurmdbd >/dev/null || pkgs+=(slurmdbd)
    [ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so ] ||
      pkgs+=(slurm-wlm-mysql-plugin)
    command -v mariadbd >/dev/null || pkgs+=(mariadb-server)
  fi
  [ ${#pkgs[@]} -eq 0 ] && return 0
  log "installing ${pkgs[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # No package lists yet on a fresh machine: update once, then install.
  apt-cache show "${pkgs[0]}" >/dev/null 2>&1 || need=1
  if [ $need = 1 ]; then apt-get -o DPkg::Lock::Timeout=900 update -qq; fi
  # policy-rc.d on a container/VM without systemd keeps the packages' own services from starting;
  # we start every daemon ourselves below.
  apt-get -o DPkg::Lock::Timeout=900 install -y --no-install-recommends "${pkgs[@]}" >&2 ||
    die "apt-get install ${pkgs[*]} failed"
}

write_config() {
  local nodes=$1 gpus=$2 accounting=$3
  mkdir -p "$BASE"/{etc,state,log,pids,dev,db}
  chmod 755 "$BASE" "$BASE/etc"
  local cpus mem_mb node_mem
  cpus=$(nproc)
  mem_mb=$(($(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024))
  # Every fake node runs on this host and sees all its memory; configure a share of 90% each so
  # slurmd's check (configured <= real) passes and the total stays honest. CPUs are not split:
  # each fake node offers all cores (oversubscribed across fake nodes, fine for tests).
  node_mem=$((mem_mb * 9 / 10 / nodes))
  local acct
  case $accounting in
    dbd) acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/none" ;;
    jobcomp) acct="AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$BASE/log/jobcomp.txt" ;;
    none) acct="AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none" ;;
  esac
  cat >"$CONF.tmp" <<EOF
# Written by scripts/slurm-local.sh: $nodes node(s) on $(hostname), $cpus CPUs and ${node_mem} MB each.
ClusterName=trainyard
SlurmctldHost=localhost
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT0
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/slurmctld.pid
SlurmdPidFile=$BASE/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
# No cgroup enforcement on a shared test host: track processes, do not confine them.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((node_mem / cpus))
SchedulerType=sched/backfill
# Heterogeneous jobs are placed only by backfill: a short interval keeps tests fast.
SchedulerParameters=bf_interval=2
ReturnToService=2
SlurmdTimeout=30
MpiDefault=none
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/linux
MinJobAge=300
$acct
GresTypes=gpu
EOF
  local i g gres="AutoDetect=off"
  for i in $(seq 1 "$nodes"); do
    mkdir -p "$BASE/spool/n$i" "$BASE/dev/n$i"
    local node_gres=""
    if [ "$gpus" -gt 0 ]; then
      # GRES "gpu" needs File= naming character devices, or slurmd drops it and drains the node.
      for g in $(seq 0 $((gpus - 1))); do
        [ -c "$BASE/dev/n$i/nvidia$g" ] || mknod -m 666 "$BASE/dev/n$i/nvidia$g" c 1 3
      done
      gres+=$'\n'"NodeName=n$i Name=gpu File=$BASE/dev/n$i/nvidia[0-$((gpus - 1))]"
      node_gres="Gres=gpu:$gpus"
    fi
    echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((SLURMD_PORT0 + i))" \
      "CPUs=$cpus RealMemory=$node_mem $node_gres State=UNKNOWN" >>"$CONF.tmp"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$CONF.tmp"
  echo "$gres" >"$BASE/etc/gres.conf"
  chmod 644 "$CONF.tmp" "$BASE/etc/gres.conf"
  mv "$CONF.tmp" "$CONF"
  if [ "$accounting" = dbd ]; then
    cat >"$BASE/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=trainyard
StorageLoc=slurm_acct_db
LogFile=$BASE/log/slurmdbd.log
PidFile=$BASE/slurmdbd.pid
EOF
    chmod 600 "$BASE/etc/slurmdbd.conf" # slurmdbd refuses a readable slurmdbd.conf
  fi
  cat >"$BASE/settings" <<EOF
nodes=$nodes
gpus=$gpus
accounting=$accounting
EOF
}

start_munge() {
  # One munged serves the whole host. Reuse a running one (its key is the one every local
  # daemon will use); otherwise start the packaged one as the munge user on the default socket
  # (sacctmgr -> slurmdbd ignores a custom socket path in 22.05).
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "using the munged already running on this host"
    return 0
  fi
  install -d -m 755 -o munge -g munge /run/munge "$BASE/log/munge"
  runuser -u munge -- /usr/sbin/munged --log-file="$BASE/log/munge/munged.log" ||
    die "munged did not start; see $BASE/log/munge/munged.log"
  wait_for 10 "munged" bash -c 'munge -n | unmunge' || die "munged does not answer"
  cp /run/munge/munged.pid "$BASE/pids/munged.pid"
}

start_accounting() {
  local sock=$BASE/db/mysqld.sock
  if [ ! -d "$BASE/db/data/mysql" ]; then
    mariadb-install-db --no-defaults --user=root --datadir="$BASE/db/data" \
      --auth-root-authentication-method=normal --skip-test-db >"$BASE/log/mariadb-install.log" 2>&1 ||
      die "mariadb-install-db failed; see $BASE/log/mariadb-install.log"
  fi
  spawn mariadbd mariadbd --no-defaults --user=root --datadir="$BASE/db/data" --socket="$sock" \
    --bind-address=127.0.0.1 --port="$DB_PORT" --pid-file="$BASE/db/mariadbd.pid" \
    --log-error="$BASE/log/mariadbd.err" --innodb-buffer-pool-size=64M
  wait_for 30 "MariaDB on port $DB_PORT" mariadb --no-defaults -S "$sock" -uroot -e 'select 1' ||
    die "MariaDB did not start; see $BASE/log/mariadbd.err"
  mariadb --no-defaults -S "$sock" -uroot -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1'
    IDENTIFIED BY 'trainyard'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"
  spawn slurmdbd slurmdbd -D # reads slurmdbd.conf next to $SLURM_CONF
  wait_for 30 "slurmdbd on port $DBD_PORT" sacctmgr -n show cluster ||
    die "slurmdbd did not start; see $BASE/log/slurmdbd.log"
  sacctmgr -i -Q add cluster trainyard >/dev/null 2>&1 || true
}

queue_empty() { [ -z "$(squeue -h -o %A 2>/dev/null)" ]; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Another cluster (or anything) on our ports would answer our clients in place of our daemons.
check_ports_free() {
  local nodes=$1 accounting=$2 ports=("$CTLD_PORT") p i
  for i in $(seq 1 "$nodes"); do ports+=($((SLURMD_PORT0 + i))); done
  [ "$accounting" = dbd ] && ports+=("$DBD_PORT" "$DB_PORT")
  for p in "${ports[@]}"; do
    if port_in_use "$p"; then
      die "port $p on 127.0.0.1 is already in use (another Slurm cluster?); stop it, or pick" \
        "other ports with SLURM_LOCAL_PORT_BASE (now $PORT_BASE)"
    fi
  done
}

# Every node idle, as reported by OUR slurmctld (still alive).
all_nodes_idle() {
  alive "$(pid_of slurmctld)" || return 1
  local want=$1 states
  states=$(sinfo -h -N -o '%N %T' 2>/dev/null) || return 1
  [ "$(echo "$states" | awk '$2 == "idle"' | sort -u | wc -l)" -eq "$want" ]
}

cmd_start() {
  local nodes=1 gpus=0 accounting=dbd timeout=60
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
      --gpus-per-node) gpus=${2:?--gpus-per-node needs a number}; shift 2 ;;
      --accounting) accounting=${2:?--accounting needs dbd, jobcomp or none}; shift 2 ;;
      --timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
      *) die "unknown option '$1' for start (see: $0 help)" ;;
    esac
  done
  [[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive integer, got '$nodes'"
  [[ $gpus =~ ^[0-9]+$ ]] || die "--gpus-per-node must be an integer >= 0, got '$gpus'"
  [[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
  case $accounting in dbd | jobcomp | none) ;; *)
    die "--accounting must be dbd, jobcomp or none, got '$accounting'" ;;
  esac
  [ "$(id -u)" = 0 ] || die "start must run as root (it installs packages and starts daemons)"

  if alive "$(pid_of slurmctld)"; then
    if [ "$(setting nodes)/$(setting gpus)/$(setting accounting)" = "$nodes/$gpus/$accounting" ]; then
      log "already running"
      cmd_status
      return $?
    fi
    die "already running with $(setting nodes) node(s), $(setting gpus) GPU(s)/node and" \
      "accounting=$(setting accounting); run '$0 stop' first to change that"
  fi
  if [ -n "$(ls -A "$BASE/pids" 2>/dev/null)" ]; then
    log "slurmctld is not running but other daemons of an earlier start are: restarting cleanly"
    cmd_stop
  fi
  local t0
  t0=$(now_ms)
  install_if_missing "$accounting"
  check_ports_free "$nodes" "$accounting"
  write_config "$nodes" "$gpus" "$accounting"
  start_munge
  [ "$accounting" = dbd ] && start_accounting
  spawn slurmctld slurmctld -D -i
  local i
  for i in $(seq 1 "$nodes"); do spawn "slurmd-n$i" slurmd -D -N "n$i"; done
  if ! wait_for "$timeout" "$nodes node(s) idle" all_nodes_idle "$nodes"; then
    log "nodes after ${timeout}s:"
    sinfo -N -o '%N %T %E' >&2 || true
    for f in "$BASE"/log/slurmctld.log "$BASE"/log/slurmd-n*.log; do
      [ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 5 "$f" >&2; }
    done
    cmd_stop >/dev/null 2>&1 || true
    die "the cluster did not come up within ${timeout}s (logs kept in $BASE/log)"
  fi
  # Plain `srun`/`sbatch` without SLURM_CONF work too when the host has no Slurm config of its own.
  if [ ! -e "$SYSTEM_CONF" ] && [ ! -L "$SYSTEM_CONF" ]; then
    mkdir -p "$(dirname "$SYSTEM_CONF")"
    ln -s "$CONF" "$SYSTEM_CONF"
  fi
  log "up: $nodes node(s) idle after $(($(now_ms) - t0)) ms; accounting=$accounting"
  echo "export SLURM_CONF=$CONF"
}

cmd_stop() {
  if [ ! -d "$BASE/pids" ] || [ -z "$(ls -A "$BASE/pids" 2>/dev/null)" ]; then
    log "not running"
    return 0
  fi
  if alive "$(pid_of slurmctld)"; then
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      log "cancelling jobs: ${jobs//$'\n'/ }"
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      wait_for 30 "cancelled jobs to finish" queue_empty || true
    fi
  fi
  local f
  for f in "$BASE"/pids/slurmd-*.pid; do
    [ -e "$f" ] && stop_daemon "$(basename "$f" .pid)"
  done
  stop_daemon slurmctld
  stop_daemon slurmdbd
  stop_daemon mariadbd
  stop_daemon munged
  if [ -L "$SYSTEM_CONF" ] && [ "$(readlink "$SYSTEM_CONF")" = "$CONF" ]; then
    rm -f "$SYSTEM_CONF"
  fi
  return 0
}

cmd_status() {
  if [ ! -f "$BASE/settings" ]; then
    echo "stopped (no cluster in $BASE)"
    return 3
  fi
  local name pid up=0 down=0
  for f in "$BASE"/pids/*.pid; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pid)
    pid=$(pid_of "$name")
    if alive "$pid"; then
      echo "$name: running (pid $pid)"
      up=$((up + 1))
    else
      echo "$name: NOT running (pid $pid; see $BASE/log)"
      down=$((down + 1))
    fi
  done
  if [ $up -eq 0 ]; then
    echo "stopped"
    return 3
  fi
  echo "config: $CONF (nodes=$(setting nodes) gpus/node=$(setting gpus) accounting=$(setting accounting))"
  if alive "$(pid_of slurmctld)"; then
    sinfo -N -o '%N %c %m %G %T' || true
    echo "jobs in queue: $(squeue -h 2>/dev/null | wc -l)"
  fi
  [ $down -eq 0 ] || return 1
}

# The command line each daemon runs with (as cmd_start spawns it).
daemon_command() {
  case $1 in
    slurmctld) echo "slurmctld -D -i" ;;
    slurmdbd) echo "slurmdbd -D" ;;
    slurmd-n[1-9]*) echo "slurmd -D -N ${1#slurmd-}" ;;
    *) return 1 ;;
  esac
}

# Fault tests take one daemon away and bring it back: stop (SIGTERM, as an administrator would;
# slurmctld saves its state), kill (SIGKILL, as a crash; a slurmd's running jobs keep running
# under their slurmstepd) and start (the same command as `start`).
cmd_daemon() {
  local action=${1:-} name=${2:-} cmd pid
  cmd=$(daemon_command "$name") || die "unknown daemon '$name' (slurmctld, slurmdbd, slurmd-nI)"
  [ -f "$BASE/settings" ] || die "no cluster in $BASE; run '$0 start' first"
  case $action in
    stop) stop_daemon "$name" ;;
    kill)
      pid=$(pid_of "$name")
      rm -f "$BASE/pids/$name.pid"
      alive "$pid" || return 0
      kill -KILL "$pid"
      wait_for 15 "$name to die" bash -c "! kill -0 $pid" || true
      log "killed $name (pid $pid)"
      ;;
    start)
      if alive "$(pid_of "$name")"; then
        log "$name is already running"
        return 0
      fi
      # shellcheck disable=SC2086
      spawn "$name" $cmd
      log "started $name (pid $(pid_of "$name"))"
      ;;
    *) die "daemon: expected stop, kill or start, got '$action'" ;;
  esac
}

# SlurmdTimeout: how long slurmctld waits for a silent slurmd before it marks the node DOWN and
# fails its jobs (NODE_FAIL). Written into slurm.conf and applied with `scontrol reconfigure`.
cmd_slurmd_timeout() {
  local seconds=${1:-}
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || die "slurmd-timeout needs a number of seconds, got '$seconds'"
  [ -f "$CONF" ] || die "no cluster in $BASE; run '$0 start' first"
  sed -i "s/^SlurmdTimeout=.*/SlurmdTimeout=$seconds/" "$CONF"
  scontrol reconfigure || die "scontrol reconfigure failed (is slurmctld up?)"
  log "SlurmdTimeout=$seconds"
}

# Back to a healthy cluster after a fault test, whatever it left: every daemon of this cluster's
# settings running, SlurmdTimeout=30, nodes that went DOWN resumed, every node idle.
cmd_heal() {
  [ -f "$BASE/settings" ] || die "no cluster in $BASE; run '$0 start' first"
  local names=(slurmctld) i n reconfigure=0
  [ "$(setting accounting)" = dbd ] && names=(slurmdbd slurmctld)
  for i in $(seq 1 "$(setting nodes)"); do names+=("slurmd-n$i"); done
  if ! grep -q '^SlurmdTimeout=30$' "$CONF"; then
    sed -i "s/^SlurmdTimeout=.*/SlurmdTimeout=30/" "$CONF"
    reconfigure=1
  fi
  for n in "${names[@]}"; do cmd_daemon start "$n"; done
  wait_for 30 "slurmctld to answer" sinfo || die "slurmctld does not answer; see $BASE/log"
  if [ $reconfigure = 1 ]; then scontrol reconfigure || die "scontrol reconfigure failed"; fi
  for n in $(sinfo -h -N -t down,drain,fail -o %N 2>/dev/null | sort -u); do
    scontrol update nodename="$n" state=resume 2>/dev/null || true
  done
  wait_for 60 "every node idle" all_nodes_idle "$(setting nodes)" ||
    die "the cluster is not healthy after 60 s: $(sinfo -h -N -o '%N=%T' | tr '\n' ' ')"
  log "healthy: $(setting nodes) node(s) idle"
}

cmd_purge() {
  cmd_stop
  [ -d "$BASE" ] || return 0
  # Only ever delete a directory this script made (it holds our settings file and config).
  if [ ! -f "$BASE/settings" ] || [ ! -f "$CONF" ]; then
    die "$BASE does not look like a slurm-local.sh directory; not deleting it"
  fi
  rm -rf "$BASE"
  log "deleted $BASE"
}

case ${1:-} in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  purge) cmd_purge ;;
  status) cmd_status ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  daemon) shift; cmd_daemon "$@" ;;
  slurmd-timeout) shift; cmd_slurmd_timeout "$@" ;;
  heal) cmd_heal ;;
  help | -h | --help) usage ;;
  *) usage ;;
esac
