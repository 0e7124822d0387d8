/* Interprocess events (DESIGN.md rule 8) with real processes: the peer is a
 * separate program started with posix_spawn (tests/ipc/ipc_peer.c). */
#include "../test.h"
#include "ipc_common.h"
#include "ipc_spawn.h"

#include <dirent.h>
#include <errno.h>

/* The peer program (CTest passes its path). */
static int spawn_peer(struct peer *p, const char *a1, const char *a2,
                      const char *a3) {
  const char *path = getenv("EVRT_IPC_PEER");
  return peer_spawn(p, path ? path : "./ipc_peer", a1, a2, a3, NULL);
}

static int kill_peer(struct peer *p) {
  kill(p->pid, SIGKILL);
  return reap(p);
}

static int dev_shm_entries(void) {
  DIR *d = opendir("/dev/shm");
  if (!d)
    return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    n += strstr(de->d_name, "evrt") != NULL; /* ours only: CI neighbours
                                                 may use /dev/shm too */
  closedir(d);
  return n;
}

static atomic_ullong mark_ns;
static void mark(void *p) {
  (void)p;
  atomic_store(&mark_ns, now_ns());
}

/* An interprocess event recorded on s after delay_ms, with the time just
 * before the record stored in mark_ns; its handle in hex. */
static evrt_event_t exported(evrt_stream_t s, unsigned delay_ms, char *hex) {
  evrt_event_t e = NULL;
  evrt_ipc_event_handle_t h;
  atomic_store(&mark_ns, 0);
  if (evrt_event_create(&e, EVRT_EVENT_INTERPROCESS))
    abort();
  if (delay_ms) {
    evrt_stream_delay(s, delay_ms * MS);
    evrt_launch_host_func(s, mark, NULL);
    if (evrt_event_record(e, s))
      abort();
  }
  if (evrt_event_ipc_handle(e, &h))
    abort();
  handle_to_hex(&h, hex);
  return e;
}

static int shm_before;
#define LEAK_CHECK_BEGIN() shm_before = dev_shm_entries()
#define LEAK_CHECK_END() ASSERT_EQ(dev_shm_entries(), shm_before)

TEST(importer_sync_returns_only_after_exporter_record) {
  LEAK_CHECK_BEGIN();
  evrt_stream_t s;
  char hex[130];
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  evrt_event_t e = exported(s, 200, hex);
  struct peer p;
  ASSERT_EQ(spawn_peer(&p, "sync", hex, NULL), 0);
  char *l = read_line(&p, "synced", 5000);
  ASSERT(l != NULL);
  unsigned long long t;
  char st[64];
  ASSERT_EQ(sscanf(l, "synced %llu %63s", &t, st), 2);
  ASSERT(strcmp(st, "EVRT_SUCCESS") == 0);
  ASSERT(atomic_load(&mark_ns) != 0 && t >= atomic_load(&mark_ns));
  ASSERT_EQ(reap(&p), 0);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  LEAK_CHECK_END();
}

/* The importer records the event on a stream of `device` (a string) after
 * a delay; the exporter sees that generation pending, then complete. */
