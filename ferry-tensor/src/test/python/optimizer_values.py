"""Prints the PyTorch 1.13 values written into OptimizerKnownValuesTest (run with /usr/bin/python3)."""
import torch
G = [[0.1, -0.2, 0.3], [-0.5, 0.4, 0.0], [0.2, 0.2, -0.1]]
def run(make, steps):
    p = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = make([p])
    for g in G[:steps]:
        p.grad = torch.tensor(g)
        opt.step()
    return ", ".join(repr(v) for v in p.detach().tolist())
cfgs = {
 "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
 "sgd momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
 "sgd momentum dampening": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.5),
 "sgd nesterov": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
 "sgd weight decay": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1),
 "adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.1),
 "adagrad all": lambda ps: torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.5, weight_decay=0.1, initial_accumulator_value=0.2, eps=1e-6),
 "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
 "adam wd amsgrad": lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True, betas=(0.8, 0.9)),
 "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
 "adamw wd": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.5),
}
for k, f in cfgs.items():
    print(k, "| 1:", run(f, 1), "| 3:", run(f, 3))
