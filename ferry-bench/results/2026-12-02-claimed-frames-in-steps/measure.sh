#!/usr/bin/env bash
# A/B for claimed frames taken in steps (issue 23, branch framemem): W3 over TCP (the route whose
# large frames go through FrameAssembler's chunks; over a Unix socket tensors of 256 KiB or more
# travel in shared memory), base = main 59ad477, new = framemem 4541da0. Each side a clone built
# with ./ferry build, an AOT cache of its own trained by one discarded run; then 5 rounds of one
# --repeats 1 run per side, alternating which goes first. Run under the machine's heavy lock:
#   git clone /work/main /tmp/framemem-ab/base; git clone /work/wt/framemem /tmp/framemem-ab/new (branch framemem)
#   (cd /tmp/framemem-ab/$side && ./ferry build) for both sides
#   flock /work/lead/heavy.lock bash ferry-bench/results/2026-12-02-claimed-frames-in-steps/measure.sh
set -u
AB=${AB:-/tmp/framemem-ab}
S=${S:-$AB/out}
R=${R:-5}
mkdir -p $S
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
one() {
  local side=$1 out=$2 cache=$AB/aot-$side
  [ "${NO_AOT:-0}" = 1 ] && cache=0 # no AOT cache: no training run's profile on either side
  log "$side w3 tcp -> $out"
  (cd $AB/$side && FERRY_AOT_CACHE=$cache ./ferry bench w3 --tcp --repeats 1 --out $out > $out.log 2>&1) \
      || log "FAILED $side"
}
log start base=$(git -C $AB/base rev-parse --short HEAD) new=$(git -C $AB/new rev-parse --short HEAD)
for side in ${TRAIN_ORDER:-base new}; do one $side $S/train-$side; done
for round in $(seq 1 $R); do
  if [ $((round % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for side in $order; do one $side $S/$side-$round; done
done
log done
