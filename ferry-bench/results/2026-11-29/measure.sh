#!/bin/bash
# One sitting: for each workload, PyTorch (both modes, interleaved by the script) then Ferry, back to back.
set -u
R=${R:-5}
PY=/usr/bin/python3
FO=/tmp/ferry-results
mkdir -p $FO
cd /tmp/bench
stamp() { echo "== $1 $(date -u +%T) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; }
stamp limits;       python3 limits/run_limits.py --repeats $R
stamp py-w1;        $PY pytorch/w1_latency.py --repeats $R
stamp ferry-w1;     /tmp/fb.sh w1 --repeats $R --out $FO
stamp py-w2;        $PY pytorch/w2_async_throughput.py --repeats $R
stamp ferry-w2;     /tmp/fb.sh w2 --repeats $R --out $FO
stamp py-w3;        $PY pytorch/w3_tensor_echo.py --repeats $R
stamp ferry-w3;     /tmp/fb.sh w3 --repeats $R --out $FO
stamp py-w6;        $PY pytorch/w6_init_shutdown.py --repeats $R
stamp ferry-w6;     /tmp/fb.sh w6 --repeats $R --out $FO
stamp py-w7chain;   $PY pytorch/w7_nested.py --repeats $R --parts chain
stamp ferry-w7;     /tmp/fb.sh w7 --repeats $R --out $FO
stamp py-w7async;   $PY pytorch/w7_nested.py --repeats $R --parts probe_async
stamp end
