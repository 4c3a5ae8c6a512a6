#!/bin/bash
set -u
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
for s in d145596 d6f2d56 fbed3b9 22d59ed a4c65c9; do
  d=/work/wt/lb-$s
  [ -d $d ] || git -C /work/main worktree add -q --detach $d $s
  (cd $d && mvn -Dmaven.repo.local=/work/m2/lead -o -B -ntp -q package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true > /tmp/lb/build-$s.log 2>&1 && mkdir -p ferry-examples/target && touch ferry-examples/target/.ferry-built && echo "$s built" || echo "$s FAILED") >> /tmp/lb/build.log
done