static void importer_record_case(const char *device) {
  evrt_stream_t s;
  char hex[130];
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  evrt_event_t e = exported(s, 0, hex);
  ASSERT_OK(evrt_event_query(e)); /* exported, never recorded */
  struct peer p;
  ASSERT_EQ(peer_spawn(&p, getenv("EVRT_IPC_PEER") ? getenv("EVRT_IPC_PEER")
                                                   : "./ipc_peer",
                       "record", hex, "400", device),
            0);
  evrt_status_t q = EVRT_SUCCESS;
  uint64_t dl = now_ns() + 20000 * MS;
  while ((q = evrt_event_query(e)) == EVRT_SUCCESS && now_ns() < dl)
    sleep_ms(1);
  ASSERT_ST(q, EVRT_NOT_READY); /* the importer's record is visible */
  ASSERT_OK(evrt_event_synchronize(e));
  uint64_t t_ret = now_ns();
  char *l = read_line(&p, "marked", 20000);
  ASSERT(l != NULL);
  unsigned long long t;
  ASSERT_EQ(sscanf(l, "marked %llu", &t), 1);
  ASSERT(t_ret >= t);
  ASSERT(read_line(&p, "recorded", 20000) != NULL);
  ASSERT_EQ(reap(&p), 0);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(importer_records_exporter_observes) {
  LEAK_CHECK_BEGIN();
  importer_record_case("0");
  LEAK_CHECK_END();
}

/* As CANN's multi-device IPC sample: an event exported on device 0 is
 * recorded by the importer on a stream of device 1 (an imported event
 * records on any device); the exporter's own event keeps rule 3. */
TEST(importer_records_imported_event_on_another_device) {
  LEAK_CHECK_BEGIN();
  int n = 0;
  ASSERT_OK(evrt_device_count(&n));
  ASSERT(n >= 2); /* CTest sets EVRT_CPU_DEVICES=2 */
  importer_record_case("1");
  evrt_event_t e;
  evrt_stream_t s0, s1;
  evrt_ipc_event_handle_t h;
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_INTERPROCESS));
  ASSERT_OK(evrt_stream_create(&s0, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&s1, 1, 0, 0));
  ASSERT_OK(evrt_event_record(e, s0));
  ASSERT_OK(evrt_event_ipc_handle(e, &h));
  ASSERT_ST(evrt_event_record(e, s1), EVRT_ERROR_DEVICE_MISMATCH);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s0));
  ASSERT_OK(evrt_stream_destroy(s1));
  LEAK_CHECK_END();
}

static atomic_int gate_open;
static void gate(void *p) {
  (void)p;
  while (!atomic_load(&gate_open))
    sleep_ms(1);
}

/* The peer's stream waits on generation 1, held pending by a gate (not a
 * delay: a peer that starts slowly, as under ThreadSanitizer on a loaded
 * machine, would find it complete and test nothing). */
static void stream_wait_case(bool rerecord) {
  evrt_stream_t s, s2;
  char hex[130];
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&s2, 0, 0, 0));
  atomic_store(&gate_open, 0);
  atomic_store(&mark_ns, 0);
  ASSERT_OK(evrt_launch_host_func(s, gate, NULL));
  ASSERT_OK(evrt_launch_host_func(s, mark, NULL));
  evrt_event_t e = exported(s, 0, hex);
  ASSERT_OK(evrt_event_record(e, s));
  struct peer p;
  ASSERT_EQ(spawn_peer(&p, "streamwait", hex, NULL), 0);
  ASSERT(read_line(&p, "waiting", 20000) != NULL);
  if (rerecord)
    ASSERT_OK(evrt_event_record(e, s2)); /* a complete newer generation */
  /* still held: the peer's stream has not passed its wait */
  ASSERT(read_line(&p, "passed", 300) == NULL);
  atomic_store(&gate_open, 1);
  char *l = read_line(&p, "passed", 20000);
  ASSERT(l != NULL);
  unsigned long long t, fails;
  ASSERT_EQ(sscanf(l, "passed %llu %llu", &t, &fails), 2);
  ASSERT_EQ(fails, 0);
  ASSERT(atomic_load(&mark_ns) != 0 && t >= atomic_load(&mark_ns));
  ASSERT_EQ(reap(&p), 0);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_stream_destroy(s2));
}

TEST(importer_stream_waits_on_exporter_event) {
  LEAK_CHECK_BEGIN();
  stream_wait_case(false);
  LEAK_CHECK_END();
}

TEST(rerecord_while_importer_stream_waits_keeps_old_generation) {
  LEAK_CHECK_BEGIN();
  stream_wait_case(true);
  LEAK_CHECK_END();
}

