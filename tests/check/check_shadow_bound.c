/*
 * check_shadow_bound.c - the checker's shadow memory grows with the number
 * of distinct states, not the number of accesses (issue 23, item 7).
 *
 * White-box (evrt_static): counts the shadow's intervals.  One stream reads
 * a 4 MiB table 200,000 times, 16 bytes at a time, and after every 1,000 of
 * them reads the whole table once: that read comes after each small read of
 * the same stream, replaces them, and leaves one interval where the small
 * reads had cut up to 2,000.  Before the merge, the intervals never joined
 * again and the map held about 400,000 of them at the end.
 */
#include "test.h"

#include "check/cimpl.h"

#include <stdlib.h>

#define TABLE (4u << 20)
#define SMALL 16u
#define ROUND 1000
#define ROUNDS 200

__attribute__((constructor)) static void check_on(void) {
  setenv("EVRT_CHECK", "1", 1); /* read once, at initialization */
}

TEST(small_reads_of_one_table_by_one_stream_stay_bounded) {
  ASSERT_EQ(evrt_check_enabled(), 1);
  unsigned char *table = malloc(TABLE), *whole = malloc(TABLE);
  unsigned char small[SMALL];
  ASSERT(table && whole);
  memset(table, 7, TABLE);
  ASSERT_OK(evrt_check_access(table, TABLE, EVRT_CHECK_WRITE));
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  size_t base = evrt__shadow_intervals(), most = 0;
  uint32_t x = 12345;
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < ROUND; i++) {
      x = x * 1103515245u + 12345u;
      size_t off = (size_t)(x >> 8) % (TABLE / SMALL) * SMALL;
      ASSERT_OK(evrt_memcpy_async(s, small, table + off, SMALL));
    }
    ASSERT_OK(evrt_stream_synchronize(s));
    size_t n = evrt__shadow_intervals();
    if (n > most)
      most = n;
    /* 1,000 reads cut the table into at most 2,001 pieces */
    if (n > base + 2 * ROUND + 8)
      FAIL_("round %d: %zu intervals (%zu before the reads)", r, n, base);
    ASSERT_OK(evrt_memcpy_async(s, whole, table, TABLE));
    ASSERT_OK(evrt_stream_synchronize(s));
    n = evrt__shadow_intervals();
    if (n > base + 8)
      FAIL_("round %d: %zu intervals after the whole read (%zu before)", r,
            n, base);
  }
  ASSERT(most > base + ROUND / 2); /* the small reads did cut the table */
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_EQ(evrt_check_findings(), (uint64_t)0);
  free(whole);
  free(table);
}
