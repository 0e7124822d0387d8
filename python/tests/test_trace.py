"""evrt.trace(path): a Chrome trace of the work done in the block."""
import json

import pytest

import evrt


def test_trace_context_manager(tmp_path):
    path = tmp_path / "trace.json"
    try:
        ctx = evrt.trace(str(path))
        ctx.__enter__()
    except evrt.NotSupportedError as exc:
        pytest.skip("evrt built without the trace writer: %s" % exc)
    try:
        s = evrt.Stream()

        def labelled_step():
            pass

        s.launch(labelled_step)
        s.delay(5)
        e = s.record_event()
        e.synchronize()
    finally:
        ctx.__exit__(None, None, None)
    data = json.loads(path.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    assert isinstance(events, list) and events
    text = json.dumps(events)
    # The launched callable's slice is labelled with its qualified name.
    assert "labelled_step" in text, text[:2000]


def test_trace_bad_path():
    try:
        with evrt.trace("/nonexistent-dir/x/trace.json"):
            pass
    except evrt.NotSupportedError as exc:
        pytest.skip("evrt built without the trace writer: %s" % exc)
    except evrt.EvrtError:
        return  # refused with an evrt error: fine
    except OSError:
        return
    # Some writers open the file at stop; then stop must have failed.
    pytest.fail("tracing into a missing directory did not fail")
