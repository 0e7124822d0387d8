/* Graph introspection (evrt_graph_lane_count, evrt_graph_node_get): each
 * captured call is one node of its type, on the lane of the stream it was
 * captured on, in capture order; bad handles and indices change nothing.
 * The ACL layer lists a model's streams and tasks with it
 * (tests/acl/test_acl_mdl.c). */
#include "test.h"

static void nop(void *p) { (void)p; }

TEST(nodes_have_their_type_and_lane_in_capture_order) {
  evrt_stream_t a, b;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  evrt_event_t fork, join, ext;
  ASSERT_OK(evrt_event_create(&fork, 0));
  ASSERT_OK(evrt_event_create(&join, 0));
  ASSERT_OK(evrt_event_create(&ext, 0));
  static char src[64], dst[64];
  static uint64_t word;
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(a, nop, NULL));         /* 0, lane 0 */
  ASSERT_OK(evrt_memcpy_async(a, dst, src, sizeof dst));   /* 1, lane 0 */
  ASSERT_OK(evrt_event_record(fork, a));                   /* (no node) */
  ASSERT_OK(evrt_stream_wait_event(b, fork));              /* b joins */
  ASSERT_OK(evrt_memset_async(b, dst, 0, sizeof dst));     /* 2, lane 1 */
  ASSERT_OK(evrt_stream_delay(b, 1000));                   /* 3, lane 1 */
  ASSERT_OK(evrt_stream_write_value64(b, &word, 1, 0));    /* 4, lane 1 */
  ASSERT_OK(evrt_event_record(join, b));
  ASSERT_OK(evrt_stream_wait_event(a, join));
  ASSERT_OK(evrt_stream_wait_value64(a, &word, 1, EVRT_VALUE_WAIT_GEQ));
                                                           /* 5, lane 0 */
  ASSERT_OK(evrt_event_record_with_flags(ext, a, EVRT_EVENT_RECORD_EXTERNAL));
                                                           /* 6, lane 0 */
  evrt_graph_t g = NULL;
  ASSERT_OK(evrt_stream_end_capture(a, &g));

  uint32_t lanes = 0;
  ASSERT_OK(evrt_graph_lane_count(g, &lanes));
  ASSERT_EQ(lanes, 2);
  size_t n = 0;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 7);
  static const struct {
    evrt_graph_node_type_t type;
    uint32_t lane;
  } want[] = {
      {EVRT_GRAPH_NODE_HOST_FUNC, 0},   {EVRT_GRAPH_NODE_MEMCPY, 0},
      {EVRT_GRAPH_NODE_MEMSET, 1},      {EVRT_GRAPH_NODE_DELAY, 1},
      {EVRT_GRAPH_NODE_VALUE_WRITE, 1}, {EVRT_GRAPH_NODE_VALUE_WAIT, 0},
      {EVRT_GRAPH_NODE_EVENT_RECORD, 0},
  };
  for (size_t i = 0; i < n; i++) {
    evrt_graph_node_type_t t = (evrt_graph_node_type_t)-1;
    uint32_t lane = 99;
    ASSERT_OK(evrt_graph_node_get(g, i, &t, &lane));
    ASSERT_EQ(t, want[i].type);
    ASSERT_EQ(lane, want[i].lane);
  }
  /* either output may be NULL */
  uint32_t lane = 99;
  ASSERT_OK(evrt_graph_node_get(g, 2, NULL, &lane));
  ASSERT_EQ(lane, 1);
  ASSERT_OK(evrt_graph_node_get(g, 2, NULL, NULL));
  evrt_graph_destroy(g);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
  evrt_event_destroy(fork);
  evrt_event_destroy(join);
  evrt_event_destroy(ext);
}

TEST(bad_input_is_refused_and_writes_nothing) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(s, nop, NULL));
  evrt_graph_t g = NULL;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_node_type_t t = (evrt_graph_node_type_t)77;
  uint32_t lane = 77, lanes = 77;
  ASSERT_ST(evrt_graph_node_get(g, 1, &t, &lane), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_graph_node_get(g, (size_t)-1, &t, &lane),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_EQ((int)t, 77);
  ASSERT_EQ(lane, 77);
  ASSERT_ST(evrt_graph_lane_count(g, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_graph_lane_count(NULL, &lanes), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_node_get(NULL, 0, &t, &lane),
            EVRT_ERROR_INVALID_HANDLE);
  /* an executable graph's handle is not a graph's */
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_ST(evrt_graph_lane_count((evrt_graph_t)x, &lanes),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_OK(evrt_graph_destroy(g));
  /* a destroyed graph */
  ASSERT_ST(evrt_graph_node_get(g, 0, &t, &lane), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_lane_count(g, &lanes), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_EQ(lanes, 77);
  ASSERT_EQ((int)t, 77);
  evrt_graph_exec_destroy(x);
  evrt_stream_destroy(s);
}
