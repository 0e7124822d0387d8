"""evrt.acl.mdl: pyACL's model runtime instance calls (capture, build,
execute, destroy) and acl.rt's label calls, with pyACL's conventions
(handles are ints, outputs first, then ret) and CANN's codes
(docs/capture.md section 2).  Python callables put on a capturing stream by
acl.rt.launch_host_func are tasks of the model: they run at every
execution, not at capture, and outlive the caller's references."""
import gc
import threading

import pytest

acl = pytest.importorskip(
    "evrt.acl", reason="evrt built without the ACL layer (src/acl)")
rt, mdl = acl.rt, acl.mdl


from conftest import acl_ok as ok  # noqa: E402  (conftest's acl_device too)

pytestmark = pytest.mark.usefixtures("acl_device")


def test_captured_host_funcs_run_at_each_execution_not_at_capture():
    s = ok(rt.create_stream())
    runs = []

    def step(tag):
        runs.append(tag)

    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    status, model, ret = mdl.ri_capture_get_info(s)
    assert (status, ret) == (acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, 0)
    assert model != 0
    # distinct function objects whose only references are the model's
    for tag in ("a", "b"):
        assert rt.launch_host_func(s, (lambda t: step(t)), tag) == 0
    assert ok(mdl.ri_capture_end(s)) == model
    gc.collect()
    assert runs == []  # captured, not run
    for _ in range(3):
        assert mdl.ri_execute_async(model, s) == 0
    assert rt.synchronize_stream(s) == 0
    assert runs == ["a", "b"] * 3
    assert mdl.ri_execute(model, 10000) == 0  # on a stream of its own
    assert runs[-2:] == ["a", "b"] and len(runs) == 8
    assert mdl.ri_get_id(model)[1] == 0
    assert mdl.ri_set_name(model, "two steps") == 0
    assert ok(mdl.ri_get_name(model)) == "two steps"
    assert mdl.ri_destroy(model) == 0
    assert mdl.ri_destroy(model) != 0  # destroyed once
    assert rt.synchronize_device() == 0
    assert rt.destroy_stream(s) == 0


