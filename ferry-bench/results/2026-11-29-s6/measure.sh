#!/usr/bin/env bash
# The 2026-11-29 night sitting (issue 4): limits, then per workload PyTorch (its script interleaves
# modes default,tcp) and Ferry (defaults: Unix sockets + shared memory for same-host peers; TCP with
# FERRY_UNIX_SOCKETS=0), back to back, 5 runs each. Each command holds the machine's CPU lock
# (other sessions wait between commands). Run from the repository root after a build:
#   cp -r /work/shared/bench /tmp/s6bench && bash ferry-bench/results/2026-11-29-s6/measure.sh [main|w3|tcp|merged]
# Ferry's workers start from the launcher's AOT cache (~/.cache/ferry/aot). Unlike the s5 sitting,
# each workload's cache is trained by one discarded run before its 5 measured runs (what any run
# after the first one of a build sees); that run's figures are kept in train-*/ for reference.
set -u
S=${S:-/tmp/s6}
B=${B:-/tmp/s6bench}
R=${R:-5}
L=${L:-/work/cpu.lock}
FERRY=$(pwd)/ferry
PART=${1:-main}
mkdir -p $S/pytorch $S/limits
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
train() { log train-$1; flock $L $FERRY bench $1 --repeats 1 --out $S/train-$1 > $S/train-$1.log 2>&1; }
log start $PART $(git rev-parse --short HEAD)
if [ "$PART" = main ]; then
log limits; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits.json > $S/limits.log 2>&1
log w1-pt;  flock $L /usr/bin/python3 $B/pytorch/w1_latency.py --repeats $R --out $S/pytorch/w1_latency.json > $S/w1-pt.log 2>&1
train w1
log w1-uds; flock $L $FERRY bench w1 --repeats $R --out $S/ferry-uds > $S/w1-uds.log 2>&1
log w1-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench w1 --repeats $R --out $S/ferry-tcp > $S/w1-tcp.log 2>&1
log w2-pt;  flock $L /usr/bin/python3 $B/pytorch/w2_async_throughput.py --repeats $R --out $S/pytorch/w2_async_throughput.json > $S/w2-pt.log 2>&1
train w2
log w2-uds; flock $L $FERRY bench w2 --repeats $R --out $S/ferry-uds > $S/w2-uds.log 2>&1
log w2-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench w2 --repeats $R --out $S/ferry-tcp > $S/w2-tcp.log 2>&1
log w4-pt;  flock $L /usr/bin/python3 $B/pytorch/w4_rref.py --repeats $R --out $S/pytorch/w4_rref.json > $S/w4-pt.log 2>&1
train w4
log w4-uds; flock $L $FERRY bench w4 --repeats $R --out $S/ferry-uds > $S/w4-uds.log 2>&1
elif [ "$PART" = merged ]; then
# After merging wt/w3 (large messages over TCP pace their chunks): W3 and W2, both configurations.
log limits-merged; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits-merged.json > $S/limits-merged.log 2>&1
for w in w3 w2; do
  log train-merged-$w; flock $L $FERRY bench $w --repeats 1 --out $S/train-merged-$w > $S/train-merged-$w.log 2>&1
  log $w-merged-uds; flock $L $FERRY bench $w --repeats $R --out $S/merged-uds > $S/$w-merged-uds.log 2>&1
  log train-merged-tcp-$w; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench $w --repeats 1 --out $S/train-merged-tcp-$w > $S/train-merged-tcp-$w.log 2>&1
  log $w-merged-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench $w --repeats $R --out $S/merged-tcp > $S/$w-merged-tcp.log 2>&1
done
elif [ "$PART" = tcp ]; then
# After 72d8414 the AOT cache key includes FERRY_* settings: the TCP configuration trains its own.
log limits-tcp; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits-tcp.json > $S/limits-tcp.log 2>&1
for w in w1 w2 w3; do
  log train-tcp-$w; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench $w --repeats 1 --out $S/train-tcp-$w > $S/train-tcp-$w.log 2>&1
  log $w-tcp-own; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench $w --repeats $R --out $S/ferry-tcp-own > $S/$w-tcp-own.log 2>&1
done
else
log limits-w3; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits-w3.json > $S/limits-w3.log 2>&1
log w3-pt;  flock $L /usr/bin/python3 $B/pytorch/w3_tensor_echo.py --repeats $R --out $S/pytorch/w3_tensor_echo.json > $S/w3-pt.log 2>&1
train w3
log w3-uds; flock $L $FERRY bench w3 --repeats $R --out $S/ferry-uds > $S/w3-uds.log 2>&1
log w3-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench w3 --repeats $R --out $S/ferry-tcp > $S/w3-tcp.log 2>&1
fi
log done $PART
