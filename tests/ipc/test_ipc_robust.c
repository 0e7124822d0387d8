/*
 * test_ipc_robust.c - interprocess events when a peer dies, stops or its
 * pid is reused in the middle of the generation protocol (src/ipc_ring.c).
 * White-box: links evrt_static to reach the protocol's steps and the
 * segment.  The peer is this program again (posix_spawn of /proc/self/exe
 * with "peer ..." arguments).
 *
 * Before round two a record took a lock in the segment that stored its
 * owner's pid: a holder stopped with SIGSTOP made every other process's
 * record spin for ever, and so did a dead holder whose pid was reused.
 * The protocol now has no lock: these tests stop or kill a peer between
 * the two steps of its claim, fake a recorder whose pid was reused, fill
 * the recorders' table, and race records from several processes.
 */
#include "../test.h"
#include "ipc.h"
#include "ipc_common.h"
#include "ipc_spawn.h"


static struct evrt__ipc_map *map_of_handle(evrt_event_t h) {
  struct evrt__event *e = evrt__event_get(h);
  return e ? evrt__ipc_map_of(e) : NULL;
}

/* ------------------------------------------------------------ the peer */

static evrt_event_t peer_open(const char *hex) {
  evrt_ipc_event_handle_t h;
  evrt_event_t e = NULL;
  if (hex_to_handle(hex, &h) || evrt_event_ipc_open(&e, &h)) {
    printf("error open %s\n", evrt_last_error_message());
    exit(2);
  }
  return e;
}

/* peer claim HEX MODE: claim a generation, its first step only (MODE
 * head-...) or both (fill-...), print "claimed G", then stop itself
 * (...-stop) or sleep (...-sleep).
 * peer record HEX N: N records on a stream of its own, each generation on
 * a line "gen G", then "done".
 * peer register HEX: one record; "record ST MESSAGE". */
static int peer_main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc < 4)
    return 2;
  evrt_event_t e = peer_open(argv[3]);
  struct evrt__ipc_map *map = map_of_handle(e);
  if (!strcmp(argv[2], "claim") && argc >= 5) {
    unsigned me = evrt__ipc_recorder(map);
    uint64_t g = !strncmp(argv[4], "head", 4)
                     ? evrt__ipc_claim_head(map->shm, me)
                     : evrt__ipc_claim(map->shm, me);
    printf("claimed %llu\n", (unsigned long long)g);
    if (strstr(argv[4], "stop"))
      raise(SIGSTOP);
    sleep(60);
    return 0;
  }
  evrt_stream_t s;
  if (evrt_stream_create(&s, 0, 0, 0))
    return 2;
  if (!strcmp(argv[2], "record") && argc >= 5) {
    int n = atoi(argv[4]);
    for (int i = 0; i < n; i++) {
      evrt_status_t st = evrt_event_record(e, s);
      evrt_event_info_t info = {.struct_size = sizeof info};
      if (st || evrt_event_get_info(e, &info)) {
        printf("error record %s %s\n", evrt_err_name(st),
               evrt_last_error_message());
        return 2;
      }
      printf("gen %llu\n", (unsigned long long)info.record_count);
    }
    evrt_stream_synchronize(s);
    printf("done\n");
    return 0;
  }
  if (!strcmp(argv[2], "register")) {
    evrt_status_t st = evrt_event_record(e, s);
    printf("record %s %s\n", evrt_err_name(st),
           st ? evrt_last_error_message() : "");
    return 0;
  }
  return 2;
}

