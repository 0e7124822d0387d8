"""evrt.accelerator: torch.accelerator's API on the current accelerator."""
import inspect
import re

import pytest

import evrt
import evrt.accelerator as acc
import evrt.cuda as cuda


@pytest.fixture
def accelerator_cuda():
    acc.use("cuda")
    yield
    acc.use("evrt")


def test_default_accelerator_is_evrt():
    assert acc.current_accelerator() == evrt.device("evrt")
    assert acc.current_accelerator().index is None
    assert acc.is_available() and acc.device_count() == evrt.device_count()
    s = acc.current_stream()
    assert type(s) is evrt.Stream and s.device.type == "evrt"
    assert type(evrt.Stream()) is evrt.Stream
    assert evrt.Stream().device.type == "evrt"
    assert evrt.Event().device == evrt.device("evrt")
    for fn in (acc.current_stream, acc.synchronize):
        assert str(inspect.signature(fn)) == "(device=None, /)"


def test_device_type_checks():
    with pytest.raises(ValueError, match=re.escape(
            "cpu doesn't match the current accelerator evrt.")):
        acc.current_stream(evrt.device("cpu"))
    with pytest.raises(ValueError, match="doesn't match the current "
                                         "accelerator"):
        acc.set_device_index("cpu")
    with pytest.raises(ValueError, match="doesn't match the current "
                                         "accelerator"):
        acc.set_stream(cuda.Stream())
    with pytest.raises(ValueError, match="with a specified index"):
        acc.set_device_index(None)
    with pytest.raises(RuntimeError, match="The device index is out of range"):
        acc.current_stream(acc.device_count())


def test_use_cuda_makes_generic_objects_cuda(accelerator_cuda):
    assert acc.current_accelerator() == evrt.device("cuda")
    g = evrt.Stream()
    assert g.device.type == "cuda" and g.device_type == 1
    cuda.set_stream(cuda.Stream())
    # one current stream per device, seen through both APIs
    assert acc.current_stream().stream_id == cuda.current_stream().stream_id
    acc.set_stream(g)
    assert cuda.current_stream().stream_id == g.stream_id
    assert acc.current_stream() == g


def test_device_index_and_set_stream_switch_device(two_devices):
    with acc.device_index(1):
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    with acc.device_index(None):
        assert acc.current_device_index() == 0
    s1 = evrt.Stream(1)
    acc.set_stream(s1)
    assert acc.current_device_index() == 1
    acc.synchronize(0)
    assert acc.current_device_index() == 1
    acc.set_device_index(-1)  # no-op
    assert acc.current_device_index() == 1
    with pytest.warns(FutureWarning):
        assert acc.current_device_idx() == 1
