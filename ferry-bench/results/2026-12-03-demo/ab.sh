#!/usr/bin/env bash
# Interleaved A/B/C of the demo's second run: each variant's command once untimed (it trains that
# variant's AOT caches; their savers are waited for), then ROUNDS rounds, each running every variant
# once, the order rotated from round to round. One line per run: variant round wall user sys load1.
# usage: ab.sh OUT ROUNDS NAME=CMD...   (under the machine's lock: flock /work/lead/heavy.lock)
set -u
out=$1 rounds=$2; shift 2
names=() cmds=()
for v in "$@"; do names+=("${v%%=*}"); cmds+=("${v#*=}"); done
n=${#names[@]}
mkdir -p /tmp/ab3
savers_done() {
  for _ in $(seq 1 600); do pgrep -f AotCacheSaver >/dev/null || return 0; sleep 0.5; done
  echo "savers still running"; return 1
}
for i in $(seq 0 $((n - 1))); do
  bash -c "${cmds[$i]}" > "/tmp/ab3/warm-${names[$i]}.txt" 2>&1 || { echo "warm-up ${names[$i]} failed"; exit 1; }
  savers_done
done
echo "variant round wall_s user_s sys_s load1" > "$out"
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(( (k + r) % n ))
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S" -o /tmp/ab3/t bash -c "${cmds[$i]}" > "/tmp/ab3/run-${names[$i]}-$r.txt" 2>&1 \
      || { echo "run ${names[$i]} $r failed"; tail "/tmp/ab3/run-${names[$i]}-$r.txt"; }
    echo "${names[$i]} $r $(cat /tmp/ab3/t) $load" >> "$out"
    savers_done
  done
done
cat "$out"
