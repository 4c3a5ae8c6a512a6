"""W8: small calls behind large ones (PyTorch counterpart of ferry-bench's W8).

While one thread of worker0 echoes a 128 MiB float32 tensor off worker1 back to back
(rpc_sync("worker1", rpcfuncs.echo, args=(t,))), the main thread makes small calls
rpcfuncs.noop(1) to worker1, one at a time, each timed with time.perf_counter_ns():
200 warm-up and 2,000 timed calls with rpc_sync, then as many with rpc_async(...).wait().
The echoes start before the first small call and stop after the last; the last echo must
equal the tensor sent.

Reported per mode (sync, async): median_us, p90_us, p99_us, max_us of the small calls;
large.echoes (echoes completed while the small calls ran) and large.GB_per_s (their bytes
both ways over that time).

Run it beside the other PyTorch scripts, whose helpers it uses:
    cp -r /work/shared/bench /tmp/bench && cp ferry-bench/pytorch/w8_small_behind_large.py /tmp/bench/pytorch/
    /usr/bin/python3 /tmp/bench/pytorch/w8_small_behind_large.py --repeats 5
"""
import os
import threading
import time

import common

LARGE_BYTES = 128 * 1024 * 1024
WARMUP, CALLS = 200, 2000


def body(cfg):
    import torch
    import torch.distributed.rpc as rpc
    import rpcfuncs

    common.init(cfg, rpc_timeout=120.0)
    res = None
    if cfg["rank"] == 0:
        warm, n = (20, 200) if cfg["quick"] else (WARMUP, CALLS)
        t = torch.rand(LARGE_BYTES // 4, dtype=torch.float32, generator=torch.Generator().manual_seed(0))
        rpc.rpc_sync("worker1", rpcfuncs.echo, args=(t,))
        stop = threading.Event()
        state = {"echoes": 0, "equal": False, "error": None}

        def echoing():
            try:
                while not stop.is_set():
                    back = rpc.rpc_sync("worker1", rpcfuncs.echo, args=(t,))
                    state["echoes"] += 1
                    state["equal"] = torch.equal(back, t)
            except Exception as e:  # reported after the small calls
                state["error"] = repr(e)

        thread = threading.Thread(target=echoing, name="w8-large")
        thread.start()
        clock = time.perf_counter_ns
        res = {}
        echoes_before = state["echoes"]
        timed_start = clock()
        for mode in ("sync", "async"):
            def small():
                if mode == "sync":
                    return rpc.rpc_sync("worker1", rpcfuncs.noop, args=(1,))
                return rpc.rpc_async("worker1", rpcfuncs.noop, args=(1,)).wait()
            for _ in range(warm):
                small()
            lat = [0] * n
            for i in range(n):
                s = clock()
                assert small() == 1
                lat[i] = clock() - s
            st = common.lat_summary(lat)
            res[mode] = {"median_us": st["median_us"], "p90_us": st["p90_us"], "p99_us": st["p99_us"],
                         "max_us": max(lat) / 1e3}
        timed_ns = clock() - timed_start
        during = state["echoes"] - echoes_before
        stop.set()
        thread.join()
        assert state["error"] is None, state["error"]
        assert state["equal"], "the last echo differs from the tensor sent"
        res["large"] = {"echoes": during, "GB_per_s": 2 * LARGE_BYTES * during / timed_ns}
    rpc.shutdown()
    return res


if __name__ == "__main__":
    common.worker_entry(body)
    args = common.parse_args(__doc__)
    common.run_driver("w8_small_behind_large", os.path.abspath(__file__), 2,
                      {"large_bytes": LARGE_BYTES, "small_warmup": WARMUP, "small_calls": CALLS},
                      args, timeout_s=300)
