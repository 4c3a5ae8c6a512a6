#!/usr/bin/env bash
# The 2026-11-29 ~10:35 UTC sitting for issue 4 (wt/transport): limits, then per workload PyTorch
# (default,tcp interleaved by its script) and Ferry over UDS and over TCP. At the time UDS was the default;
# it is opt-in now, so the UDS lines set FERRY_UNIX_SOCKETS=1 (equivalent to what ran).
set -u
S=/tmp/sit
FERRY=/work/wt-transport/ferry
log() { echo "$(date -u +%H:%M:%S) $*" >> $S/progress.log; }
log start; cat /proc/loadavg >> $S/progress.log
log limits;  python3 /tmp/bench/limits/run_limits.py --repeats 5 --out $S/limits/limits.json > $S/limits.log 2>&1
log w1-pt;   /usr/bin/python3 /tmp/bench/pytorch/w1_latency.py --repeats 5 --out $S/pytorch/w1_latency.json > $S/w1-pt.log 2>&1
log w1-uds;  FERRY_UNIX_SOCKETS=1 $FERRY bench w1 --repeats 5 --out $S/ferry-uds > $S/w1-uds.log 2>&1
log w1-tcp;  FERRY_UNIX_SOCKETS=0 $FERRY bench w1 --repeats 5 --out $S/ferry-tcp > $S/w1-tcp.log 2>&1
log w2-pt;   /usr/bin/python3 /tmp/bench/pytorch/w2_async_throughput.py --repeats 5 --out $S/pytorch/w2_async_throughput.json > $S/w2-pt.log 2>&1
log w2-uds;  FERRY_UNIX_SOCKETS=1 $FERRY bench w2 --repeats 5 --out $S/ferry-uds > $S/w2-uds.log 2>&1
log w2-tcp;  FERRY_UNIX_SOCKETS=0 $FERRY bench w2 --repeats 5 --out $S/ferry-tcp > $S/w2-tcp.log 2>&1
log w3-pt;   /usr/bin/python3 /tmp/bench/pytorch/w3_tensor_echo.py --repeats 5 --out $S/pytorch/w3_tensor_echo.json > $S/w3-pt.log 2>&1
log w3-tcp;  FERRY_UNIX_SOCKETS=0 $FERRY bench w3 --repeats 5 --out $S/ferry-tcp > $S/w3-tcp.log 2>&1
log w3-uds;  FERRY_UNIX_SOCKETS=1 $FERRY bench w3 --repeats 5 --out $S/ferry-uds > $S/w3-uds.log 2>&1
log done; cat /proc/loadavg >> $S/progress.log
