#!/usr/bin/env bash
# The 2026-11-29 late sitting (issue 4): limits, then per workload PyTorch (its script interleaves
# modes default,tcp) and Ferry (defaults: Unix sockets + shared memory for same-host peers, AOT cache;
# TCP with FERRY_UNIX_SOCKETS=0; and for W1/W2 the defaults plus FERRY_EAGER_JIT=1), back to back,
# 5 runs each. Each command holds the machine's CPU lock (other sessions wait between commands).
# Run from the repository root after a build:
#   cp -r /work/shared/bench /tmp/s5bench && bash ferry-bench/results/2026-11-29-s5/measure.sh
# Ferry's workers start from the launcher's AOT cache (~/.cache/ferry/aot); it is emptied first, so
# run 1 of each workload's default configuration trains it (as the first run after a build does).
set -u
S=${S:-/tmp/s5}
B=${B:-/tmp/s5bench}
R=${R:-5}
L=${L:-/work/cpu.lock}
FERRY=$(pwd)/ferry
mkdir -p $S/pytorch $S/limits
rm -rf "${FERRY_AOT_CACHE:-$HOME/.cache/ferry/aot}"
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
log start
log limits; flock $L python3 $B/limits/run_limits.py --repeats $R --out $S/limits/limits.json > $S/limits.log 2>&1
log w1-pt;  flock $L /usr/bin/python3 $B/pytorch/w1_latency.py --repeats $R --out $S/pytorch/w1_latency.json > $S/w1-pt.log 2>&1
log w1-uds; flock $L $FERRY bench w1 --repeats $R --out $S/ferry-uds > $S/w1-uds.log 2>&1
log w1-eager; FERRY_EAGER_JIT=1 flock $L $FERRY bench w1 --repeats $R --out $S/ferry-eager > $S/w1-eager.log 2>&1
log w1-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench w1 --repeats $R --out $S/ferry-tcp > $S/w1-tcp.log 2>&1
log w2-pt;  flock $L /usr/bin/python3 $B/pytorch/w2_async_throughput.py --repeats $R --out $S/pytorch/w2_async_throughput.json > $S/w2-pt.log 2>&1
log w2-uds; flock $L $FERRY bench w2 --repeats $R --out $S/ferry-uds > $S/w2-uds.log 2>&1
log w2-eager; FERRY_EAGER_JIT=1 flock $L $FERRY bench w2 --repeats $R --out $S/ferry-eager > $S/w2-eager.log 2>&1
log w2-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench w2 --repeats $R --out $S/ferry-tcp > $S/w2-tcp.log 2>&1
log w4-pt;  flock $L /usr/bin/python3 $B/pytorch/w4_rref.py --repeats $R --out $S/pytorch/w4_rref.json > $S/w4-pt.log 2>&1
log w4-uds; flock $L $FERRY bench w4 --repeats $R --out $S/ferry-uds > $S/w4-uds.log 2>&1
log w3-pt;  flock $L /usr/bin/python3 $B/pytorch/w3_tensor_echo.py --repeats $R --out $S/pytorch/w3_tensor_echo.json > $S/w3-pt.log 2>&1
log w3-uds; flock $L $FERRY bench w3 --repeats $R --out $S/ferry-uds > $S/w3-uds.log 2>&1
log w3-tcp; FERRY_UNIX_SOCKETS=0 flock $L $FERRY bench w3 --repeats $R --out $S/ferry-tcp > $S/w3-tcp.log 2>&1
log done