TEST(exporter_killed_mid_wait_importer_gets_peer_lost) {
  LEAK_CHECK_BEGIN();
  struct peer p;
  ASSERT_EQ(spawn_peer(&p, "export", "20000", NULL), 0);
  char *l = read_line(&p, "handle", 5000);
  ASSERT(l != NULL);
  evrt_ipc_event_handle_t h;
  ASSERT_EQ(hex_to_handle(l + 7, &h), 0);
  evrt_event_t e;
  ASSERT_OK(evrt_event_ipc_open(&e, &h));
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_wait_event(s, e));
  sleep_ms(100);
  kill_peer(&p);
  uint64_t t0 = now_ns();
  ASSERT_ST(evrt_event_synchronize(e), EVRT_ERROR_PEER_LOST);
  ASSERT(now_ns() - t0 < 2000 * MS);
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 2000 * MS));
  uint64_t fails = 0;
  ASSERT_OK(evrt_stream_wait_failures(s, &fails));
  ASSERT_EQ(fails, 1);
  ASSERT_ST(evrt_event_query(e), EVRT_ERROR_PEER_LOST);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  /* a new import of a dead exporter's handle is a clear error */
  evrt_event_t e2;
  ASSERT_ST(evrt_event_ipc_open(&e2, &h), EVRT_ERROR_PEER_LOST);
  LEAK_CHECK_END();
}

TEST(importer_killed_never_blocks_exporter) {
  LEAK_CHECK_BEGIN();
  evrt_stream_t s;
  char hex[130];
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  evrt_event_t e = exported(s, 0, hex);
  struct peer p;
  ASSERT_EQ(spawn_peer(&p, "hold", hex, "20000"), 0);
  ASSERT(read_line(&p, "held", 5000) != NULL);
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY); /* importer's record */
  kill_peer(&p);
  uint64_t t0 = now_ns();
  ASSERT_ST(evrt_event_synchronize(e), EVRT_ERROR_PEER_LOST);
  ASSERT(now_ns() - t0 < 2000 * MS);
  /* the exporter goes on: record, query and synchronize work */
  ASSERT_OK(evrt_stream_delay(s, 20 * MS));
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  LEAK_CHECK_END();
}

TEST(sixty_four_importers_on_one_event) {
  LEAK_CHECK_BEGIN();
  enum { N = 64 };
  evrt_stream_t s;
  char hex[130];
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  evrt_event_t e = exported(s, 1500, hex);
  struct peer p[N];
  for (int i = 0; i < N; i++)
    ASSERT_EQ(spawn_peer(&p[i], "sync", hex, NULL), 0);
  int ok = 0;
  for (int i = 0; i < N; i++) {
    char *l = read_line(&p[i], "synced", 20000);
    unsigned long long t;
    char st[64];
    if (l && sscanf(l, "synced %llu %63s", &t, st) == 2 &&
        !strcmp(st, "EVRT_SUCCESS") && t >= atomic_load(&mark_ns) &&
        atomic_load(&mark_ns))
      ok++;
    reap(&p[i]);
  }
  ASSERT_EQ(ok, N);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  LEAK_CHECK_END();
}

