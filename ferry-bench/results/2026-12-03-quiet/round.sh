#!/usr/bin/env bash
# One round of the quiet sitting (2026-12-03, evening), run under the machine's lock:
#   flock /work/lead/heavy.lock bash round.sh OUT WORKLOAD TAG SIDE...
# Runs `ferry bench WORKLOAD --repeats 1` once per SIDE in the order given (rounds rotate it), each
# side with its own AOT cache (/tmp/quiet-aot/WORKLOAD-SIDE, trained by a discarded run: TAG=train),
# into OUT/WORKLOAD/SIDE/TAG/. A side is a line of sides.txt: name|environment|JVM flags.
# SIDE=pytorch runs PyTorch's script for the workload (default transport) instead.
set -u
out=$1; w=$2; tag=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
export MAVEN_OPTS="-Dmaven.repo.local=/work/m2/w8"
log() { echo "$(date -u +%H:%M:%S) $* | load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/sitting.txt" >&2; }
mkdir -p "$out"
for s in "$@"; do
  dir="$out/$w/$s/$tag"; mkdir -p "$dir"
  log "start $w $s $tag"
  if [ "$s" = pytorch ]; then
    case $w in
      w5) /usr/bin/python3 /work/shared/bench/pytorch/w5_dist_autograd.py --repeats 1 --modes default --out "$dir/result.json" ;;
      w5heavy) /usr/bin/python3 "$repo/ferry-bench/pytorch/w5_variants.py" --variant heavy --repeats 1 --modes default --out "$dir/result.json" ;;
      w1) /usr/bin/python3 /work/shared/bench/pytorch/w1_latency.py --repeats 1 --modes default --out "$dir/result.json" ;;
    esac > "$dir/console.log" 2>&1
  else
    line=$(awk -F'|' -v s="$s" '$1 == s' "$here/sides.txt")
    IFS='|' read -r _ envs flags <<< "$line"
    args=(); for f in $flags; do args+=("--jvm-arg=$f"); done
    (cd "$repo" && env FERRY_AOT_CACHE=/tmp/quiet-aot/$w-$s $envs ./ferry bench "$w" --repeats 1 --out "$dir" "${args[@]}") > "$dir/console.log" 2>&1
    grep -q 'AOTConfiguration recorded' "$dir/console.log" && [ "$tag" != train ] && log "WARNING: $w $s $tag recorded a training"
  fi
  log "end $w $s $tag rc=$?"
done
