#!/bin/bash
# Second default-mode set, 19:26-19:32 UTC (5 pairs, alternating order); results set2-*.json.
out=/tmp/w3r/ab4; mkdir -p $out
for t in branch base; do
  tree=/work/wt-w3; [ $t = base ] && tree=/work/wt-w3-base
  cd $tree && flock /work/cpu.lock ./ferry bench w3 --repeats 1 --out $out/train-$t > $out/train-$t.log 2>&1
  echo "$(date +%T) train-$t train=$(grep -c 'AOTConfiguration recorded' $out/train-$t.log)" >> $out/progress.txt
done
for i in 1 2 3 4 5; do
  for t in branch base; do
    [ $((i % 2)) = 0 ] && { [ $t = branch ] && t=base || t=branch; }
    tree=/work/wt-w3; [ $t = base ] && tree=/work/wt-w3-base
    cd $tree && flock /work/cpu.lock ./ferry bench w3 --repeats 1 --out $out/uds-$t-$i > $out/uds-$t-$i.log 2>&1
    echo "$(date +%T) uds-$t-$i train=$(grep -c 'AOTConfiguration recorded' $out/uds-$t-$i.log) $(grep -E '^  64KiB.median_us|^  1MiB.GB_per_s|^  16MiB.GB_per_s|^  128MiB.GB_per_s' $out/uds-$t-$i.log | awk '{print $1,$2}' | tr '\n' ' ')" >> $out/progress.txt
  done
done
echo done >> $out/progress.txt
