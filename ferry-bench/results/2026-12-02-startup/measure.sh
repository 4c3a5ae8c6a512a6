#!/usr/bin/env bash
# Sitting 2026-12-02-startup (issue 26): start-up against its floor. Interleaved run by run:
#  - W6 init at 2, 4, 8 workers: the plain-JDK floor (InitFloor.java), PyTorch over TCP, Ferry;
#  - the demo's second run, and its floor: a launcher JVM that starts 3 JVMs that meet and exit
#    (InitFloor 3, wall time of the whole command);
#  - a cold worker's first calls (../2026-12-02-w6/Probe.java) with three builds of ferry-rpc:
#    Fory's serializers generated at once (SYNC_JAR, as on main), in the background (ASYNC_JAR:
#    withAsyncCompilation(true)) or never (NOCG_JAR: withCodegen(false)), each variant's AOT cache
#    trained by one discarded run; each build's codec in steady state (RecordCodecCost.java); the
#    demo on each build.
# Hold the machine's lock for the whole sitting, from the repository root after ./ferry build:
#   SYNC_JAR=... ASYNC_JAR=... NOCG_JAR=... flock /work/lead/heavy.lock bash ferry-bench/results/2026-12-02-startup/measure.sh
set -u
S=${S:-/tmp/startup-sitting}
B=${B:-/work/shared/bench}
R=${R:-3}
P=${P:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
FERRY=$(pwd)/ferry
JAVA_BIN=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin
mkdir -p $S/pytorch $S/probe $S/floor
AOT=${FERRY_AOT_CACHE:-$HOME/.cache/ferry/aot}
saved() { # waits (at most 2 min) until no AOT cache is being saved
  for _ in $(seq 1 120); do ls $AOT/*.training > /dev/null 2>&1 || return 0; sleep 1; done
}
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $S/progress.log; }
log start $(git rev-parse --short HEAD)
$JAVA_BIN/javac -d $S/floor/classes $HERE/InitFloor.java
log train; $FERRY bench w6 --repeats 1 --out $S/train > $S/train.log 2>&1
for i in $(seq 1 $R); do
  log floor-$i; for w in 2 4 8; do $JAVA_BIN/java -cp $S/floor/classes InitFloor $w 1; done > $S/floor-$i.log 2>&1
  log pytorch-$i; /usr/bin/python3 $B/pytorch/w6_init_shutdown.py --repeats 1 --modes tcp --out $S/pytorch/w6-$i.json > $S/pytorch-$i.log 2>&1
  log ferry-$i; $FERRY bench w6 --repeats 1 --out $S/ferry-$i > $S/ferry-$i.log 2>&1
done
# The demo: the first run after a build trains its cache (saved in the background), then timed runs,
# each beside its floor.
log demo-train; $FERRY demo > $S/demo-train.log 2>&1; saved
for i in $(seq 1 $R); do
  log demo-floor-$i; /usr/bin/time -f "floor wall %e s" $JAVA_BIN/java -cp $S/floor/classes InitFloor 3 1 > $S/demo-floor-$i.log 2>&1
  log demo-$i; /usr/bin/time -f "demo wall %e s" $FERRY demo > $S/demo-$i.log 2>&1
done
# First calls in a cold worker: Fory's serializers generated at once (sync, as on main), in the
# background (async), or never (nocg: Fory's interpreted serializers only), interleaved.
CP=$(ls ferry-rpc/target/ferry-rpc-*-SNAPSHOT.jar | grep -v -e sources -e javadoc -e tests)
$JAVA_BIN/javac -d $S/probe/classes -cp $CP $HERE/../2026-12-02-w6/Probe.java && (cd $S/probe/classes && $JAVA_BIN/jar cf ../probe.jar .)
LIB="$(pwd)/ferry-cli/target/lib/*"
VARIANTS="sync async nocg"
jar_of() { case $1 in sync) echo "$SYNC_JAR";; async) echo "$ASYNC_JAR";; nocg) echo "$NOCG_JAR";; esac; }
if [ -n "${SYNC_JAR:-}" ] && [ -n "${ASYNC_JAR:-}" ] && [ -n "${NOCG_JAR:-}" ]; then
  for v in $VARIANTS; do # each variant's own AOT cache, trained by one discarded run
    log ab-train-$v; $FERRY run --nproc 2 --no-status -cp "$S/probe/probe.jar:$(jar_of $v):$LIB" probe.Probe > $S/ab-train-$v.log 2>&1; saved
  done
  for i in $(seq 1 $P); do
    for v in $VARIANTS; do
      log ab-$v-$i; $FERRY run --nproc 2 --no-status -cp "$S/probe/probe.jar:$(jar_of $v):$LIB" probe.Probe > $S/ab-$v-$i.log 2>&1
    done
  done
  # Steady state of each build's codec on application records (RecordCodecCost.java), interleaved.
  $JAVA_BIN/javac -d $S/probe/rcc -cp "$CP:$LIB" $HERE/RecordCodecCost.java
  for i in $(seq 1 $R); do
    for v in $VARIANTS; do
      log rcc-$v-$i; $JAVA_BIN/java --enable-native-access=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
        -cp "$S/probe/rcc:$(jar_of $v):$LIB" probe.RecordCodecCost > $S/rcc-$v-$i.log 2>&1
    done
  done
  # The demo (HelloCluster: its nested relay is its first record, Greeting) on each build, as
  # 'ferry run -cp' with the build's jar first; each variant's cache trained by one discarded run.
  EX=$(ls ferry-examples/target/ferry-examples-*-SNAPSHOT.jar | grep -v -e sources -e javadoc -e tests)
  for v in $VARIANTS; do
    log demo-ab-train-$v; $FERRY run --nproc 3 -cp "$(jar_of $v):$(pwd)/$EX:$LIB" dev.ferry.examples.HelloCluster > $S/demo-ab-train-$v.log 2>&1; saved
  done
  for i in $(seq 1 $P); do
    for v in $VARIANTS; do
      log demo-ab-$v-$i; /usr/bin/time -f "demo wall %e s" $FERRY run --nproc 3 -cp "$(jar_of $v):$(pwd)/$EX:$LIB" dev.ferry.examples.HelloCluster > $S/demo-ab-$v-$i.log 2>&1
    done
  done
fi
log done
