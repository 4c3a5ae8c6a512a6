#!/bin/bash
# After merging main (c0c407e) into the branch: limits, then W3 over TCP for main's tip and the branch, interleaved run by run.
O=/tmp/tcpbulk/post; mkdir -p $O; cd /tmp/tcpbulk
rm -rf /tmp/tcpbulk-bench && cp -r /work/shared/bench /tmp/tcpbulk-bench
(cd /tmp/tcpbulk-bench && flock /work/cpu.lock python3 limits/run_limits.py --repeats 3 > $O/limits.log 2>&1; cp limits/results/limits.json $O/limits.json)
for r in 1 2 3; do
  for s in main2 post1; do
    FERRY_UNIX_SOCKETS=0 flock /work/cpu.lock ./runbench.sh $s bench w3 --repeats 1 --out $O/$s-$r > $O/$s-$r.log 2>&1
  done
done
echo done
