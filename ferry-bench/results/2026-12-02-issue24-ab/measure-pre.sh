#!/usr/bin/env bash
# After measure.sh: W1 and W2 over Unix sockets, main just before issue 24's transport work landed
# (pre: d145596, which has everything else the other issues landed since 20d5290) against new, to
# tell issue 24's share of measure.sh's differences from the rest. Same method as measure.sh.
# Run as: flock /work/lead/heavy.lock bash measure-pre.sh
set -u
AB=${AB:-/tmp/tr-ab}
S=${S:-$AB/out}
R=${R:-5}
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $S/progress.log; }
one() { # one <side> <workload> <out>
  local side=$1 w=$2 out=$3
  log "$side uds $w -> $out"
  (cd $AB/$side && FERRY_AOT_CACHE=$AB/aot-$side ./ferry bench $w --repeats 1 --out $out > $out.log 2>&1) \
      || log "FAILED $side uds $w"
}
for w in w1 w2; do one pre $w $S/train-pre-uds-$w; done
for round in $(seq 1 $R); do
  if [ $((round % 2)) = 1 ]; then order="pre new"; else order="new pre"; fi
  for w in w1 w2; do
    for side in $order; do one $side $w $S/$side-uds-$w-pre$round; done
  done
done
log pre-done
