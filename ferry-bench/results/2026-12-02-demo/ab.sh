#!/usr/bin/env bash
# Interleaved A/B of start-up: ./ferry-X CMD..., RUNS runs a side, after one untimed warm-up run each
# (which trains the variant's AOT cache). Prints one line per run: variant round wall user sys load1.
# usage: ab.sh OUT RUNS "A-cmd" "B-cmd"   (run from the worktree, under the heavy lock; see README.md)
set -u
mkdir -p /tmp/ab
out=$1 runs=$2 a=$3 b=$4
cd "$(dirname "$0")/../../.."   # the repository: ./ferry-A, ./ferry-C are variants of ./ferry copied there
export FERRY_AOT_CACHE=/tmp/ab/aot
for v in A B; do cmd=$a; [ $v = B ] && cmd=$b
  bash -c "$cmd" > /tmp/ab/warm-$v.log 2>&1 || { echo "warm-up $v failed"; tail -20 /tmp/ab/warm-$v.log; exit 1; }
done
savers_done() { # the AOT caches' savers that a training run leaves behind
  for i in $(seq 1 600); do pgrep -f "AotCacheSaver /tmp/ab/aot" >/dev/null || return 0; sleep 0.5; done
  echo "savers still running"; return 1
}
savers_done
echo "variant round wall_s user_s sys_s load1" > "$out"
for r in $(seq 1 "$runs"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  for v in $order; do cmd=$a; [ $v = B ] && cmd=$b
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S" -o /tmp/ab/t bash -c "$cmd" > /tmp/ab/run-$v-$r.log 2>&1 || { echo "run $v $r failed"; tail /tmp/ab/run-$v-$r.log; }
    echo "$v $r $(cat /tmp/ab/t) $load" >> "$out"
    savers_done
  done
done
cat "$out"
