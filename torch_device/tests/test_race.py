"""A two-stream program that races without wait_stream, as on a GPU: the
first stream's op is held (a gate, the stand-in for a long kernel) and the
second stream reads its input before it was written.  With wait_stream the
values are always right."""
import torch


def program(gate, with_wait):
    s1, s2 = torch.evrt.Stream(), torch.evrt.Stream()
    x = torch.zeros(1024, device="evrt")
    torch.evrt.synchronize()
    with torch.evrt.stream(s1):
        g = gate(s1)
        x.add_(1)  # the producer, held by the gate
    if with_wait:
        s2.wait_stream(s1)
    with torch.evrt.stream(s2):
        y = x * 10  # the consumer
    if not with_wait:
        s2.synchronize()  # the consumer ran before the producer
    g.open()
    torch.evrt.synchronize()
    return y.cpu()


def test_right_with_wait_stream(gate):
    for _ in range(5):
        assert torch.equal(program(gate, True), torch.full((1024,), 10.0))


def test_wrong_without_wait_stream(gate):
    # The race really happens: the consumer read the zeros.
    assert torch.equal(program(gate, False), torch.zeros(1024))
