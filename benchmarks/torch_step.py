#!/usr/bin/env python3
"""torch_step.py: a training step of an MLP or a transformer encoder, for kgate's PyTorch path.

Each iteration is an NVTX range step, with step/forward, step/backward and
step/optimizer inside it (torch.cuda.nvtx), so the collector attributes the
kernels PyTorch launches to the phase that launched them.

  --model M         mlp (default) or encoder (two transformer encoder layers,
                    --size wide, --size/64 heads, sequences of --seq tokens)
  --size H          hidden width (default 1024)
  --seq T           encoder: tokens per sequence (default 128)
  --variant V       fp32 (default) or bf16 (autocast)
  --batch B         rows (mlp, default 256) or sequences (encoder, default
                    32) per batch; the "block size" knob here
  --iters I         measured steps (default 20)
  --extra-work F    a batch of B * (1 + F) rows

It prints the mean time of a step between CUDA events and the wall time of
a step (host included).  The first forward pass (of the first two sequences
for the encoder) is checked against the same model evaluated on the CPU in
float64 (TF32 off for fp32; a loose tolerance for bf16); a wrong
result exits 1.  Without torch or without a CUDA device it prints why and
exits 0 without launching anything.
"""
import argparse
import copy
import math
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["mlp", "encoder"], default="mlp")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--variant", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--extra-work", type=float, default=0.0)
    a = ap.parse_args()
    if a.batch is None:
        a.batch = 256 if a.model == "mlp" else 32
    if a.model == "encoder" and (a.size % 64 or a.seq < 1):
        ap.error("the encoder wants --size a multiple of 64 and --seq positive")
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
    if a.model == "mlp":
        model = torch.nn.Sequential(
            torch.nn.Linear(a.size, 4 * a.size), torch.nn.GELU(),
            torch.nn.Linear(4 * a.size, a.size)).to(dev)
        shape = (rows, a.size)
    else:
        layer = torch.nn.TransformerEncoderLayer(
            d_model=a.size, nhead=a.size // 64, dim_feedforward=4 * a.size,
            dropout=0.0, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=2,
                                            enable_nested_tensor=False).to(dev)
        shape = (rows, a.seq, a.size)
    x = torch.randn(*shape, device=dev)
    y = torch.randn(*shape, device=dev)
    bf16 = a.variant == "bf16"

    def forward(inp=None):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            return model(x if inp is None else inp)

    # Check the forward pass against float64 on the CPU (a slice of the
    # batch for the encoder, whose full batch is slow on a CPU).
    xc = x if a.model == "mlp" else x[:2]
    with torch.no_grad():
        got = forward(xc).double().cpu()
        ref = copy.deepcopy(model).double().cpu()(xc.double().cpu())
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
    wall0 = time.perf_counter()
    start.record()
    first = last = None
    for i in range(a.iters):
        loss = step()
        if i == 0:
            first = loss.detach()
        last = loss.detach()
    end.record()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - wall0) * 1e3 / a.iters
    if not (math.isfinite(first.item()) and math.isfinite(last.item())):
        print("torch_step: WRONG RESULT: the loss is not finite", file=sys.stderr)
        return 1
    ms = start.elapsed_time(end) / a.iters
    print(f"torch_step_{a.variant}: model={a.model} steps={a.iters} mean_ms={ms:.4f} "
          f"wall_ms={wall_ms:.4f} loss_first={first.item():.6f} loss_last={last.item():.6f}")
    print(f"torch_step_{a.variant}: result ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
