"""W5's variants, beside Ferry's (ferry-bench/README, "W5 variants"): PyTorch's side.

  long   W5 as bench/WORKLOADS.md defines it, with 3,000 timed steps instead of 300.
  heavy  the same step on a compute-heavy model: the trainer (worker0) holds
         Linear(1024, 1024) -> ReLU -> Linear(1024, 1024) -> ReLU locally, worker1 holds
         Linear(1024, 10) as a RemoteModule; batch 256; 20 warm-up and 300 timed steps.
         The matrix products dominate: this compares the kernels, not the RPC.

Everything else (data, SGD lr 0.05, timing, the local reference) is W5's: this script runs
bench/pytorch/w5_dist_autograd.py's step with other sizes and counts, through its common.py.

Run:  /usr/bin/python3 ferry-bench/pytorch/w5_variants.py --variant long|heavy \
          [--common /work/shared/bench/pytorch] [--repeats 5] [--modes default,tcp] --out FILE
"""
import os
import sys

VARIANTS = {
    # batch, layer sizes (the last layer is worker1's), warm-up, timed steps
    "long": (64, (256, 256, 10), 20, 3000),
    "heavy": (256, (1024, 1024, 1024, 10), 20, 300),
}
LR = 0.05


def _common_dir(argv):
    """--common on the driver's command line; a worker finds it in its configuration."""
    if len(argv) >= 3 and argv[1] == "--worker":
        import json
        return json.loads(argv[2]).get("common", "/work/shared/bench/pytorch")
    for i, a in enumerate(argv):
        if a == "--common" and i + 1 < len(argv):
            return argv[i + 1]
    return "/work/shared/bench/pytorch"


sys.path.insert(0, _common_dir(sys.argv))
import common  # noqa: E402  (bench/pytorch/common.py)


def body(cfg):
    import time
    import torch
    import torch.distributed.autograd as dist_autograd
    import torch.distributed.rpc as rpc
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributed.nn import RemoteModule
    from torch.distributed.optim import DistributedOptimizer

    batch, sizes, warm, steps = VARIANTS[cfg["variant"]]
    if cfg["quick"]:
        warm, steps = 3, 20
    common.init(cfg)
    res = None
    if cfg["rank"] == 0:
        torch.manual_seed(0)
        x = torch.randn(batch, sizes[0])
        y = torch.randint(0, sizes[-1], (batch,))
        hidden = []
        for a, b in zip(sizes[:-2], sizes[1:-1]):
            hidden += [nn.Linear(a, b), nn.ReLU()]
        local = nn.Sequential(*hidden)
        remote = RemoteModule("worker1/cpu", nn.Linear, args=(sizes[-2], sizes[-1]))
        params = [rpc.RRef(p) for p in local.parameters()] + remote.remote_parameters()
        opt = DistributedOptimizer(torch.optim.SGD, params, lr=LR)

        def step():
            with dist_autograd.context() as ctx:
                loss = F.cross_entropy(remote(local(x)), y)
                dist_autograd.backward(ctx, [loss])
                opt.step(ctx)
            return loss.item()

        def timed(fn):
            first = fn()
            for _ in range(warm - 1):
                fn()
            clock = time.perf_counter_ns
            lat = [0] * steps
            t0 = clock()
            last = first
            for i in range(steps):
                s = clock()
                last = fn()
                lat[i] = clock() - s
            st = common.lat_summary(lat, (clock() - t0) / 1e9)
            return first, last, st

        first, last, st = timed(step)
        res = {"dist": {"steps_per_s": st["calls_per_s"], "step_median_ms": st["median_us"] / 1e3,
                        "step_p90_ms": st["p90_us"] / 1e3, "loss_first": first, "loss_last": last}}

        torch.manual_seed(0)
        layers = []
        for a, b in zip(sizes[:-2], sizes[1:-1]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        m = nn.Sequential(*layers, nn.Linear(sizes[-2], sizes[-1]))
        lopt = torch.optim.SGD(m.parameters(), lr=LR)

        def lstep():
            lopt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            lopt.step()
            return loss.item()

        _, _, st = timed(lstep)
        res["local"] = {"steps_per_s": st["calls_per_s"], "step_median_ms": st["median_us"] / 1e3}
        del remote, params, opt
    rpc.shutdown()
    return res


if __name__ == "__main__":
    common.worker_entry(body)
    args = common.parse_args(__doc__, extra=[("--variant", "long", "long or heavy"),
                                             ("--common", "/work/shared/bench/pytorch", "folder of common.py")])
    batch, sizes, warm, steps = VARIANTS[args.variant]
    common.run_driver(f"w5_{args.variant}", os.path.abspath(__file__), 2,
                      {"variant": args.variant, "common": os.path.abspath(args.common), "batch": batch, "sizes": list(sizes), "warmup": warm,
                       "steps": steps, "lr": LR, "optimizer": "SGD"}, args, timeout_s=900)
