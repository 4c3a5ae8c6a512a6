#!/usr/bin/env bash
# W1, W3 and W6 for the variants W5 singled out: one training run per workload and variant
# (discarded), then 5 rounds; each round is one lock hold running every workload once per
# variant (order rotated from round to round). W1's training ran in an earlier hold.
set -u
O=${O:-/tmp/jit-sit}; here=$(cd "$(dirname "$0")" && pwd)
vs=(${VARIANTS:-base c1 cc2})
ws=(${WORKLOADS:-w1 w3 w6})
flock /work/lead/heavy.lock sh -c "for w in ${TRAIN:-${ws[*]}}; do bash $here/round.sh $O \$w train ${vs[*]}; done"
for r in ${ROUNDS:-1 2 3 4 5}; do
  k=$(( (r - 1) % ${#vs[@]} )); order=("${vs[@]:k}" "${vs[@]:0:k}")
  flock /work/lead/heavy.lock sh -c "for w in ${ws[*]}; do bash $here/round.sh $O \$w r$r ${order[*]}; done"
done
