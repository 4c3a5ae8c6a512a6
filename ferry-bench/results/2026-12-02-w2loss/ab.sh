#!/usr/bin/env bash
# Interleaved A/B of ferry-bench workloads between built checkouts (2026-12-02, w2loss).
#   ab.sh OUT ROUNDS "w2 w1" name=/path/to/checkout name=/path ...
# Each side runs from its own checkout (built with mvn -DskipTests install, its
# ferry-examples/target/.ferry-built touched so ./ferry does not rebuild) with an AOT cache
# directory of its own, trained by one discarded run per workload (train-*); then ROUNDS rounds,
# each running every workload once per side, the sides' order rotated every round. Every run's
# start is logged with the 1/5/15-minute load average (progress.log).
# Run under the shared lock: flock /work/lead/heavy.lock bash ab.sh ...
set -u
out=$1 rounds=$2 workloads=$3; shift 3
sides=("$@")
mkdir -p "$out"
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/progress.log"; }
one() { # one name=path workload file
  local name=${1%%=*} dir=${1#*=} w=$2 file=$3
  log "$name $w -> $file"
  (cd "$dir" && FERRY_AOT_CACHE=$out/aot-$name ./ferry bench "$w" --repeats 1 --out "$file" > "$file.log" 2>&1) \
    || log "FAILED $name $w"
}
log "start ${sides[*]}"
for s in "${sides[@]}"; do
  [ -d "$out/aot-${s%%=*}" ] && continue
  for w in $workloads; do one "$s" "$w" "$out/train-${s%%=*}-$w"; done
done
n=${#sides[@]}
for r in $(seq 1 "$rounds"); do
  for w in $workloads; do
    for i in $(seq 0 $((n - 1))); do
      s=${sides[$(( (i + r) % n ))]}
      one "$s" "$w" "$out/${s%%=*}-$w-$r"
    done
  done
done
log done
