"""Stream capture and graph replay (docs/capture.md, docs/python.md).

The native API, on ``evrt``: ``begin_capture(stream=None, mode="global")``,
``end_capture(stream=None) -> Graph``, ``capture_status(stream=None)``,
``exchange_capture_mode(mode)``, ``Graph`` (``node_count``,
``instantiate()``, ``debug_dot_print(path)``, ``destroy()``) and
``GraphExec`` (``launch(stream=None)``, ``destroy()``).

torch.cuda.graphs' API, built per device type by :func:`make_torch_api`:
``CUDAGraph``, ``graph``, ``graph_pool_handle`` and
``is_current_stream_capturing`` (evrt.cuda has them).
"""

import gc as _gc
import warnings as _warnings
import itertools as _itertools

from . import _evrt

Graph = _evrt.Graph
GraphExec = _evrt.GraphExec
begin_capture = _evrt.begin_capture
end_capture = _evrt.end_capture
capture_status = _evrt.capture_status
exchange_capture_mode = _evrt.exchange_capture_mode

_MODES = ("global", "thread_local", "relaxed")
_pool_ids = _itertools.count(1)


def graph_pool_handle():
    """A memory pool token for ``capture_begin(pool=...)`` and
    ``graph(pool=...)``, as ``torch.cuda.graph_pool_handle()``.

    evrt allocates no device memory for a capture, so a token only names a
    pool: graphs that share one behave as graphs that do not.
    """
    return (0, next(_pool_ids))


