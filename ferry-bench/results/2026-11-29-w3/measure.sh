#!/bin/bash
# As run on 2026-11-29 18:48-19:08 UTC: /work/wt-w3 = branch wt/w3 (886add7 + trace), /work/wt-w3-base = main (0e3f823),
# /tmp/w3lim = a copy of shared/bench/limits. Run after retraining main's AOT cache on a full W3 run (an
# earlier set, discarded, had met a main cache trained on a FERRY_W3_SIZES subset).
# aggregate.py DIR branch base (or uds-branch uds-base) prints the tables.
# A/B: full W3 over TCP, interleaved; plus limits
out=/tmp/w3r/ab; mkdir -p $out
cd /tmp/w3lim && flock /work/cpu.lock python3 run_limits.py --repeats 3 > $out/limits-before.txt 2>&1; cp results/limits.json $out/limits-before.json
for i in 1 2 3 4 5; do
  for t in branch base; do
    tree=/work/wt-w3; [ $t = base ] && tree=/work/wt-w3-base
    [ $((i % 2)) = 0 ] && { [ $t = branch ] && tree=/work/wt-w3-base || tree=/work/wt-w3; t2=$([ $t = branch ] && echo base || echo branch); t=$t2; }
    cd $tree && FERRY_UNIX_SOCKETS=0 flock /work/cpu.lock ./ferry bench w3 --repeats 1 --out $out/$t-$i > $out/$t-$i.log 2>&1
    echo "$(date +%T) $t-$i train=$(grep -c 'AOTConfiguration recorded' $out/$t-$i.log) $(grep -E '^  16MiB.GB_per_s|^  128MiB.GB_per_s' $out/$t-$i.log | awk '{print $1,$2}' | tr '\n' ' ')" >> $out/progress.txt
  done
done
cd /tmp/w3lim && flock /work/cpu.lock python3 run_limits.py --repeats 3 > $out/limits-after.txt 2>&1; cp results/limits.json $out/limits-after.json
for i in 1 2 3; do
  for t in branch base; do
    tree=/work/wt-w3; [ $t = base ] && tree=/work/wt-w3-base
    cd $tree && flock /work/cpu.lock ./ferry bench w3 --repeats 1 --out $out/uds-$t-$i > $out/uds-$t-$i.log 2>&1
    echo "$(date +%T) uds-$t-$i train=$(grep -c 'AOTConfiguration recorded' $out/uds-$t-$i.log) $(grep -E '^  16MiB.GB_per_s|^  128MiB.GB_per_s' $out/uds-$t-$i.log | awk '{print $1,$2}' | tr '\n' ' ')" >> $out/progress.txt
  done
done
echo done >> $out/progress.txt
