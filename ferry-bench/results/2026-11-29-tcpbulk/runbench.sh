#!/bin/bash
# runbench.sh NAME bench-args...: run the harness from a frozen snapshot (no rebuild)
d=/tmp/tcpbulk/snap/$1; shift
cp=""
for m in ferry-cli ferry-examples ferry-bench; do for j in $d/$m/*.jar; do cp="$cp:$j"; done; cp="$cp:$d/$m/lib/*"; done
exec /usr/lib/jvm/temurin-25-jdk-amd64/bin/java $(sed -n 's/^jvm.flags=//p' $d/jvm.properties) -cp "${cp#:}" dev.ferry.cli.FerryCli "$@"
