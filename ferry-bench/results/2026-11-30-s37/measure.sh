#!/usr/bin/env bash
# Sitting s37 (2026-11-30 ~20:20 UTC; issue 4): d19e46e (s36 plus lanes for calls on RRef values), with W3's echo as a C program over TCP (ferry-bench/ceiling) beside the limits; Intel Xeon VM.
# Same steps as s7-s15:
# limits and the C echo (ferry-bench/ceiling), then per workload PyTorch (its scripts interleave modes default,tcp) and Ferry in both
# configurations (defaults: Unix sockets + shared memory for same-host peers; TCP with
# FERRY_UNIX_SOCKETS=0), 5 runs each, limits and the C echo again at the end. Every command holds the machine's CPU
# lock. Each Ferry configuration's AOT cache is trained by one discarded run first (train-*/).
# Run from the repository root after a build:
#   cp -r /work/shared/bench /tmp/s37bench && bash ferry-bench/results/2026-11-30-s37/measure.sh
set -u
S=${S:-/tmp/s37}
B=${B:-/tmp/s37bench}
R=${R:-5}
L=${L:-/work/cpu.lock}
FERRY=$(pwd)/ferry
mkdir -p $S/pytorch $S/limits
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
ferry() { # ferry <label> <workload> [env...]
  local label=$1 w=$2; shift 2
  log train-$label-$w; env "$@" flock $L $FERRY bench $w --repeats 1 --out $S/train-$label-$w > $S/train-$label-$w.log 2>&1
  log $w-$label;       env "$@" flock $L $FERRY bench $w --repeats $R --out $S/ferry-$label > $S/$w-$label.log 2>&1
}
log start $(git rev-parse --short HEAD)
log limits; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits.json > $S/limits.log 2>&1
log ceiling; flock $L python3 ferry-bench/ceiling/run_ceiling.py --repeats $R --out $S/limits/ceiling.json > $S/ceiling.log 2>&1
for w in w1 w2 w3; do
  case $w in w1) py=w1_latency;; w2) py=w2_async_throughput;; w3) py=w3_tensor_echo;; esac
  log $w-pt; flock $L /usr/bin/python3 $B/pytorch/$py.py --repeats $R --out $S/pytorch/$py.json > $S/$w-pt.log 2>&1
  ferry uds $w FERRY_SITTING=s37
  ferry tcp $w FERRY_SITTING=s37 FERRY_UNIX_SOCKETS=0
done
log limits-end; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits-end.json > $S/limits-end.log 2>&1
log ceiling-end; flock $L python3 ferry-bench/ceiling/run_ceiling.py --repeats $R --out $S/limits/ceiling-end.json > $S/ceiling-end.log 2>&1
log done