__attribute__((constructor)) static void maybe_peer(void) {
  /* A peer never gets to the harness's main. */
  static char buf[4096];
  FILE *f = fopen("/proc/self/cmdline", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = 0;
  char *argv[8];
  int argc = 0;
  for (size_t i = 0; i < n && argc < 8; i += strlen(buf + i) + 1)
    argv[argc++] = buf + i;
  if (argc >= 2 && !strcmp(argv[1], "peer"))
    exit(peer_main(argc, argv));
}

static int spawn_self(struct peer *p, const char *cmd, const char *hex,
                      const char *arg) {
  return peer_spawn(p, "/proc/self/exe", "peer", cmd, hex, arg);
}

/* ------------------------------------------------------------- helpers */

static evrt_event_t exported(char *hex) {
  evrt_event_t e = NULL;
  evrt_ipc_event_handle_t h;
  if (evrt_event_create(&e, EVRT_EVENT_INTERPROCESS) ||
      evrt_event_ipc_handle(e, &h))
    abort();
  handle_to_hex(&h, hex);
  return e;
}

static int kill_peer(struct peer *p) {
  kill(p->pid, SIGKILL);
  return reap(p);
}

static void mark(void *p) { atomic_store((atomic_int *)p, 1); }

/* ---------------------------------------------------------------- tests */

/* A process killed between the two steps of its claim (head moved, its
 * slot not filled): the others see that generation as lost, record past it
 * and synchronize their own generations. */
TEST(claimer_killed_between_claim_and_fill_stops_nobody) {
  char hex[130];
  evrt_event_t e = exported(hex);
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  struct peer p;
  ASSERT_EQ(spawn_self(&p, "claim", hex, "head-sleep"), 0);
  char *l = read_line(&p, "claimed", 10000);
  ASSERT(l && !strcmp(l, "claimed 1"));
  kill_peer(&p);
  /* helped: slot 1 now names the dead claimer */
  ASSERT_ST(evrt_event_query(e), EVRT_ERROR_PEER_LOST);
  ASSERT_ST(evrt_event_synchronize_timeout(e, 10000 * MS),
            EVRT_ERROR_PEER_LOST);
  ASSERT_OK(evrt_stream_delay(s, 50 * MS));
  ASSERT_OK(evrt_event_record(e, s));
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.record_count, 2);
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
}

/* A process stopped (SIGSTOP) between the two steps of its claim, as
 * between a lock and its unlock: another process still records; waits on
 * the stopped one's generation sleep (the waiting thread uses little CPU)
 * and end by their timeout, a stream's wait too; after SIGCONT and a kill
 * the generation is lost. */
TEST(claimer_stopped_mid_claim_waiters_sleep_and_time_out) {
  char hex[130];
  evrt_event_t e = exported(hex);
  evrt_stream_t s, s2;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&s2, 0, 0, 0));
  struct peer p;
  ASSERT_EQ(spawn_self(&p, "claim", hex, "head-stop"), 0);
  char *l = read_line(&p, "claimed", 10000);
  ASSERT(l && !strcmp(l, "claimed 1"));
  int status = 0;
  ASSERT_EQ(waitpid(p.pid, &status, WUNTRACED), p.pid);
  ASSERT(WIFSTOPPED(status));
  /* stopped, not dead: pending */
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
  ASSERT_ST(evrt_event_synchronize_timeout(e, 500 * MS), EVRT_ERROR_TIMEOUT);
  uint64_t wall = now_ns() - t0, cpu = thread_cpu_ns() - c0;
  ASSERT(wall >= 500 * MS);
  /* slept: a spin until the timeout would use about all of it */
  ASSERT(cpu < wall / 2);
  /* a stream's wait with a timeout goes on after it, counted */
  atomic_int passed = 0;
  ASSERT_OK(evrt_stream_wait_event_timeout(s2, e, 200 * MS));
  ASSERT_OK(evrt_launch_host_func(s2, mark, &passed));
  ASSERT_OK(evrt_stream_synchronize_timeout(s2, 20000 * MS));
  ASSERT_EQ(atomic_load(&passed), 1);
  uint64_t fails = 0;
  ASSERT_OK(evrt_stream_wait_failures(s2, &fails));
  ASSERT_EQ(fails, 1);
  /* this process records past the stopped claim, and completes */
  ASSERT_OK(evrt_stream_delay(s, 20 * MS));
  ASSERT_OK(evrt_event_record(e, s));
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.record_count, 2);
  ASSERT_OK(evrt_event_synchronize_timeout(e, 20000 * MS));
  kill(p.pid, SIGCONT);
  kill_peer(&p);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_stream_destroy(s2));
}

/* The recorder of a pending generation died and its pid went to another
 * process: simulated by a recorders' entry with a live pid (this one) and
 * another start time.  Waiters get PEER_LOST, records go on. */
