#!/bin/bash
# Four more default-mode (Unix socket + shared memory) pairs, 19:14-19:17 UTC, with FERRY_W3_TRACE=1.
out=/tmp/w3r/ab; 
for i in 4 5 6 7; do
  for t in base branch; do
    tree=/work/wt-w3; [ $t = base ] && tree=/work/wt-w3-base
    cd $tree && FERRY_W3_TRACE=1 flock /work/cpu.lock ./ferry bench w3 --repeats 1 --out $out/uds-$t-$i > $out/uds-$t-$i.log 2>&1
    echo "$(date +%T) uds-$t-$i train=$(grep -c 'AOTConfiguration recorded' $out/uds-$t-$i.log) $(grep -E '^  64KiB.median_us|^  1MiB.GB_per_s|^  16MiB.GB_per_s|^  128MiB.GB_per_s' $out/uds-$t-$i.log | awk '{print $1,$2}' | tr '\n' ' ')" >> $out/progress2.txt
  done
done
echo done >> $out/progress2.txt
