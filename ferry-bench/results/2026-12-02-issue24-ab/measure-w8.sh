#!/usr/bin/env bash
# W8 on both sides, after measure.sh (whose baseline side could not run W8: the baseline's
# BenchMain checks workload names against its own list). base8: the baseline 20d5290 with
# ferry-bench's W8 cherry-picked and named in BenchMain's list (bench code only); new: as in
# measure.sh. One discarded run per side and configuration trains its AOT cache, then 5 rounds,
# sides alternating. Run as: flock /work/lead/heavy.lock bash measure-w8.sh
set -u
AB=${AB:-/tmp/tr-ab}
S=${S:-$AB/out}
R=${R:-5}
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
one() { # one <side> <config> <out>
  local side=$1 config=$2 out=$3 extra=() flags=()
  [ "$config" = tcp ] && [ "$side" = base8 ] && extra=(FERRY_UNIX_SOCKETS=0)
  [ "$config" = tcp ] && [ "$side" = new ] && flags=(--tcp)
  log "$side $config w8 -> $out"
  (cd $AB/$side && env "${extra[@]}" FERRY_AOT_CACHE=$AB/aot-$side ./ferry bench w8 --repeats 1 "${flags[@]}" --out $out \
      > $out.log 2>&1) || log "FAILED $side $config w8"
}
for config in uds tcp; do one base8 $config $S/train-base8-$config-w8; done
for round in $(seq 1 $R); do
  if [ $((round % 2)) = 1 ]; then order="base8 new"; else order="new base8"; fi
  for config in uds tcp; do
    for side in $order; do one $side $config $S/$side-$config-w8-$round; done
  done
done
log w8-done
