#!/bin/bash
# snap.sh NAME: freeze the current build's jars into /tmp/tcpbulk/snap/NAME
set -e
d=/tmp/tcpbulk/snap/$1; rm -rf $d; mkdir -p $d
cd /work/wt-tcpbulk
for m in ferry-cli ferry-examples ferry-bench; do mkdir -p $d/$m/lib; cp $m/target/*.jar $d/$m/ 2>/dev/null; cp $m/target/lib/*.jar $d/$m/lib/; rm -f $d/$m/*-tests.jar; done
cp ferry-cli/target/classes/dev/ferry/cli/jvm.properties $d/
echo $d
