/* evrt_event_info_t is extensible (evrt.h): the caller's struct_size picks
 * the version of the struct; a size the library does not know is an error
 * that writes nothing; the library writes exactly struct_size bytes and
 * never changes struct_size. */
#include "test.h"

#include <stddef.h>
#include <string.h>

/* The struct with room behind it, to see what the call writes. */
struct guarded {
  evrt_event_info_t info;
  unsigned char tail[64];
};

static void fill(struct guarded *g, uint32_t size) {
  memset(g, 0xAB, sizeof *g);
  g->info.struct_size = size;
}

static int untouched_from(const struct guarded *g, size_t from) {
  const unsigned char *p = (const unsigned char *)g;
  for (size_t i = from; i < sizeof *g; i++)
    if (p[i] != 0xAB)
      return 0;
  return 1;
}

TEST(event_info_layout_of_0_1_is_stable) {
  /* Old callers depend on these: a change here breaks the ABI. */
  ASSERT_EQ(sizeof(evrt_event_info_t), 40);
  ASSERT_EQ(offsetof(evrt_event_info_t, struct_size), 0);
  ASSERT_EQ(offsetof(evrt_event_info_t, record_count), 16);
  ASSERT_EQ(offsetof(evrt_event_info_t, imported), 32);
}

TEST(event_info_current_size_fills_every_field_and_nothing_after) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_TIMING));
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_event_synchronize(e));
  struct guarded g;
  fill(&g, sizeof g.info);
  ASSERT_OK(evrt_event_get_info(e, &g.info));
  ASSERT_EQ(g.info.struct_size, sizeof g.info); /* never changed */
  ASSERT_EQ(g.info.flags, EVRT_EVENT_TIMING);
  ASSERT_EQ(g.info.device, 0);
  ASSERT_EQ(g.info.state, EVRT_EVENT_STATE_COMPLETE);
  ASSERT_EQ(g.info.record_count, 1);
  ASSERT_EQ(g.info.record_thread, evrt_thread_id());
  ASSERT_EQ(g.info.imported, 0);
  ASSERT_EQ(g.info.reserved, 0);
  ASSERT(untouched_from(&g, sizeof g.info));
  /* the same struct again: struct_size was kept */
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_event_get_info(e, &g.info));
  ASSERT_EQ(g.info.record_count, 2);
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
}

TEST(event_info_unknown_sizes_are_refused_and_write_nothing) {
  evrt_event_t e;
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
  /* 0 (not set), smaller than the first version, a size between versions,
   * and a newer header's larger struct. */
  const uint32_t bad[] = {0, 4, 36, sizeof(evrt_event_info_t) - 1,
                          sizeof(evrt_event_info_t) + 8, 0xABABABABu};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct guarded g;
    fill(&g, bad[i]);
    ASSERT_ST(evrt_event_get_info(e, &g.info), EVRT_ERROR_INVALID_VALUE);
    ASSERT(strstr(evrt_last_error_message(), "struct_size") != NULL);
    ASSERT_EQ(g.info.struct_size, bad[i]);
    ASSERT(untouched_from(&g, sizeof g.info.struct_size));
  }
  ASSERT_ST(evrt_event_get_info(e, NULL), EVRT_ERROR_INVALID_VALUE);
  evrt_event_destroy(e);
}
