#!/bin/bash
# Second sitting, after the contention check (commit 91bb8b2/d918612).
S=/tmp/small/final2; mkdir -p $S/pytorch
log() { echo "$(date -u +%H:%M:%S) $* $(cat /proc/loadavg)" >> $S/progress.log; }
log start
cd /tmp/small-bench && flock /work/cpu.lock python3 limits/run_limits.py --repeats 3 > $S/limits.log 2>&1; cp limits/results/limits.json $S/limits.json
log limits-done
cd /work/wt-small && flock /work/cpu.lock ./ferry bench w1 --repeats 3 --out $S/new-uds > $S/new-w1.log 2>&1
log new-w1-done
cd /work/wt-small && FERRY_UNIX_SOCKETS=0 flock /work/cpu.lock ./ferry bench w1 --repeats 3 --out $S/new-tcp > $S/new-w1tcp.log 2>&1
log new-w1tcp-done
cd /tmp/small-base && flock /work/cpu.lock ./ferry bench w2 --repeats 3 --out $S/main-uds > $S/main-w2.log 2>&1
log main-w2-done
cd /work/wt-small && flock /work/cpu.lock ./ferry bench w2 --repeats 3 --out $S/new-uds > $S/new-w2.log 2>&1
log new-w2-done
cd /tmp/small-bench && flock /work/cpu.lock /usr/bin/python3 pytorch/w2_async_throughput.py --repeats 3 --modes tcp --out $S/pytorch/w2_async_throughput.json > $S/pt-w2.log 2>&1
log pt-w2-done
