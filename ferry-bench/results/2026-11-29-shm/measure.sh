#!/usr/bin/env bash
# The 2026-11-29 shared-memory sitting (issue 4, W3): PyTorch `default` (TensorPipe shm + cma), then
# Ferry with the same-host shared-memory channel (the default) and with it off (FERRY_SHM=0: Unix
# socket only, as on main), back to back, each under the machine's CPU lock. Run from the repository root:
#   cp -r /work/shared/bench /tmp/shm-bench && bash ferry-bench/results/2026-11-29-shm/measure.sh
set -u
S=${S:-/tmp/shm-sitting}
B=${B:-/tmp/shm-bench}
R=${R:-5}
FERRY=$(pwd)/ferry
LOCK="flock /work/cpu.lock"
mkdir -p $S/pytorch
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
log start
log w3-pt;      $LOCK /usr/bin/python3 $B/pytorch/w3_tensor_echo.py --repeats $R --modes default --out $S/pytorch/w3_tensor_echo.json > $S/w3-pt.log 2>&1
log w3-shm;     $LOCK $FERRY bench w3 --repeats $R --out $S/ferry-shm > $S/w3-shm.log 2>&1
log w3-shm-off; FERRY_SHM=0 $LOCK $FERRY bench w3 --repeats $R --out $S/ferry-uds > $S/w3-uds.log 2>&1
log done
