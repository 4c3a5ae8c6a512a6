#!/usr/bin/env bash
# One lock hold of a sitting: ROUNDS interleaved rounds of WORKLOAD, each Ferry side then PyTorch.
# usage: chunk.sh OUTDIR WORKLOAD ROUNDS SIDE...   a side is "name|env assignments|ferry bench args"
set -u
out=$1; w=$2; rounds=$3; shift 3
cd /work/wt/training
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
export MAVEN_OPTS="-Dmaven.repo.local=/work/m2/training" FERRY_AOT_CACHE=/work/aot/training
mkdir -p "$out/pytorch"
log() { echo "== $(date -u +%H:%M:%S) $* | $(uptime | sed 's/.*load/load/')" | tee -a "$out/sitting.log" >&2; }
log "chunk $w start $(git rev-parse --short HEAD)"
# Started late (the session's deadline is 05:00): the first side only.
[ "$(date -u +%H%M)" -ge 0446 ] && { log "late: first side only"; set -- "$1"; }
for r in $(seq 1 "$rounds"); do
  for side in "$@"; do
    IFS='|' read -r name envs args <<< "$side"
    mkdir -p "$out/ferry-$name"
    env $envs ./ferry bench "$w" --repeats 1 --out "$out/ferry-$name/$w-r$r" $args > "$out/ferry-$name/$w-r$r.log" 2>&1
    log "round $r ferry $name $w"
  done
  case $w in
    w5) /usr/bin/python3 /work/shared/bench/pytorch/w5_dist_autograd.py --repeats 1 --modes default,tcp --out "$out/pytorch/$w-r$r.json" > "$out/pytorch/$w-r$r.log" 2>&1 ;;
    w5long) /usr/bin/python3 ferry-bench/pytorch/w5_variants.py --variant long --repeats 1 --modes default --out "$out/pytorch/$w-r$r.json" > "$out/pytorch/$w-r$r.log" 2>&1 ;;
    w5heavy) /usr/bin/python3 ferry-bench/pytorch/w5_variants.py --variant heavy --repeats 1 --modes default --out "$out/pytorch/$w-r$r.json" > "$out/pytorch/$w-r$r.log" 2>&1 ;;
  esac
  log "round $r pytorch $w"
done
log "chunk $w end"
