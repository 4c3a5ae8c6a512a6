#!/bin/sh
# Interleaved A/B of StringEcho: base = ferry-rpc's jar before the change, new = after; $2 rounds (5
# unless given), the side that goes first alternating; one JVM per run. Run under the machine's
# shared lock:
#   flock /work/lead/heavy.lock sh measure.sh /tmp/strings-ab 8 > data/runs-2.txt
# $1 holds base.jar, new.jar, classes/ (StringEcho compiled) and cp.txt (ferry-rpc's runtime class path).
dir=$1
java=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
flags="--enable-native-access=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED -Xmx1g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn"
run() {
    echo "# $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    $java $flags -cp "$dir/classes:$dir/$1.jar:$(cat "$dir/cp.txt")" stringecho.StringEcho "$1"
}
for round in $(seq "${2:-5}"); do
    if [ $((round % 2)) -eq 1 ]; then run base; run new; else run new; run base; fi
done
