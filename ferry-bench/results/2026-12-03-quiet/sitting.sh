#!/usr/bin/env bash
# The whole sitting: one discarded training run per Ferry side and workload, then ROUNDS rounds,
# each round one lock hold per workload, the sides' order rotated from round to round.
set -u
here=$(cd "$(dirname "$0")" && pwd); out=$here/raw; rounds=${1:-5}
rot() { local n=$1; shift; local a=("$@"); local k=$(( n % ${#a[@]} )); echo "${a[@]:k}" "${a[@]:0:k}"; }
for w in w5 w5heavy w1; do
  case $w in w1) s=(base nice) ;; *) s=(base ob nice niceob) ;; esac
  flock /work/lead/heavy.lock bash "$here/round.sh" "$out" $w train "${s[@]}"
done
for r in $(seq 1 "$rounds"); do
  for w in w5 w5heavy w1; do
    case $w in w1) s=(base nice) ;; *) s=(base ob nice niceob pytorch) ;; esac
    flock /work/lead/heavy.lock bash "$here/round.sh" "$out" $w r$r $(rot $r "${s[@]}")
  done
done
