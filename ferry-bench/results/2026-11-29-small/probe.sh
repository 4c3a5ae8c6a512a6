#!/bin/bash
# env passes through; usage: probe.sh [extra jvm args...]
W=/work/wt-small
CP="$(cd $W && bash -c 'source <(sed -n "/^classpath()/,/^}/p" ferry); here=$PWD; classpath')"
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin
$J/javac -d /tmp/small/probe/classes -cp "$CP" /tmp/small/probe/src/Probe.java || exit 1
flock /work/cpu.lock timeout 100 $J/java --enable-native-access=ALL-UNNAMED -cp "$CP:/tmp/small/probe/classes" dev.ferry.cli.FerryCli run --nproc 2 -cp "$CP:/tmp/small/probe/classes" "$@" Probe 2>&1 | grep -v "INFO\|^\s*$" | grep -i "idle2\|XSTAT\|chunks\|median\|hist\|calls/s\|exception\|error" 