TEST(misuse_gets_clear_errors) {
  LEAK_CHECK_BEGIN();
  evrt_event_t e, plain, x;
  evrt_ipc_event_handle_t h, bad;
  ASSERT_ST(evrt_event_create(&x, EVRT_EVENT_INTERPROCESS | EVRT_EVENT_TIMING),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_event_create(&plain, 0));
  ASSERT_ST(evrt_event_ipc_handle(plain, &h), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_INTERPROCESS));
  ASSERT_ST(evrt_event_ipc_handle(e, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_event_ipc_handle(e, &h));
  int dev = -1;
  ASSERT_OK(evrt_event_get_device(e, &dev));
  ASSERT_EQ(dev, 0); /* export initializes on the current device */
  ASSERT_ST(evrt_event_ipc_open(&x, &h), EVRT_ERROR_IPC_SAME_PROCESS);
  memset(&bad, 0, sizeof bad);
  ASSERT_ST(evrt_event_ipc_open(&x, &bad), EVRT_ERROR_IPC_HANDLE);
  for (int i = 0; i < EVRT_IPC_HANDLE_SIZE; i++) {
    bad = h;
    bad.reserved[i] ^= 0x40; /* any corrupted byte */
    evrt_status_t st = evrt_event_ipc_open(&x, &bad);
    ASSERT(st == EVRT_ERROR_IPC_HANDLE);
  }
  bad = h;
  memset(bad.reserved + 32, 0, 32); /* truncated */
  ASSERT_ST(evrt_event_ipc_open(&x, &bad), EVRT_ERROR_IPC_HANDLE);
  /* an importer cannot export again */
  char hex[130];
  handle_to_hex(&h, hex);
  struct peer p;
  ASSERT_EQ(spawn_peer(&p, "reexport", hex, NULL), 0);
  char *l = read_line(&p, "reexport", 5000);
  ASSERT(l && strstr(l, "EVRT_ERROR_NOT_PERMITTED"));
  ASSERT_EQ(reap(&p), 0);
  ASSERT_ST(evrt_event_reset(e, NULL), EVRT_ERROR_NOT_SUPPORTED);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_event_destroy(plain));
  LEAK_CHECK_END();
}

/* The exporter lives on but destroyed the event: opening its handle is
 * EVRT_ERROR_INVALID_HANDLE saying so (not PEER_LOST: the peer is alive),
 * whether the descriptor it named is closed or now holds another event's
 * segment. */
TEST(open_of_event_destroyed_by_live_exporter_is_invalid_handle) {
  LEAK_CHECK_BEGIN();
  evrt_event_t e, e2;
  evrt_ipc_event_handle_t h, h2;
  char hex[130];
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_INTERPROCESS));
  ASSERT_OK(evrt_event_ipc_handle(e, &h));
  handle_to_hex(&h, hex);
  ASSERT_OK(evrt_event_destroy(e));
  struct peer p;
  ASSERT_EQ(spawn_peer(&p, "query", hex, NULL), 0);
  char *l = read_line(&p, "error", 5000);
  ASSERT(l && strstr(l, "EVRT_ERROR_INVALID_HANDLE") &&
         strstr(l, "destroyed") && strstr(l, "alive"));
  reap(&p);
  /* The next export takes the lowest free descriptor: the old number. */
  ASSERT_OK(evrt_event_create(&e2, EVRT_EVENT_INTERPROCESS));
  ASSERT_OK(evrt_event_ipc_handle(e2, &h2));
  ASSERT_EQ(spawn_peer(&p, "query", hex, NULL), 0);
  l = read_line(&p, "error", 5000);
  ASSERT(l && strstr(l, "EVRT_ERROR_INVALID_HANDLE") &&
         strstr(l, "destroyed") && strstr(l, "now holds event"));
  reap(&p);
  /* the new event's own handle opens */
  handle_to_hex(&h2, hex);
  ASSERT_EQ(spawn_peer(&p, "query", hex, NULL), 0);
  l = read_line(&p, "query", 5000);
  ASSERT(l && strstr(l, "EVRT_SUCCESS"));
  reap(&p);
  ASSERT_OK(evrt_event_destroy(e2));
  LEAK_CHECK_END();
}

TEST(pending_generation_ring_full_is_a_clear_error) {
  LEAK_CHECK_BEGIN();
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_INTERPROCESS));
  ASSERT_OK(evrt_stream_delay(s, 300 * MS));
  int n = 0;
  evrt_status_t st = EVRT_SUCCESS;
  while (n < 5000 && (st = evrt_event_record(e, s)) == EVRT_SUCCESS)
    n++;
  ASSERT_ST(st, EVRT_ERROR_EVENT_LIMIT);
  ASSERT_EQ(n, 2048);
  ASSERT(strstr(evrt_last_error_message(), "pending") != NULL);
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY); /* unchanged */
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_event_record(e, s)); /* free again */
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  LEAK_CHECK_END();
}