TEST(recorder_whose_pid_was_reused_counts_as_dead) {
  char hex[130];
  evrt_event_t e = exported(hex);
  struct evrt__ipc_map *map = map_of_handle(e);
  ASSERT(map != NULL);
  struct evrt__ipc_shm *m = map->shm;
  uint64_t fake = ((evrt__ipc_my_start + 1) << EVRT__IPC_PID_BITS) |
                  (uint64_t)getpid();
  unsigned rec = EVRT__IPC_RECORDERS; /* the last entry, free so far */
  ASSERT_EQ(atomic_load(&m->recorder[rec - 1]), 0);
  atomic_store(&m->recorder[rec - 1], fake);
  ASSERT_EQ(evrt__ipc_claim(m, rec), 1);
  ASSERT_ST(evrt_event_query(e), EVRT_ERROR_PEER_LOST);
  ASSERT_ST(evrt_event_synchronize_timeout(e, 20000 * MS),
            EVRT_ERROR_PEER_LOST);
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
}

/* The recorders' table full of live processes: another process's record
 * is a clear error that changes nothing; once those entries are dead (and
 * name no pending generation) it takes one over. */
TEST(recorders_table_full_is_a_clear_error_dead_entries_are_reused) {
  char hex[130];
  evrt_event_t e = exported(hex);
  struct evrt__ipc_shm *m = map_of_handle(e)->shm;
  evrt__ipc_init_self();
  uint64_t live = (evrt__ipc_my_start << EVRT__IPC_PID_BITS) |
                  (uint64_t)evrt__ipc_my_pid;
  uint64_t dead = ((evrt__ipc_my_start + 1) << EVRT__IPC_PID_BITS) |
                  (uint64_t)evrt__ipc_my_pid;
  for (unsigned i = 0; i < EVRT__IPC_RECORDERS; i++)
    atomic_store(&m->recorder[i], live);
  struct peer p;
  ASSERT_EQ(spawn_self(&p, "register", hex, NULL), 0);
  char *l = read_line(&p, "record", 10000);
  ASSERT(l && strstr(l, "EVRT_ERROR_EVENT_LIMIT") && strstr(l, "processes"));
  ASSERT_EQ(reap(&p), 0);
  ASSERT_EQ(atomic_load(&m->head), 0); /* nothing claimed */
  for (unsigned i = 0; i < EVRT__IPC_RECORDERS; i++)
    atomic_store(&m->recorder[i], dead);
  ASSERT_EQ(spawn_self(&p, "register", hex, NULL), 0);
  l = read_line(&p, "record", 10000);
  ASSERT(l && strstr(l, "EVRT_SUCCESS"));
  ASSERT_EQ(reap(&p), 0);
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_EQ(evrt__ipc_gen(atomic_load(&m->head)), 1);
  ASSERT_OK(evrt_event_destroy(e));
}

/* Records racing from several processes (and this one) claim distinct,
 * consecutive generations: the claim's CAS loop loses nothing and gives
 * nothing twice. */
TEST(concurrent_records_from_processes_get_distinct_generations) {
  enum { PEERS = 4, EACH = 400, TOTAL = (PEERS + 1) * EACH };
  char hex[130];
  evrt_event_t e = exported(hex);
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  struct peer p[PEERS];
  char each[16];
  snprintf(each, sizeof each, "%d", EACH);
  for (int i = 0; i < PEERS; i++)
    ASSERT_EQ(spawn_self(&p[i], "record", hex, each), 0);
  static unsigned char seen[TOTAL + 1];
  memset(seen, 0, sizeof seen);
  int bad = 0;
  for (int i = 0; i < EACH; i++) {
    evrt_event_info_t info = {.struct_size = sizeof info};
    ASSERT_OK(evrt_event_record(e, s));
    ASSERT_OK(evrt_event_get_info(e, &info));
    if (info.record_count < 1 || info.record_count > TOTAL ||
        seen[info.record_count]++)
      bad++;
  }
  for (int i = 0; i < PEERS; i++) {
    char *l;
    while ((l = read_line(&p[i], "", 30000)) && strncmp(l, "done", 4)) {
      unsigned long long g = 0;
      if (sscanf(l, "gen %llu", &g) != 1 || g < 1 || g > TOTAL || seen[g]++)
        bad++;
    }
    ASSERT(l != NULL);
    ASSERT_EQ(reap(&p[i]), 0);
  }
  ASSERT_EQ(bad, 0);
  for (int g = 1; g <= TOTAL; g++)
    ASSERT_EQ(seen[g], 1);
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
}
