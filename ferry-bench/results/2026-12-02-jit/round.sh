#!/usr/bin/env bash
# One round of the sitting, run under the machine's lock and released after it:
#   flock /work/lead/heavy.lock bash round.sh OUT WORKLOAD TAG VARIANT...
# Runs `ferry bench WORKLOAD --repeats 1` once per VARIANT (in the order given, so rounds rotate
# the order), each with its own AOT cache directory (/tmp/jit-aot/WORKLOAD-VARIANT, trained by a
# discarded first run: TAG=train), writing OUT/WORKLOAD/VARIANT/TAG/. TAG=pytorch runs PyTorch's
# W5 script (default transport) instead. A variant is a name in variants.txt: its JVM flags,
# passed as --jvm-arg after the launcher's defaults (the JVM takes the last of repeated flags).
set -u
out=$1; w=$2; tag=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
export MAVEN_OPTS="-Dmaven.repo.local=/work/m2/jit"
log() { echo "$(date -u +%H:%M:%S) $* | load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/sitting.log" >&2; }
mkdir -p "$out"
if [ "$tag" = pytorch ]; then
  mkdir -p "$out/pytorch"; n=$(ls "$out/pytorch" | grep -c '\.json$')
  log "start pytorch w5 r$((n + 1))"
  /usr/bin/python3 /work/shared/bench/pytorch/w5_dist_autograd.py --repeats 1 --modes default \
    --out "$out/pytorch/w5-r$((n + 1)).json" > "$out/pytorch/w5-r$((n + 1)).log" 2>&1
  log "end pytorch w5 r$((n + 1))"
  exit 0
fi
for v in "$@"; do
  flags=$(awk -F'|' -v v="$v" '$1 == v {print $2}' "$here/variants.txt")
  args=(); for f in $flags; do args+=("--jvm-arg=$f"); done
  dir="$out/$w/$v/$tag"; mkdir -p "$dir"
  log "start $w $v $tag"
  (cd "$repo" && FERRY_AOT_CACHE=/tmp/jit-aot/$w-$v ./ferry bench "$w" --repeats 1 --out "$dir" "${args[@]}") > "$dir/console.log" 2>&1
  grep -l 'AOTConfiguration recorded' "$dir/console.log" > /dev/null && [ "$tag" != train ] && log "WARNING: $w $v $tag recorded a training"
  log "end $w $v $tag"
done
