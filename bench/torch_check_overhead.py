"""EVRT_CHECK's cost on a torch program: the MLP of torch_device/tests/
test_training.py trained 100 steps, its batches copied in on a second
stream (the first waits for it), with EVRT_CHECK=1 against without (issue
27's target: within 3x).  Each setting runs in a child of its own (the
checker is chosen at start); best of 3:

    PYTHONPATH=torch_device .venv-torch/bin/python bench/torch_check_overhead.py
"""
import os
import subprocess
import sys

CHILD = r"""
import time, torch, evrt_torch
g = torch.Generator().manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 4)).to("evrt")
opt = torch.optim.SGD(model.parameters(), lr=0.05)
data = [torch.randn(64, 16, generator=g) for _ in range(4)]
target = [torch.randn(64, 4, generator=g) for _ in range(4)]
copy = torch.evrt.Stream()
def run(steps=100):
    for i in range(steps):
        with torch.evrt.stream(copy):
            x = data[i % 4].to("evrt", non_blocking=True)
            y = target[i % 4].to("evrt", non_blocking=True)
        torch.evrt.current_stream().wait_stream(copy)
        x.record_stream(torch.evrt.current_stream())
        y.record_stream(torch.evrt.current_stream())
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return loss.item()
run(10)
best = float("inf")
for _ in range(3):
    t0 = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - t0)
print(best)
"""


def timed(check):
    env = dict(os.environ)
    env["EVRT_CHECK"] = "1" if check else "0"
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD], env=env,
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit("child failed (%d):\n%s" % (r.returncode, r.stderr))
    return float(r.stdout.split()[-1])


def main():
    off, on = timed(False), timed(True)
    print("MLP, 100 steps, 2 streams: %.1f ms without EVRT_CHECK, %.1f ms with "
          "(ratio %.2f)" % (off * 1e3, on * 1e3, on / off))


if __name__ == "__main__":
    main()
