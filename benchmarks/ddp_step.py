#!/usr/bin/env python3
"""ddp_step.py: DistributedDataParallel training steps of an MLP over NCCL, one
process per GPU, for kgate's multi-GPU path.  Start it with torchrun:

  torchrun --nproc-per-node 2 benchmarks/ddp_step.py [options]

Each iteration is an NVTX range step, with step/forward, step/backward
(where DDP's NCCL all-reduce of the gradients runs) and step/optimizer
inside it.  Every rank's model starts from the same seed, so the ranks do
the same work, except:

  --slow-rank R     the rank that does more work (default: none)
  --extra-work F    on that rank, an extra matmul of F times the first
                    layer's work in each forward pass (default 0.10), a
                    straggler the others wait for in the all-reduce
  --size H          hidden width (default 2048)
  --batch B         rows per rank (default 256)
  --iters I         measured steps (default 20)

Rank 0 prints the mean time of a step between CUDA events.  Without torch,
CUDA, NCCL or the launcher's variables it prints why and exits 0 (a CPU-only
machine runs nothing).
"""
import argparse
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--extra-work", type=float, default=0.10)
    a = ap.parse_args()
    if a.size < 1 or a.batch < 1 or a.iters < 1 or not 0.0 <= a.extra_work <= 10.0:
        ap.error("sizes must be positive and --extra-work in [0, 10]")
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print("ddp_step: start it with torchrun (RANK and WORLD_SIZE are not set)",
              file=sys.stderr)
        return 0
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("ddp_step: PyTorch is not installed; nothing to run", file=sys.stderr)
        return 0
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("ddp_step: no CUDA device or no NCCL; nothing to run", file=sys.stderr)
        return 0

    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    nvtx = torch.cuda.nvtx
    dev = torch.device("cuda", local)
    model = torch.nn.Sequential(
        torch.nn.Linear(a.size, 4 * a.size), torch.nn.GELU(),
        torch.nn.Linear(4 * a.size, a.size)).to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(a.batch, a.size, device=dev)
    y = torch.randn(a.batch, a.size, device=dev)
    extra = None
    if rank == a.slow_rank and a.extra_work > 0:
        # F times the first layer's (batch x size x 4 size) multiply-adds
        k = max(1, int(round(4 * a.size * a.extra_work)))
        extra = (torch.randn(a.batch, a.size, device=dev), torch.randn(a.size, k, device=dev))

    def step():
        nvtx.range_push("step")
        nvtx.range_push("forward")
        out = ddp(x)
        if extra is not None:
            torch.matmul(extra[0], extra[1])
        loss = torch.nn.functional.mse_loss(out, y)
        nvtx.range_pop()
        nvtx.range_push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        nvtx.range_pop()
        nvtx.range_pop()

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(a.iters):
        step()
    t1.record()
    torch.cuda.synchronize()
    if rank == 0:
        print("ddp_step: %d ranks, %.3f ms a step" % (dist.get_world_size(),
                                                       t0.elapsed_time(t1) / a.iters))
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
