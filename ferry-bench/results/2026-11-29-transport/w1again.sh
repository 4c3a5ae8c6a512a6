#!/usr/bin/env bash
S=/tmp/sit; FERRY=/work/wt-transport/ferry
log() { echo "$(date -u +%H:%M:%S) $*" >> $S/progress.log; }
log w1b-start; cat /proc/loadavg >> $S/progress.log
log w1b-limits; python3 /tmp/bench/limits/run_limits.py --repeats 5 --out $S/w1b/limits.json > $S/w1b-limits.log 2>&1
log w1b-pt;  /usr/bin/python3 /tmp/bench/pytorch/w1_latency.py --repeats 5 --out $S/w1b/pytorch/w1_latency.json > $S/w1b-pt.log 2>&1
log w1b-uds; FERRY_UNIX_SOCKETS=1 $FERRY bench w1 --repeats 5 --out $S/w1b/ferry-uds > $S/w1b-uds.log 2>&1
log w1b-tcp; FERRY_UNIX_SOCKETS=0 $FERRY bench w1 --repeats 5 --out $S/w1b/ferry-tcp > $S/w1b-tcp.log 2>&1
log w1b-w2uds; FERRY_UNIX_SOCKETS=1 $FERRY bench w2 --repeats 5 --out $S/w1b/ferry-uds > $S/w1b-w2uds.log 2>&1
log w1b-done; cat /proc/loadavg >> $S/progress.log
