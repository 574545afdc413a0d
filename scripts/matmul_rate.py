"""The float32 matrix-product rate of one CPU core at chapter 3's shapes (book/cost.md, section
"Why chapter 3 costs the most").

One decoder layer's linear maps for a 7-member group of 64 sequences of 15 positions (960 rows, width
64, MLP 256): each forward product ``x W`` and its two backward products ``g Wᵀ`` and ``xᵀ g`` (the
transposes as views, as autograd passes them), run by ``torch.bmm`` with one thread. Prints the
FLOP-weighted rate (GFLOP/s of process CPU time) of five repeats of 30 calls per shape.

    python scripts/matmul_rate.py
"""

import time

import torch


def layer_rate(reps: int = 30, E: int = 7, T: int = 960, d: int = 64, m: int = 256) -> float:
    flops, t = 0, 0.0
    for din, dout in ((d, 3 * d), (d, d), (d, m), (m, d)):
        for kind, (a, b, c) in (
            ("fwd", (T, din, dout)),
            ("gx", (T, dout, din)),
            ("gw", (din, T, dout)),
        ):
            A = torch.randn(E, b, a).transpose(1, 2) if kind == "gw" else torch.randn(E, a, b)
            B = torch.randn(E, c, b).transpose(1, 2) if kind == "gx" else torch.randn(E, b, c)
            for _ in range(3):
                torch.bmm(A, B)
            t0 = time.process_time()
            for _ in range(reps):
                torch.bmm(A, B)
            t += time.process_time() - t0
            flops += 2 * E * a * b * c * reps
    return flops / t / 1e9


if __name__ == "__main__":
    torch.set_num_threads(1)
    rates = sorted(layer_rate() for _ in range(5))
    print(
        "GFLOP/s per repeat:",
        ", ".join(f"{r:.1f}" for r in rates),
        f"(median {rates[2]:.1f})",
    )
