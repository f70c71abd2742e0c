"""torch_step.py: a few training steps of a small model with NVTX ranges.

    torch_step.py [STEPS [BATCH [WIDTH]]]      (default 3 256 512)

scripts/test-gpu.sh runs it under the collector in trace mode and checks
that every kernel carries an NVTX path, then at a larger size (data beyond
the 50 MB L2 of an H200) in metrics mode and under ncu, to compare them.  The forward pass and the optimizer
run on the main thread inside "step/forward" and "step/optimizer"; the
backward pass runs on autograd's device thread, so emit_nvtx() is on to
give those kernels (and every op) a range of their own.
"""
import sys

import torch
import torch.cuda.nvtx as nvtx


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    width = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width)
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    nvtx.range_push("setup")  # randn launches kernels too
    x = torch.randn(batch, width, device=dev)
    target = torch.randn(batch, width, device=dev)
    nvtx.range_pop()
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(steps):
            nvtx.range_push("step")
            nvtx.range_push("forward")
            loss = torch.nn.functional.mse_loss(model(x), target)
            nvtx.range_pop()
            nvtx.range_push("backward")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nvtx.range_pop()
            nvtx.range_push("optimizer")
            opt.step()
            nvtx.range_pop()
            nvtx.range_pop()
    torch.cuda.synchronize()
    print("torch_step: loss %.6f" % loss.item(), file=sys.stderr)


if __name__ == "__main__":
    main()
