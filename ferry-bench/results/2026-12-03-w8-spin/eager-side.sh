#!/bin/sh
# pt-base with eager compilation from the AOT cache (an A/B side, not a checkout)
FERRY_EAGER_JIT=1 exec /work/wt/pt-base/ferry "$@"
