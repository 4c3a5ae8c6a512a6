#!/usr/bin/env bash
# Sitting w6 (2026-12-02; issue 26): start-up. W6 (init + shutdown of 2, 4, 8 workers) beside
# PyTorch's over TCP, interleaved run by run; the demo's second run; the first calls of a cold
# worker (Probe.java: the first call, the first one carrying a new record type, the first remote
# error). Ferry's workers start from the AOT cache, as `ferry run` and `ferry bench` do after one
# training run (train/, discarded). Hold the machine's lock for the whole sitting, from the
# repository root after ./ferry build:
#   flock /work/lead/heavy.lock bash ferry-bench/results/2026-12-02-w6/measure.sh
set -u
S=${S:-/tmp/w6sitting}
B=${B:-/work/shared/bench}
R=${R:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
FERRY=$(pwd)/ferry
JAVA_BIN=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin
mkdir -p $S/pytorch $S/probe
AOT=${FERRY_AOT_CACHE:-$HOME/.cache/ferry/aot}
saved() { # waits (at most 2 min) until no AOT cache is being saved
  for _ in $(seq 1 120); do ls $AOT/*.training > /dev/null 2>&1 || return 0; sleep 1; done
}
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $S/progress.log; }
log start $(git rev-parse --short HEAD)
log train; $FERRY bench w6 --repeats 1 --out $S/train > $S/train.log 2>&1
for i in $(seq 1 $R); do
  log pytorch-$i; /usr/bin/python3 $B/pytorch/w6_init_shutdown.py --repeats 1 --modes tcp --out $S/pytorch/w6-$i.json > $S/pytorch-$i.log 2>&1
  log ferry-$i;   $FERRY bench w6 --repeats 1 --out $S/ferry-$i > $S/ferry-$i.log 2>&1
done
# The demo: the first run after a build trains its cache (saved in the background), then timed runs.
log demo-train; $FERRY demo > $S/demo-train.log 2>&1; saved
for i in $(seq 1 $R); do
  log demo-$i; /usr/bin/time -f "demo wall %e s" $FERRY demo > $S/demo-$i.log 2>&1
done
# First calls in a cold worker, through ferry run (the probe's own cache trained by its first run).
CP=$(ls ferry-rpc/target/ferry-rpc-*-SNAPSHOT.jar | grep -v -e sources -e javadoc -e tests)
$JAVA_BIN/javac -d $S/probe/classes -cp $CP $HERE/Probe.java && (cd $S/probe/classes && $JAVA_BIN/jar cf ../probe.jar .)
log probe-train; $FERRY run --nproc 2 --no-status -cp $S/probe/probe.jar probe.Probe > $S/probe-train.log 2>&1; saved
for i in $(seq 1 $R); do
  log probe-$i; $FERRY run --nproc 2 --no-status -cp $S/probe/probe.jar probe.Probe > $S/probe-$i.log 2>&1
done
# Before / after the hand-written serializer of remote errors (9b48f1e), interleaved: BEFORE_JAR is
# ferry-rpc's jar built just before 4b7eb51 (the sitting used bc05020, that branch before its rebase; git archive <commit> | tar -x -C DIR; mvn -pl ferry-rpc package).
if [ -n "${BEFORE_JAR:-}" ]; then
  LIB="$(pwd)/ferry-cli/target/lib/*"
  for v in before after; do # each variant's own AOT cache, trained by one discarded run
    jar=$BEFORE_JAR; [ $v = after ] && jar=$(pwd)/$CP
    $FERRY run --nproc 2 --no-status -cp "$S/probe/probe.jar:$jar:$LIB" probe.Probe > $S/ab-train-$v.log 2>&1; saved
  done
  for i in $(seq 1 $R); do
    for v in before after; do
      jar=$BEFORE_JAR; [ $v = after ] && jar=$(pwd)/$CP
      log ab-$v-$i; $FERRY run --nproc 2 --no-status -cp "$S/probe/probe.jar:$jar:$LIB" probe.Probe > $S/ab-$v-$i.log 2>&1
    done
  done
fi
log done