def make_torch_api(f, stream_context, graph_class_name, module):
    """The torch.cuda.graphs classes and functions for the device type whose
    module functions are ``f`` (``current_stream``, ``default_stream``,
    ``synchronize``; ``Stream`` is the type's stream class)."""
    current_stream = f["current_stream"]
    default_stream = f["default_stream"]
    synchronize = f["synchronize"]
    stream_class = f["Stream"]

    def is_current_stream_capturing():
        """True while the current stream is capturing (also when its
        capture was invalidated and not ended yet)."""
        return capture_status(current_stream())[0] != "none"

    class TorchGraph:
        """A captured graph and its executable form, as torch.cuda.CUDAGraph.

        Capture with ``capture_begin()`` / ``capture_end()`` (or the
        ``graph`` context manager) on the current stream, which must not be
        a default stream; ``replay()`` launches the executable graph on the
        current stream.

        Args:
            keep_graph (bool, optional): keep the graph after
                ``capture_end()`` (``raw_cuda_graph()``); it is then
                instantiated by ``instantiate()``, or by the first
                ``replay()``.
        """

        def __init__(self, keep_graph=False):
            self._keep = bool(keep_graph)
            self._graph = None
            self._exec = None
            self._stream = None
            self._pool = None
            self._debug = False
            self._ended = False

        def capture_begin(self, pool=None, capture_error_mode="global"):
            """Begin capturing the current stream's work.

            Args:
                pool (optional): a token from ``graph_pool_handle()`` or
                    another graph's ``pool()`` (kept, see pool()).
                capture_error_mode (str, optional): "global",
                    "thread_local" or "relaxed": which potentially unsafe
                    calls other threads (and this one) may make meanwhile
                    (docs/capture.md, rule C10).
            """
            if capture_error_mode not in _MODES:
                raise RuntimeError(
                    "capture_error_mode must be one of %s, not %r"
                    % (", ".join(_MODES), capture_error_mode))
            if self._exec is not None:
                raise RuntimeError(
                    "This CUDAGraph instance already owns a captured graph. "
                    "To capture a new graph, create a new instance.")
            if self._graph is not None:
                raise RuntimeError(
                    "this graph holds a capture already: reset() it, or "
                    "capture into a new instance")
            s = current_stream()
            if s == default_stream(s.device):
                raise RuntimeError(
                    "CUDA graphs must be captured on a non-default stream. "
                    "(However, after capture, it's ok to replay them on the "
                    "default stream.)")
            begin_capture(s, capture_error_mode)
            self._stream = s
            self._pool = pool if pool is not None else graph_pool_handle()

        def capture_end(self):
            """End the capture; the graph can then be replayed."""
            if self._stream is None:
                raise RuntimeError("capture_end() without capture_begin()")
            s, self._stream = self._stream, None
            g = end_capture(s)
            if g.node_count == 0:
                _warnings.warn(
                    "The CUDA Graph is empty. This usually means that the "
                    "graph was attempted to be captured on wrong device or "
                    "stream.", UserWarning, stacklevel=2)
            self._ended = True
            if self._keep:
                self._graph = g
                return
            self._exec = g.instantiate()
            if self._debug:
                self._graph = g  # for debug_dump
            else:
                g.destroy()

        def instantiate(self):
            """Instantiate the kept graph (keep_graph=True) again."""
            if not self._ended:
                raise RuntimeError("capture_end() must have been called "
                                   "before calling instantiate")
            if self._exec is not None:
                if not self._keep:
                    raise RuntimeError(
                        "instantiate() is intended to be called by the user "
                        "only when keep_graph=true")
                self._exec.destroy()
            if self._graph is None:
                raise RuntimeError("instantiate() needs a captured graph "
                                   "kept with keep_graph=True")
            self._exec = self._graph.instantiate()

        def replay(self):
            """Launch the captured work on the current stream."""
            if self._exec is None:
                if self._graph is None:
                    raise RuntimeError(
                        "Called CUDAGraph::replay without a preceding "
                        "successful capture.")
                self.instantiate()
            self._exec.launch(current_stream())

        def reset(self):
            """Delete the graph and its executable form (replays in flight
            complete); the object can capture again."""
            g, x = self._graph, self._exec
            self._graph = self._exec = None
            self._ended = False
            if x is not None:
                x.destroy()
            if g is not None:
                g.destroy()

        def pool(self):
            """The memory pool token of this graph (see
            graph_pool_handle)."""
            return self._pool

        def enable_debug_mode(self):
            """Keep the graph after capture_end() for debug_dump()."""
            self._debug = True

        def debug_dump(self, debug_path):
            """Write the graph to debug_path as Graphviz (dot), when debug
            mode was enabled before capture_end()."""
            if self._graph is None:
                _warnings.warn("debug_dump(): no graph kept: call "
                              "enable_debug_mode() before capture_end()")
                return
            self._graph.debug_dot_print(debug_path)

        def raw_cuda_graph(self):
            """The kept graph's evrt_graph_t handle (keep_graph=True)."""
            if not self._keep:
                raise RuntimeError(
                    "You cannot access the raw cudaGraph_t instance unless "
                    "CUDAGraph was initialized with keep_graph=true")
            if self._graph is None:
                raise RuntimeError(
                    "You cannot access the raw cudaGraph_t instance until "
                    "capture_end() has been called")
            return self._graph.handle

        def raw_cuda_graph_exec(self):
            """The executable graph's evrt_graph_exec_t handle."""
            if self._exec is None:
                raise RuntimeError(
                    "You cannot access the raw cudaGraphExec_t instance "
                    "until instantiate() has been called")
            return self._exec.handle

    TorchGraph.__name__ = TorchGraph.__qualname__ = graph_class_name
    TorchGraph.__module__ = module

    class graph:
        """Context manager that captures the block's work into a graph
        object for later replay, as torch.cuda.graph.

        On entry it synchronizes the device, makes ``stream`` (default: a
        side stream of the class, ``graph.default_capture_stream``) the
        current stream and begins the capture; on exit it ends the capture
        and restores the streams.  If the block raises, the capture is
        ended and discarded and the block's exception propagates.

        Args:
            cuda_graph: the graph object to capture into.
            pool (optional): a pool token (see graph_pool_handle).
            stream (optional): the stream to capture on.
            capture_error_mode (str, optional): "global", "thread_local"
                or "relaxed".
        """

        default_capture_stream = None

        def __init__(self, cuda_graph, pool=None, stream=None,
                     capture_error_mode="global"):
            if self.__class__.default_capture_stream is None:
                self.__class__.default_capture_stream = stream_class()
            self.pool = () if pool is None else (pool,)
            self.capture_stream = (
                stream if stream is not None
                else self.__class__.default_capture_stream)
            self.stream_ctx = stream_context(self.capture_stream)
            self.cuda_graph = cuda_graph
            self.capture_error_mode = capture_error_mode

        def __enter__(self):
            synchronize()
            _gc.collect()
            self.stream_ctx.__enter__()
            try:
                self.cuda_graph.capture_begin(
                    *self.pool, capture_error_mode=self.capture_error_mode)
            except BaseException:
                self.stream_ctx.__exit__(None, None, None)
                raise

        def __exit__(self, exc_type, exc, tb):
            try:
                if exc_type is None:
                    self.cuda_graph.capture_end()
                else:
                    try:
                        self.cuda_graph.capture_end()
                    except Exception:
                        pass  # (the block's exception is the one to see)
                    self.cuda_graph.reset()
            finally:
                self.stream_ctx.__exit__(exc_type, exc, tb)

    graph.__module__ = module
    is_current_stream_capturing.__module__ = module
    return TorchGraph, graph, is_current_stream_capturing
