#!/bin/bash
# Issue-4 W3 sitting: limits, PyTorch W3 (default, tcp), Ferry W3 over UDS (default) and TCP, back to back.
set -x
cd /tmp/bulk-bench && flock /work/cpu.lock python3 limits/run_limits.py --repeats 3
cd /tmp/bulk-bench && flock /work/cpu.lock /usr/bin/python3 pytorch/w3_tensor_echo.py --repeats 3
cd /work/wt-bulk && flock /work/cpu.lock ./ferry bench w3 --repeats 3 --out /tmp/bulk-r1/uds
cd /work/wt-bulk && flock /work/cpu.lock env FERRY_UNIX_SOCKETS=0 ./ferry bench w3 --repeats 3 --out /tmp/bulk-r1/tcp
date
