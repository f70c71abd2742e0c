#!/usr/bin/env python3
"""torch_step.py: one small training step of an MLP, for kgate's PyTorch path.

Each iteration is an NVTX range step, with step/forward, step/backward and
step/optimizer inside it (torch.cuda.nvtx), so the collector attributes the
kernels PyTorch launches to the phase that launched them.

  --size H          hidden width (default 1024)
  --variant V       fp32 (default) or bf16 (autocast)
  --batch B         rows per batch (default 256); the "block size" knob here
  --iters I         measured steps (default 20)
  --extra-work F    a batch of B * (1 + F) rows

The first forward pass is checked against the same model evaluated on the
CPU in float64 (TF32 off for fp32; a loose tolerance for bf16); a wrong
result exits 1.  Without torch or without a CUDA device it prints why and
exits 0 without launching anything.
"""
import argparse
import copy
import math
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--variant", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--extra-work", type=float, default=0.0)
    a = ap.parse_args()
    if a.size < 1 or a.batch < 1 or a.iters < 1 or not 0.0 <= a.extra_work <= 10.0:
        ap.error("sizes must be positive and --extra-work in [0, 10]")

    try:
        import torch
    except ImportError:
        print("torch_step: PyTorch is not installed; nothing to run", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("torch_step: no CUDA device; nothing to run", file=sys.stderr)
        return 0

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    nvtx = torch.cuda.nvtx
    dev = torch.device("cuda")
    rows = int(math.ceil(a.batch * (1.0 + a.extra_work)))
    model = torch.nn.Sequential(
        torch.nn.Linear(a.size, 4 * a.size), torch.nn.GELU(),
        torch.nn.Linear(4 * a.size, a.size)).to(dev)
    x = torch.randn(rows, a.size, device=dev)
    y = torch.randn(rows, a.size, device=dev)
    bf16 = a.variant == "bf16"

    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            return model(x)

    # Check the forward pass against float64 on the CPU.
    with torch.no_grad():
        got = forward().double().cpu()
        ref = copy.deepcopy(model).double().cpu()(x.double().cpu())
    tol = 5e-2 if bf16 else 1e-4
    err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    if not err <= tol:
        print(f"torch_step: WRONG RESULT: forward differs from the CPU by {err:.3g} "
              f"(relative, tolerance {tol})", file=sys.stderr)
        return 1
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        nvtx.range_push("step")
        nvtx.range_push("forward")
        loss = torch.nn.functional.mse_loss(forward().float(), y)
        nvtx.range_pop()
        nvtx.range_push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        nvtx.range_pop()
        nvtx.range_pop()
        return loss

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    first = last = None
    for i in range(a.iters):
        loss = step()
        if i == 0:
            first = loss.detach()
        last = loss.detach()
    end.record()
    torch.cuda.synchronize()
    if not (math.isfinite(first.item()) and math.isfinite(last.item())):
        print("torch_step: WRONG RESULT: the loss is not finite", file=sys.stderr)
        return 1
    ms = start.elapsed_time(end) / a.iters
    print(f"torch_step_{a.variant}: steps={a.iters} mean_ms={ms:.4f} "
          f"loss_first={first.item():.6f} loss_last={last.item():.6f}")
    print(f"torch_step_{a.variant}: result ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
