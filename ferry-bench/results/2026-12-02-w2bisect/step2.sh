#!/bin/bash
set -u
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
for s in fe870c1 b72c35a 28fba3f; do
  d=/work/wt/lb-$s
  [ -d $d ] || git -C /work/main worktree add -q --detach $d $s
  (cd $d && mvn -Dmaven.repo.local=/work/m2/lead -o -B -ntp -q package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true > /tmp/lb/build-$s.log 2>&1 && touch ferry-examples/target/.ferry-built && echo "$s built" || echo "$s FAILED") >> /tmp/lb/build.log
done
FERRY_W2_EXTRA_ROUNDS=100 bash /work/main/ferry-bench/results/2026-12-02-w2loss/ab.sh /tmp/lb/out2 3 w2 q2=/work/wt/lb-fbed3b9 p31=/work/wt/lb-fe870c1 p32=/work/wt/lb-b72c35a p35=/work/wt/lb-28fba3f q3=/work/wt/lb-22d59ed
