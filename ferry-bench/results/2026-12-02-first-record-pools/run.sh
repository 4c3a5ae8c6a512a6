#!/bin/bash
# first-calls probe: two decode/encode Fory pools (main) vs one (decoders = encoders), interleaved
set -u
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
S=/tmp/ab
$J/javac -d $S/classes -cp $S/two.jar ferry-bench/results/2026-12-02-w6/Probe.java && (cd $S/classes && $J/jar cf ../probe.jar .)
LIB="$(pwd)/ferry-cli/target/lib/*"
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
saved() { for _ in $(seq 1 120); do ls $S/aot-$1/*.training > /dev/null 2>&1 || return 0; sleep 1; done; }
for v in two one; do log train-$v; FERRY_AOT_CACHE=$S/aot-$v ./ferry run --nproc 2 --no-status -cp "$S/probe.jar:$S/$v.jar:$LIB" probe.Probe > $S/train-$v.log 2>&1; saved $v; done
for i in 1 2 3 4 5 6; do
  for v in two one; do [ $((i%2)) = 0 ] && v=$([ $v = two ] && echo one || echo two)
    log $v-$i; FERRY_AOT_CACHE=$S/aot-$v ./ferry run --nproc 2 --no-status -cp "$S/probe.jar:$S/$v.jar:$LIB" probe.Probe > $S/$v-$i.log 2>&1; saved $v
  done
done
log done
