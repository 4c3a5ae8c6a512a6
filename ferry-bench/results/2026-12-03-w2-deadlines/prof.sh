#!/usr/bin/env bash
# prof.sh OUT name=/checkout ...: per side one training run then one recorded W2 run with
# FERRY_W2_EXTRA_ROUNDS=100 (the steady state dominates the recording), JFR in both workers.
set -u
out=$1; shift
mkdir -p "$out"
for s in "$@"; do
  name=${s%%=*} dir=${s#*=}
  args=(--jvm-arg=-XX:StartFlightRecording=filename=$out/$name-%p.jfr,settings=profile,jdk.ExecutionSample#period=1ms,jdk.JavaMonitorEnter#threshold=0ms,jdk.ThreadPark#threshold=1ms)
  for k in train rec; do
    echo "$(date -u +%T) $name $k load $(cut -d' ' -f1 /proc/loadavg)" >> $out/progress.log
    [ $k = train ] && rm -f $out/$name-*.jfr
    (cd "$dir" && FERRY_W2_EXTRA_ROUNDS=100 FERRY_AOT_CACHE=$out/aot-$name ./ferry bench w2 --repeats 1 "${args[@]}" --out $out/$name-$k > $out/$name-$k.log 2>&1)
    [ $k = train ] && rm -f $out/$name-*.jfr
  done
done
echo "$(date -u +%T) done" >> $out/progress.log
