#!/usr/bin/env bash
S=/tmp/sit; FERRY=/work/wt-transport/ferry
log() { echo "$(date -u +%H:%M:%S) $*" >> $S/progress.log; }
for i in 1 2 3; do
  log spin-off-$i; FERRY_UNIX_SOCKETS=1 FERRY_SPIN_MICROS=0 FERRY_AWAIT_SPIN_MICROS=0 $FERRY bench w1 --repeats 1 --out $S/spin-off-$i > /dev/null 2>&1
  log spin-await-$i; FERRY_UNIX_SOCKETS=1 FERRY_SPIN_MICROS=0 FERRY_AWAIT_SPIN_MICROS=50 $FERRY bench w1 --repeats 1 --out $S/spin-await-$i > /dev/null 2>&1
  log spin-both-$i; FERRY_UNIX_SOCKETS=1 FERRY_SPIN_MICROS=50 FERRY_AWAIT_SPIN_MICROS=50 $FERRY bench w1 --repeats 1 --out $S/spin-both-$i > /dev/null 2>&1
done
log spin-done; cat /proc/loadavg >> $S/progress.log
