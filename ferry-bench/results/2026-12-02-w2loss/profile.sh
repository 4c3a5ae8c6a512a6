#!/usr/bin/env bash
# Profiles of W2 at one window (2026-12-02, w2loss): profile.sh jfr|perf OUT WINDOW ROUNDS name=/checkout ...
# Each side: one run to train its AOT cache, then one recorded run, at window WINDOW only,
# ROUNDS x 10,000 timed calls (w2prof.windows / w2prof.rounds: properties read by a local
# diagnostic patch of W2Worker, not committed). The same JVM flags in both runs: other flags make
# another AOT cache key, and a JVM that trains its cache runs without JFR.
#   jfr:  both workers record (settings=profile, execution samples every 1 ms) to OUT/<name>-<pid>.jfr
#   perf: `perf record -a -g` (cpu-clock, 999 Hz, the whole machine) during the recorded run, the
#         worker JVMs' pids noted every 0.5 s in OUT/<name>-rec.pids
# Run under flock /work/lead/heavy.lock.
set -u
mode=$1 out=$2 window=$3 rounds=$4; shift 4
mkdir -p "$out"
log() { echo "$(date -u +%H:%M:%S) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/progress.log"; }
for s in "$@"; do
  name=${s%%=*} dir=${s#*=}
  args=(--jvm-arg=-Dw2prof.windows=$window --jvm-arg=-Dw2prof.rounds=$rounds)
  [ "$mode" = jfr ] && args+=(--jvm-arg=-XX:StartFlightRecording=filename=$out/$name-%p.jfr,settings=profile,jdk.ExecutionSample#period=1ms,jdk.NativeMethodSample#period=1ms)
  for k in train rec; do
    log "$name $mode $k"
    (cd "$dir" && FERRY_AOT_CACHE=$out/aot-$name ./ferry bench w2 --repeats 1 "${args[@]}" --out $out/$name-$k \
       > $out/$name-$k.log 2>&1) &
    bench=$!
    perf=
    if [ "$mode" = perf ] && [ $k = rec ]; then
      perf record -e cpu-clock -F 999 -a -g -o $out/$name.perf.data > $out/$name.perf.log 2>&1 &
      perf=$!
    fi
    while kill -0 $bench 2>/dev/null; do
      pgrep -f 'W2Worker' >> $out/$name-$k.pids; sleep 0.5
    done
    wait $bench || log "FAILED $name $k"
    [ -n "$perf" ] && kill -INT $perf && wait $perf
  done
done
log done
