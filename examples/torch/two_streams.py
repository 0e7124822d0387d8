"""Two streams of tensor work joined by events, on the evrt torch device.

    make torch-build
    PYTHONPATH=torch_device .venv-torch/bin/python examples/torch/two_streams.py
    EVRT_TRACE=two_streams.json PYTHONPATH=torch_device \
        .venv-torch/bin/python examples/torch/two_streams.py   # its timeline
    PYTHONPATH=torch_device .venv-torch/bin/python \
        examples/torch/two_streams.py --forget-wait          # the race

Stream `left` computes a chain of matmuls, stream `right` an independent
chain; the default stream waits on an event of each and adds the results.
The ops are asynchronous, as on a GPU: each call enqueues a task on the
current stream and returns.  With --forget-wait the default stream does not
wait for `left`, and reads its output before it is written: the result is
wrong whenever `left` is still running (it usually is: it has more work).
"""
import sys
import time

import torch

import evrt_torch  # noqa: F401  (torch's autoload imports it too)


def work(x, n):
    for _ in range(n):
        x = torch.tanh(x @ x.T / x.shape[1]) + 0.5
    return x


def main(forget_wait=False):
    torch.manual_seed(0)
    a = torch.randn(512, 512)
    b = torch.randn(512, 512)
    expected = work(a, 20) + work(b, 2)

    left, right = torch.evrt.Stream(), torch.evrt.Stream()
    da, db = a.to("evrt"), b.to("evrt")
    work(da, 1)  # warm-up: torch loads its meta kernels at an op's first use
    torch.evrt.synchronize()
    left.wait_stream(torch.evrt.current_stream())  # da, db were copied there
    right.wait_stream(torch.evrt.current_stream())
    t0 = time.perf_counter()
    with torch.evrt.stream(left):
        ra = work(da, 20)
        left_done = torch.Event(device="evrt")
        left_done.record()
    with torch.evrt.stream(right):
        rb = work(db, 2)
        right_done = torch.Event(device="evrt")
        right_done.record()
    if not forget_wait:
        torch.evrt.current_stream().wait_event(left_done)
    torch.evrt.current_stream().wait_event(right_done)
    # The outputs were made on left and right and are used here, on the
    # default stream: tell the allocator (as with CUDA).
    ra.record_stream(torch.evrt.current_stream())
    rb.record_stream(torch.evrt.current_stream())
    total = ra + rb
    t_enqueue = time.perf_counter() - t0
    result = total.cpu()  # waits for the default stream only
    t_total = time.perf_counter() - t0
    ok = torch.allclose(result, expected, atol=1e-5)
    print(f"enqueued in {t_enqueue * 1e3:.1f} ms, result after {t_total * 1e3:.1f} ms: "
          f"{'right' if ok else 'WRONG (the default stream did not wait for left)'}")
    torch.evrt.synchronize()
    return ok


if __name__ == "__main__":
    forget = "--forget-wait" in sys.argv[1:]
    ok = main(forget_wait=forget)
    sys.exit(0 if ok or forget else 1)
