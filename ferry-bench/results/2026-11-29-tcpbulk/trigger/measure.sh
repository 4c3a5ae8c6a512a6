#!/bin/bash
# Runs on a build of commit 19c7ec3, which read the collection trigger from FERRY_X_COLLECT_MIB (a diagnostic switch, since removed).
# Same sitting, after final.sh: the collection threshold, 64 vs 170 MiB (snapshot dbg2 has the knob), full W3 over TCP, interleaved.
O=/tmp/tcpbulk/final; cd /tmp/tcpbulk
while pgrep -f "final.sh" >/dev/null; do sleep 5; done
for r in 1 2 3; do
  for c in 64 170; do
    FERRY_X_COLLECT_MIB=$c FERRY_UNIX_SOCKETS=0 flock /work/cpu.lock ./runbench.sh dbg2 bench w3 --repeats 1 --out $O/c$c-$r > $O/c$c-$r.log 2>&1
  done
done
echo done
