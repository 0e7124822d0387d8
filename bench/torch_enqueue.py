"""Host cost of enqueueing a small elementwise op on the evrt torch device
against the same op in CPU eager mode (issue 26's performance target:
within 2x).  Ratios in one run:

    PYTHONPATH=torch_device .venv-torch/bin/python bench/torch_enqueue.py
"""
import time

import torch

import evrt_torch  # noqa: F401


def per_call(fn, n):
    fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def main(n=2000):
    a, b = torch.randn(1000), torch.randn(1000)
    da, db = a.to("evrt"), b.to("evrt")
    torch.evrt.synchronize()
    cpu = per_call(lambda: torch.add(a, b), n)

    def evrt_add():
        torch.add(da, db)

    # Enqueue cost only: the stream drains between rounds.
    ev = per_call(evrt_add, n)
    torch.evrt.synchronize()
    s = torch.evrt.Stream()
    e = torch.Event(device="evrt")

    def record_query():
        e.record(s)
        e.query()

    rq = per_call(record_query, n)
    print(f"add (2 x 1000 floats): cpu eager {cpu * 1e6:.1f} us, evrt enqueue {ev * 1e6:.1f} us, "
          f"ratio {ev / cpu:.2f}")
    print(f"event record + query through torch: {rq * 1e6:.1f} us")


if __name__ == "__main__":
    main()
