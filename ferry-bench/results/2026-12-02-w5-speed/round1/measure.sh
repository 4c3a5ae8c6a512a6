#!/usr/bin/env bash
# Sitting: floors, then 5 interleaved rounds of Ferry (each side) and PyTorch for w5, w5long, w5heavy.
# usage: sitting.sh OUTDIR SIDE...   a side is "name|env assignments|ferry bench args"
set -u
out=$1; shift
cd /work/wt/training
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
export MAVEN_OPTS="-Dmaven.repo.local=/work/m2/training" FERRY_AOT_CACHE=/work/aot/training
mkdir -p "$out"/{pytorch,floor}
log() { echo "== $(date -u +%H:%M:%S) $* | $(uptime | sed 's/.*load/load/')" | tee -a "$out/sitting.log" >&2; }
ferry_run() { # side workload dir
  local name envs args; IFS='|' read -r name envs args <<< "$1"
  mkdir -p "$out/ferry-$name"
  env $envs ./ferry bench "$2" --repeats 1 --out "$out/ferry-$name/$3" $args > "$out/ferry-$name/$3.log" 2>&1
}
log "start $(git rev-parse --short HEAD)"
for i in 1 2 3; do /tmp/floor/sgemm_floor 50 >> "$out/floor/openblas_c.jsonl"; done
for i in 1 2 3; do java /tmp/floor/JavaMatmulFloor.java 8 >> "$out/floor/plain_java.jsonl"; done
log "floors done"
for side in "$@"; do ferry_run "$side" w5 train; log "trained ${side%%|*}"; done
for r in 1 2 3 4 5; do
  for w in w5 w5long w5heavy; do
    for side in "$@"; do
      [ $w = w5heavy ] && [ "$side" != "$1" ] && continue  # the kernels, not the JIT: the first side only
      ferry_run "$side" $w "$w-r$r"; log "round $r ferry ${side%%|*} $w"
    done
    case $w in
      w5) /usr/bin/python3 /work/shared/bench/pytorch/w5_dist_autograd.py --repeats 1 --modes default,tcp --out "$out/pytorch/$w-r$r.json" > "$out/pytorch/$w-r$r.log" 2>&1 ;;
      w5long) /usr/bin/python3 ferry-bench/pytorch/w5_variants.py --variant long --repeats 1 --modes default --out "$out/pytorch/$w-r$r.json" > "$out/pytorch/$w-r$r.log" 2>&1 ;;
      w5heavy) /usr/bin/python3 ferry-bench/pytorch/w5_variants.py --variant heavy --repeats 1 --modes default --out "$out/pytorch/$w-r$r.json" > "$out/pytorch/$w-r$r.log" 2>&1 ;;
    esac
    log "round $r pytorch $w"
  done
done
log "end"