def test_capture_rules_give_canns_codes():
    s, other = ok(rt.create_stream()), ok(rt.create_stream())
    # ending a capture that was never begun
    assert mdl.ri_capture_end(s)[1] == acl.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    assert mdl.ri_capture_begin(s, 7) != 0  # unknown mode changes nothing
    assert ok(mdl.ri_capture_get_info(s))[0] == \
        acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE
    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == \
        acl.ACL_ERROR_RT_STREAM_CAPTURED
    # synchronizing a capturing stream invalidates the capture
    assert rt.synchronize_stream(s) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert ok(mdl.ri_capture_get_info(s))[0] == \
        acl.ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
    ran = []
    assert rt.launch_host_func(s, ran.append, 1) == \
        acl.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    model, ret = mdl.ri_capture_end(s)
    assert (model, ret) == (0, acl.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
    # a fork through an event that never joins back: unjoined
    ev = ok(rt.create_event())
    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    assert rt.record_event(ev, s) == 0
    assert rt.stream_wait_event(other, ev) == 0
    assert rt.launch_host_func(other, ran.append, 2) == 0
    assert mdl.ri_capture_end(s)[1] == acl.ACL_ERROR_RT_STREAM_UNJOINED
    assert ok(mdl.ri_capture_get_info(other))[0] == \
        acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE
    assert rt.synchronize_stream(other) == 0
    assert ran == []
    # the thread's mode: exchanged, and given back
    prev = ok(mdl.ri_capture_thread_exchange_mode(
        acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED))
    assert prev == acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
    assert ok(mdl.ri_capture_thread_exchange_mode(prev)) == \
        acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED
    assert rt.destroy_event(ev) == 0
    for x in (s, other):
        assert rt.destroy_stream(x) == 0


def test_fork_join_capture_replays_in_order():
    s, side = ok(rt.create_stream()), ok(rt.create_stream())
    fork, join = ok(rt.create_event()), ok(rt.create_event())
    order, lock = [], threading.Lock()

    def note(tag):
        with lock:
            order.append(tag)

    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    assert rt.launch_host_func(s, note, "first") == 0
    assert rt.record_event(fork, s) == 0
    assert rt.stream_wait_event(side, fork) == 0
    assert rt.launch_host_func(side, note, "side") == 0
    assert rt.launch_host_func(s, note, "main") == 0
    assert rt.record_event(join, side) == 0
    assert rt.stream_wait_event(s, join) == 0
    assert rt.launch_host_func(s, note, "last") == 0
    model = ok(mdl.ri_capture_end(s))
    for _ in range(2):
        del order[:]
        assert mdl.ri_execute_async(model, s) == 0
        assert rt.synchronize_stream(s) == 0
        assert order[0] == "first" and order[-1] == "last"
        assert sorted(order[1:3]) == ["main", "side"]
    assert mdl.ri_destroy(model) == 0
    for e in (fork, join):
        assert rt.destroy_event(e) == 0
    for x in (s, side):
        assert rt.destroy_stream(x) == 0


def test_built_model_with_labels_switches_by_index():
    ls = ok(rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT))
    exe = ok(rt.create_stream())
    runs = []
    model = ok(mdl.ri_build_begin(0))
    labels = [ok(rt.create_label()) for _ in range(2)]
    assert rt.set_label(labels[0], exe) == acl.ACL_ERROR_RT_STREAM_MODEL
    assert rt.create_label_list([])[1] == acl.ACL_ERROR_INVALID_PARAM
    lst = ok(rt.create_label_list(labels))
    index = ok(rt.malloc(4, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    assert mdl.ri_bind_stream(model, ls, acl.ACL_MODEL_STREAM_FLAG_HEAD) == 0
    assert rt.switch_label_by_index(index, 2, lst, ls) == 0
    assert rt.set_label(labels[0], ls) == 0
    assert rt.launch_host_func(ls, runs.append, "branch 0") == 0
    assert rt.set_label(labels[1], ls) == 0
    assert rt.launch_host_func(ls, runs.append, "branch 1") == 0
    assert mdl.ri_end_task(model, ls) == 0
    assert mdl.ri_build_end(model) == 0
    gc.collect()
    assert runs == []
    for i, want in ((1, ["branch 1"]), (0, ["branch 0", "branch 1"])):
        data = i.to_bytes(4, "little")
        assert rt.memcpy(index, 4, acl.util.bytes_to_ptr(data), 4,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        del runs[:]
        assert mdl.ri_execute_async(model, exe) == 0
        assert rt.synchronize_stream(exe) == 0
        assert runs == want
    assert mdl.ri_unbind_stream(model, ls) == 0
    assert mdl.ri_destroy(model) == 0
    assert rt.destroy_label_list(lst) == 0
    assert rt.destroy_label_list(lst) == acl.ACL_ERROR_RT_INVALID_HANDLE
    for label in labels:
        assert rt.destroy_label(label) == 0
    assert rt.free(index) == 0
    for x in (ls, exe):
        assert rt.destroy_stream(x) == 0


def test_bad_arguments_raise_or_return_codes():
    with pytest.raises(TypeError):
        mdl.ri_execute_async("model", 0)
    with pytest.raises(TypeError):
        rt.create_label_list(["label"])
    assert mdl.ri_execute_async(0, 0) != 0
    assert mdl.ri_destroy(0) != 0
    s = ok(rt.create_stream())
    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    with pytest.raises(TypeError):
        rt.launch_host_func(s, "not callable", None)
    model = ok(mdl.ri_capture_end(s))
    assert mdl.ri_execute_async(model, s) == 0  # an empty model
    assert rt.synchronize_stream(s) == 0
    assert mdl.ri_destroy(model) == 0
    assert rt.destroy_stream(s) == 0


def test_task_introspection_lists_streams_and_tasks():
    s = ok(rt.create_stream())
    runs = []
    assert mdl.ri_capture_begin(
        s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    for tag in ("a", "b", "c"):
        assert rt.launch_host_func(s, runs.append, tag) == 0
    model = ok(mdl.ri_capture_end(s))
    streams = ok(mdl.ri_get_streams(model))
    assert len(streams) == 1 and streams[0] not in (0, s)
    tasks = ok(mdl.ri_get_tasks_by_stream(streams[0]))
    assert len(tasks) == 3
    assert [ok(mdl.ri_task_get_seq_id(t)) for t in tasks] == [0, 1, 2]
    assert {ok(mdl.ri_task_get_type(t)) for t in tasks} == {
        acl.ACL_MODEL_RI_TASK_DEFAULT}
    # not a model's stream, or a task of a destroyed model: CANN's codes
    assert mdl.ri_get_tasks_by_stream(s) == ([], 107000)
    assert mdl.ri_execute(model, -1) == 0
    assert runs == ["a", "b", "c"]
    assert mdl.ri_destroy(model) == 0
    assert mdl.ri_task_get_type(tasks[0])[1] == 107000
    assert mdl.ri_get_streams(model) == ([], 107017)  # destroyed model
    assert rt.destroy_stream(s) == 0
