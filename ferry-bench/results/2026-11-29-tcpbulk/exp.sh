#!/bin/bash
# usage: exp.sh OUTDIR ROUNDS "name|ENV=.. ENV2=..|jvmargs" ...
out=$1; rounds=$2; shift 2
mkdir -p $out
cd /work/wt-tcpbulk
for r in $(seq 1 $rounds); do
  for v in "$@"; do
    IFS='|' read name envs jargs <<< "$v"
    env FERRY_UNIX_SOCKETS=${UDS:-0} FERRY_W3_SIZES=${SIZES:-1MiB,16MiB,128MiB} FERRY_W3_FORMS=buffer FERRY_POOL_DEBUG=1 $envs flock /work/cpu.lock /tmp/tcpbulk/runbench.sh ${SNAP:-feat1} bench w3 --repeats 1 --out $out/$name-$r $jargs > $out/$name-$r.log 2>&1
    echo "$name r$r: $(grep -E '^\s+(1MiB|16MiB|128MiB)\.GB_per_s' $out/$name-$r.log | awk '{printf "%s=%s ", $1, $2}') $(grep -o 'gc=[0-9]* gcMs=[0-9]*' $out/$name-$r.log | head -1) $(grep -o 'fresh=[0-9]*' $out/$name-$r.log | head -1)"
  done
done
