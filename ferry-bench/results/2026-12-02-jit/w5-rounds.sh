#!/usr/bin/env bash
# W5's rounds: 5 lock holds, each one run of every variant (order rotated) and, in the first 3,
# one run of PyTorch's W5 (default transport).
set -u
O=${O:-/tmp/jit-sit}; here=$(cd "$(dirname "$0")" && pwd)
vs=(base c1 cc2 cc4 cts serial)
for r in 1 2 3 4 5; do
  k=$(( (r - 1) % ${#vs[@]} )); order=("${vs[@]:k}" "${vs[@]:0:k}")
  flock /work/lead/heavy.lock sh -c "bash $here/round.sh $O w5 r$r ${order[*]}; [ $r -le 3 ] && bash $here/round.sh $O w5 pytorch; true"
done
