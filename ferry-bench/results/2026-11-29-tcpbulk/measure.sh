#!/bin/bash
# The final sitting: limits, then W3 (3 runs each) for main and this branch over TCP, bulk 2, then UDS.
set -x
O=/tmp/tcpbulk/final; mkdir -p $O
rm -rf /tmp/tcpbulk-bench && cp -r /work/shared/bench /tmp/tcpbulk-bench
(cd /tmp/tcpbulk-bench && flock /work/cpu.lock python3 limits/run_limits.py --repeats 3 > $O/limits.log 2>&1; cp limits/results/limits.json $O/limits.json)
cd /tmp/tcpbulk
FERRY_UNIX_SOCKETS=0 flock /work/cpu.lock ./runbench.sh main bench w3 --repeats 3 --out $O/main-tcp > $O/main-tcp.log 2>&1
FERRY_UNIX_SOCKETS=0 flock /work/cpu.lock ./runbench.sh final1 bench w3 --repeats 3 --out $O/branch-tcp > $O/branch-tcp.log 2>&1
FERRY_UNIX_SOCKETS=0 FERRY_BULK_CONNECTIONS=2 flock /work/cpu.lock ./runbench.sh final1 bench w3 --repeats 3 --out $O/branch-tcp-bulk2 > $O/branch-tcp-bulk2.log 2>&1
flock /work/cpu.lock ./runbench.sh main bench w3 --repeats 3 --out $O/main-uds > $O/main-uds.log 2>&1
flock /work/cpu.lock ./runbench.sh final1 bench w3 --repeats 3 --out $O/branch-uds > $O/branch-uds.log 2>&1
echo done
