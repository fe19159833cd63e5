#!/usr/bin/env bash
# A one-node Slurm cluster on loopback, from Debian's packages (munge,
# slurmctld, slurmd: tools/setup.sh --slurm), for testing `./lab grade
# --roster DIR --slurm` on one machine. Everything lives in DIR: its own
# munge key and socket, slurm.conf, state, spool and logs; nothing in /etc is
# touched, so it runs beside a real Slurm installation too.
#
#   tools/slurm/cluster.sh start DIR    starts munged, slurmctld and slurmd;
#                                       prints the SLURM_CONF line to export
#   tools/slurm/cluster.sh stop DIR     stops them (and every job they ran)
#
# Configured for a machine without cgroup delegation (a container, a CI
# runner): process tracking by parent pid (proctrack/linuxproc), no task
# binding (task/none), no accounting. One node, the machine's CPUs, one
# partition "grade". Ports 16817/16818 on 127.0.0.1 unless
# MHA_SLURM_PORT (the controller's; the node's is the next) says otherwise.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
port=${MHA_SLURM_PORT:-16817}
host=$(hostname -s)

for tool in munged slurmctld slurmd sbatch; do
  if ! command -v "$tool" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$tool ]]; then
    echo "cluster: $tool not found: install Slurm and munge with tools/setup.sh --slurm" >&2
    exit 1
  fi
done

stop() {
  local pidfile pid
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    pid=$(cat "$pidfile" 2>/dev/null || true)   # a daemon removes its file as it stops
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

case $action in
  stop) stop; echo "cluster: stopped ($dir)"; exit 0 ;;
  start) ;;
  *) usage ;;
esac

stop   # a cluster left running in DIR by an earlier run
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"
if [[ ! -s $dir/munge/munge.key ]]; then
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
fi
/usr/sbin/munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
  --seed-file="$dir/munge/munged.seed" --force

cat > "$dir/slurm.conf" <<CONF
# Written by tools/slurm/cluster.sh: a one-node test cluster on loopback.
ClusterName=mhatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 )) State=UNKNOWN
PartitionName=grade Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

export SLURM_CONF=$dir/slurm.conf
/usr/sbin/slurmctld -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF"
# Ready when the node answers idle.
for i in $(seq 60); do
  if sinfo --noheader --format=%t 2>/dev/null | grep -qx idle; then
    echo "cluster: one node ($(nproc) CPUs) up on 127.0.0.1:$port; use it with:"
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.5
done
echo "cluster: the node did not come up within 30 s; see $dir/log/" >&2
tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
exit 1
