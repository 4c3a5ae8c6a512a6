#!/bin/bash
# W8 (and W1) with spinTime 200 us (main) against spinTime 0 (/work/ab/spin0), interleaved.
S=/work/lead/spinab
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="main spin0"; else order="spin0 main"; fi
  for side in $order; do
    dir=/work/main; [ $side = spin0 ] && dir=/work/ab/spin0
    echo "$(date -u +%T) $side r$r load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log
    (cd $dir && ./ferry bench w8 w1 --repeats 1 --out $S/$side-$r > $S/$side-$r.log 2>&1) || echo "FAILED $side $r" >> $S/progress.log
  done
done
echo "$(date -u +%T) done load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log
