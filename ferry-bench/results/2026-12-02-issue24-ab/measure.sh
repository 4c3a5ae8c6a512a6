#!/usr/bin/env bash
# Issue 24's A/B (2026-12-02): the pre-refactor baseline 20d5290 (tag transport-baseline, plus
# ferry-bench's W8 cherry-picked onto it: bench code only) against main after issue 24's transport
# work (25b2815). Each side is a clone built with ./ferry build, with an AOT cache directory of its
# own trained by one discarded run per workload and configuration; then 5 rounds, each running
# every workload once on each side, the sides alternating which goes first. The whole sitting
# holds the machine's shared lock for heavy jobs (run it as: flock /work/lead/heavy.lock bash measure.sh). PyTorch's W8 (ferry-bench/pytorch) and W3 (default mode) run 5 times at the end.
#   git clone /work/main /tmp/tr-ab/base && (cd /tmp/tr-ab/base && git checkout 20d5290 && <cherry-pick W8>)
#   git clone /work/main /tmp/tr-ab/new && (cd /tmp/tr-ab/new && git checkout 25b2815)
#   (cd /tmp/tr-ab/base && ./ferry build); (cd /tmp/tr-ab/new && ./ferry build)
#   cp -r /work/shared/bench /tmp/tr-ab/bench && cp ferry-bench/pytorch/w8_small_behind_large.py /tmp/tr-ab/bench/pytorch/
#   bash ferry-bench/results/2026-12-02-issue24-ab/measure.sh
set -u
AB=${AB:-/tmp/tr-ab}
S=${S:-$AB/out}
R=${R:-5}
mkdir -p $S
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
# one <side> <config> <workload> <out>: one run of a workload on one side
one() {
  local side=$1 config=$2 w=$3 out=$4 extra=()
  [ "$config" = tcp ] && [ "$side" = base ] && extra=(FERRY_UNIX_SOCKETS=0) # the baseline's switch
  local flags=()
  [ "$config" = tcp ] && [ "$side" = new ] && flags=(--tcp)
  log "$side $config $w -> $out"
  (cd $AB/$side && env "${extra[@]}" FERRY_AOT_CACHE=$AB/aot-$side ./ferry bench $w --repeats 1 "${flags[@]}" --out $out \
      > $out.log 2>&1) || log "FAILED $side $config $w"
}
runs="uds:w1 tcp:w1 uds:w2 uds:w3 uds:w4 uds:w8 tcp:w8"
log start base=$(git -C $AB/base rev-parse --short HEAD) new=$(git -C $AB/new rev-parse --short HEAD)
for side in base new; do
  for cw in $runs; do one $side ${cw%%:*} ${cw#*:} $S/train-$side-${cw%%:*}-${cw#*:}; done
done
for round in $(seq 1 $R); do
  if [ $((round % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for cw in $runs; do
    for side in $order; do one $side ${cw%%:*} ${cw#*:} $S/$side-${cw%%:*}-${cw#*:}-$round; done
  done
done
log pytorch-w8
/usr/bin/python3 $AB/bench/pytorch/w8_small_behind_large.py --repeats $R --out $S/pytorch-w8.json > $S/pytorch-w8.log 2>&1 || log "FAILED pytorch w8"
log pytorch-w3
/usr/bin/python3 $AB/bench/pytorch/w3_tensor_echo.py --repeats $R --modes default --out $S/pytorch-w3.json > $S/pytorch-w3.log 2>&1 || log "FAILED pytorch w3"
log done
