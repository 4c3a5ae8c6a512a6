#!/usr/bin/env bash
# The demo before and after fe870c1 (a worker JVM no longer waits up to a second for Netty's
# GlobalEventExecutor thread after shutdown), interleaved: ferry-rpc's jar built at fe870c1~1
# (BEFORE_JAR) and at fe870c1 (AFTER_JAR), first on the class path ./ferry demo gives its workers;
# each variant's AOT cache trained by one discarded run. From the repository root after ./ferry
# build, under the machine's lock:
#   BEFORE_JAR=... AFTER_JAR=... flock /work/lead/heavy.lock bash ferry-bench/results/2026-12-02-startup/exit-ab.sh
set -u
S=${S:-/tmp/exit-ab}
P=${P:-6}
FERRY=$(pwd)/ferry
mkdir -p $S
AOT=${FERRY_AOT_CACHE:-$HOME/.cache/ferry/aot}
saved() { for _ in $(seq 1 120); do ls $AOT/*.training > /dev/null 2>&1 || return 0; sleep 1; done; }
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $S/progress.log; }
CP=""
for m in ferry-cli ferry-examples ferry-bench; do # as the ferry script's classpath()
  for j in $(pwd)/$m/target/*.jar; do case "$j" in *-tests.jar|*-sources.jar|*-javadoc.jar) ;; *) CP="$CP:$j";; esac; done
  CP="$CP:$(pwd)/$m/target/lib/*"
done
jar_of() { case $1 in before) echo "$BEFORE_JAR";; after) echo "$AFTER_JAR";; esac; }
log start $(git rev-parse --short HEAD)
for v in before after; do
  log train-$v; $FERRY run --nproc 3 -cp "$(jar_of $v)$CP" dev.ferry.examples.HelloCluster > $S/train-$v.log 2>&1; saved
done
for i in $(seq 1 $P); do
  for v in before after; do
    log $v-$i; /usr/bin/time -f "demo wall %e s" $FERRY run --nproc 3 -cp "$(jar_of $v)$CP" dev.ferry.examples.HelloCluster > $S/$v-$i.log 2>&1
  done
done
log done
for v in before after; do
  echo "$v: $(grep -h 'demo wall' $S/$v-*.log | awk '{print $3}' | sort -n | tr '\n' ' ')"
done
