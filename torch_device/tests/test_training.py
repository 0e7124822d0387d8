"""An MLP trained for 100 steps on evrt has CPU eager's loss curve."""
import copy

import torch


def train(device, model, data, target, steps=100):
    model = copy.deepcopy(model).to(device)
    data, target = data.to(device), target.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses).cpu()


def test_mlp_losses_equal_cpu():
    g = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    data = torch.randn(64, 16, generator=g)
    target = torch.randn(64, 4, generator=g)
    cpu = train("cpu", model, data, target)
    evrt = train("evrt", model, data, target)
    assert cpu[-1] < cpu[0]
    assert torch.allclose(evrt, cpu, atol=1e-6, rtol=0), (evrt - cpu).abs().max()
