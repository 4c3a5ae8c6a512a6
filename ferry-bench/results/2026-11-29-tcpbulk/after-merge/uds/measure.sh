#!/bin/bash
# After the merge: W3 with the default (Unix sockets + shared memory) for main's tip and the branch, interleaved.
O=/tmp/tcpbulk/postuds; mkdir -p $O; cd /tmp/tcpbulk
for r in 1 2; do
  for s in main2 post1; do
    flock /work/cpu.lock ./runbench.sh $s bench w3 --repeats 1 --out $O/$s-$r > $O/$s-$r.log 2>&1
  done
done
echo done
