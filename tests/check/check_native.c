/*
 * check_native.c - racy and correct programs of the native API under
 * EVRT_CHECK (scenario.h says how they are run and judged).
 */
#include "scenario.h"

#include <evrt.h>
#include <pthread.h>

#define OK(call)                                                               \
  do {                                                                         \
    evrt_status_t st_ = (call);                                                \
    if (st_ != EVRT_SUCCESS) {                                                 \
      fprintf(stderr, "scenario: %s failed: %s (%s)\n", #call,                 \
              evrt_err_name(st_), evrt_last_error_message());                  \
      exit(3);                                                                 \
    }                                                                          \
  } while (0)

static char buf[256], out1[256], out2[256];

static evrt_stream_t stream(void) {
  evrt_stream_t s;
  OK(evrt_stream_create(&s, 0, 0, 0));
  return s;
}
static evrt_event_t event(unsigned flags) {
  evrt_event_t e;
  OK(evrt_event_create(&e, flags));
  return e;
}

/* ------------------------------------------------------------ racy ones */

/* The reader forgot to wait for the writer. */
SCENARIO(missing_wait, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* The program writes to stderr from another thread while the race is
 * found and reported: the report still comes out as one block (a failing
 * CHECK's message once split the demo's report mid-line). */
static atomic_int noise_stop;
static void *noise_main(void *arg) {
  (void)arg;
  for (int i = 0; i < 200000 && !atomic_load(&noise_stop); i++) {
    fputs("noise from the program\n", stderr);
    nanosleep(&(struct timespec){0, 20000}, NULL);
  }
  return NULL;
}
SCENARIO(report_amid_program_output, "data race") {
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, noise_main, NULL) == 0);
  sleep_ms_(2);
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
  sleep_ms_(20);
  atomic_store(&noise_stop, 1);
  pthread_join(t, NULL);
}

/* Stream names and a call site label that hold bytes that are not UTF-8
 * (a Latin-1 label, a name cut mid-character): the race is reported, and
 * report_not_utf8.sh checks that the EVRT_CHECK_REPORT file is valid JSON. */
SCENARIO(names_not_utf8, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_stream_set_name(a, "writer \xff\xfe \"q\" \x01"));
  OK(evrt_stream_set_name(b, "reader \xc3"));
  OK(evrt_check_site("caf\xe9.py:7 (\xe9t\xe9)"));
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_check_site(NULL));
  OK(evrt_device_synchronize(0));
}

/* A binding's calls labeled as Python (evrt_check_site_api): the fix is in
 * Python's words, with the streams by their names (Python identifiers).
 * An API value that is not one leaves the label as it was. */
REPORT_LINES(python_api_fix,
             "|    on stream * \"s_fill\" (device 0), work item #1",
             "|    on stream * \"s_copy\" (device 0), work item #1",
             "|    enqueued at step (train.py:3)",
             "  fix: make s_* wait for s_*'s work between the two: "
             "s_*.wait_stream(s_*), or e = s_*.record_event() then "
             "s_*.wait_event(e), or s_*.synchronize() in between")
SCENARIO(python_api_fix, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_stream_set_name(a, "s_fill"));
  OK(evrt_stream_set_name(b, "s_copy"));
  OK(evrt_check_site_api("step (train.py:3)", EVRT_CHECK_API_PYTHON));
  EXPECT(evrt_check_site_api("step (other.py:9)", 2) ==
         EVRT_ERROR_INVALID_VALUE);
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_check_site(NULL));
  OK(evrt_device_synchronize(0));
}

/* The record is placed before the write it should cover. */
SCENARIO(record_before_write, "data race") {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_event_record(e, a));
  OK(evrt_memset_async(a, buf, 2, sizeof buf));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  gate_open();
  OK(evrt_device_synchronize(0));
}

/* A wait on an event that was never recorded orders nothing (rule 2). */
SCENARIO(wait_never_recorded, "data race") {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  OK(evrt_memset_async(a, buf, 3, sizeof buf));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* The event is recorded again on another stream before the wait binds:
 * the wait covers the other stream, not the writer. */
SCENARIO(rerecord_other_stream, "data race") {
  evrt_stream_t a = stream(), b = stream(), c = stream();
  evrt_event_t e = event(0);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 4, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_event_record(e, c));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  gate_open();
  OK(evrt_device_synchronize(0));
}

SCENARIO(write_write, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 5, 64));
  OK(evrt_memset_async(b, buf, 6, 64));
  OK(evrt_device_synchronize(0));
}

/* Two writes that share exactly one byte. */
SCENARIO(one_byte_overlap, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 7, 16));
  OK(evrt_memset_async(b, buf + 15, 8, 16));
  OK(evrt_device_synchronize(0));
}

/* The wait timed out before the writer finished: it orders nothing. */
SCENARIO(wait_timed_out, "data race") {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 9, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_stream_wait_event_timeout(b, e, 1000000));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_stream_synchronize(b));
  gate_open();
  OK(evrt_device_synchronize(0));
}

/* A double buffer refilled on the wrong half: the host waited for the read
 * of the first half and rewrites the second, which the stream read after
 * the event (the reads of the two halves are adjacent and by one stream:
 * the shadow must not let the later one stand for both). */
static atomic_int second_half_read;
static void note_second_half(void *p) {
  (void)p;
  atomic_store(&second_half_read, 1);
}
static void double_buffer(size_t rewrite_off) {
  evrt_stream_t a = stream();
  evrt_event_t e = event(0);
  OK(evrt_memcpy_async(a, out1, buf, 128));
  OK(evrt_event_record(e, a));
  OK(evrt_memcpy_async(a, out2, buf + 128, 128));
  /* the checker does not see this flag: it orders nothing */
  OK(evrt_launch_host_func(a, note_second_half, NULL));
  OK(evrt_event_synchronize(e));
  for (int i = 0; i < 60000 && !atomic_load(&second_half_read); i++)
    sleep_ms_(1);
  EXPECT(atomic_load(&second_half_read));
  OK(evrt_check_access(buf + rewrite_off, 128, EVRT_CHECK_WRITE));
  OK(evrt_stream_synchronize(a));
}
SCENARIO(double_buffer_refills_the_half_still_read,
         "unsynchronized host access") {
  double_buffer(128);
}

/* The host reads what a stream writes, without waiting for it. */
SCENARIO(host_read_unsynchronized, "unsynchronized host access") {
  evrt_stream_t a = stream();
  OK(evrt_memset_async(a, buf, 10, sizeof buf));
  OK(evrt_stream_delay(a, 1000000));
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_READ));
  OK(evrt_stream_synchronize(a));
}

/* The host writes a buffer a queued copy still reads (the host must
 * synchronize before reusing it), however late the write comes. */
SCENARIO(host_write_before_copy_done, "unsynchronized host access") {
  evrt_stream_t a = stream();
  OK(evrt_memcpy_async(a, out1, buf, sizeof buf));
  sleep_ms_(50); /* the copy is done by now: the race is one of order */
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_WRITE));
  OK(evrt_stream_synchronize(a));
}

/* A host function writes (declared), another stream reads without a wait. */
static void hostfn_write(void *p) {
  evrt_check_access(p, 64, EVRT_CHECK_WRITE);
  memset(p, 1, 64);
}
SCENARIO(hostfn_race, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_launch_host_func(a, hostfn_write, buf));
  OK(evrt_memcpy_async(b, out1, buf, 64));
  OK(evrt_device_synchronize(0));
}

/* An event query that said "not ready" orders nothing. */
SCENARIO(query_not_ready, "unsynchronized host access") {
  evrt_stream_t a = stream();
  evrt_event_t e = event(0);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 11, sizeof buf));
  OK(evrt_event_record(e, a));
  EXPECT(evrt_event_query(e) == EVRT_NOT_READY);
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_READ));
  gate_open();
  OK(evrt_event_synchronize(e));
}

/* A block is freed while a queued copy still reads it. */
SCENARIO(free_before_copy, "use after free") {
  evrt_stream_t a = stream();
  char *blk = malloc(128);
  OK(evrt_check_alloc(blk, 128));
  memset(blk, 0, 128);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memcpy_async(a, out1, blk, 128));
  OK(evrt_check_free(blk, 128, free)); /* quarantined: the copy stays safe */
  gate_open();
  OK(evrt_stream_synchronize(a));
}

/* A legacy (wait-for-next-record) event's record is queued behind a wait on
 * the waiter: the two streams wait on each other for ever.  The host's
 * synchronize gets EVRT_ERROR_DEADLOCK instead of hanging. */
SCENARIO(legacy_cycle, "deadlock") {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t l = event(EVRT_EVENT_WAIT_NEXT_RECORD);
  evrt_event_t m = event(0);
  OK(evrt_stream_wait_event(a, l)); /* waits for l's next record */
  OK(evrt_event_record(m, a));      /* ... which is after this */
  OK(evrt_stream_wait_event(b, m)); /* b waits for a */
  OK(evrt_event_record(l, b));      /* l is recorded behind b's wait */
  evrt_status_t st = evrt_stream_synchronize(a);
  EXPECT(st == EVRT_ERROR_DEADLOCK);
  EXPECT(evrt_stream_synchronize(b) == EVRT_ERROR_DEADLOCK);
  fflush(stderr);
  _exit(evrt_check_findings() ? 66 : 4); /* the streams never finish */
}

/* Stream-ordered values: each stream waits for a word whose write is
 * queued behind its own wait on the other (an ACL notify cycle is the
 * same, tests/check/check_acl.c). */
static uint64_t cyc_x, cyc_y, cyc_z;
SCENARIO(value_cycle, "deadlock") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_stream_wait_value64(a, &cyc_x, 1, EVRT_VALUE_WAIT_EQ));
  OK(evrt_stream_write_value64(a, &cyc_y, 1, 0));
  OK(evrt_stream_wait_value64(b, &cyc_y, 1, EVRT_VALUE_WAIT_GEQ));
  OK(evrt_stream_write_value64(b, &cyc_x, 1, 0));
  EXPECT(evrt_stream_synchronize(b) == EVRT_ERROR_DEADLOCK);
  EXPECT(evrt_device_synchronize(0) == EVRT_ERROR_DEADLOCK);
  fflush(stderr);
  _exit(evrt_check_findings() ? 66 : 4);
}

/* One stream waits for a value that only its own later item writes. */
SCENARIO(value_self_cycle, "deadlock") {
  evrt_stream_t a = stream();
  OK(evrt_stream_wait_value64(a, &cyc_z, 1,
                              EVRT_VALUE_WAIT_EQ | EVRT_VALUE_WAIT_EXPLICIT));
  OK(evrt_stream_write_value64(a, &cyc_z, 1, 0));
  EXPECT(evrt_stream_synchronize(a) == EVRT_ERROR_DEADLOCK);
  fflush(stderr);
  _exit(evrt_check_findings() ? 66 : 4);
}

/* A value wait whose write is queued behind an event wait, whose record is
 * behind a wait on the first stream: a mixed cycle. */
SCENARIO(value_event_cycle, "deadlock") {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t m = event(0);
  OK(evrt_stream_wait_value64(a, &cyc_x, 1, EVRT_VALUE_WAIT_EQ));
  OK(evrt_event_record(m, a));
  OK(evrt_stream_wait_event(b, m));
  OK(evrt_stream_write_value64(b, &cyc_x, 1, 0));
  EXPECT(evrt_stream_synchronize(a) == EVRT_ERROR_DEADLOCK);
  fflush(stderr);
  _exit(evrt_check_findings() ? 66 : 4);
}

/* An interprocess event used within its process: the wait binds before the
 * record, so it orders nothing. */
SCENARIO(ipc_wait_before_record, "data race") {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(EVRT_EVENT_INTERPROCESS);
  evrt_ipc_event_handle_t h;
  OK(evrt_event_ipc_handle(e, &h));
  OK(evrt_stream_wait_event(b, e)); /* the exported generation, complete */
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* A value wait whose write is not the one that orders the buffer: the
 * writer stream writes the flag before it fills the buffer. */
static uint64_t flag_word;
/* The report names the value wait that passed as the edge that was meant
 * to order the copy, with the write it passed on. */
REPORT_LINES(value_written_before_the_data,
             "|  *: read by evrt_memcpy_async (source) of *",
             "|    last wait passed before it: value wait on 0x* >= 1, "
             "written by stream 2 at work item #1, enqueued at *")
SCENARIO(value_written_before_the_data, "data race") {
  evrt_stream_t a = stream(), b = stream();
  flag_word = 0;
  OK(evrt_stream_wait_value64(b, &flag_word, 1, EVRT_VALUE_WAIT_GEQ));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_stream_write_value64(a, &flag_word, 1, 0));
  OK(evrt_memset_async(a, buf, 3, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* ---------------------------------------------------------- correct ones */

/* Stream-ordered values order like events: the write after the fill, the
 * reader waits for the value; the host's evrt_value_write64 releases too. */
SCENARIO(value_wait_orders, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  flag_word = 0;
  OK(evrt_stream_wait_value64(b, &flag_word, 1, EVRT_VALUE_WAIT_GEQ));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_memset_async(a, buf, 3, sizeof buf));
  OK(evrt_stream_write_value64(a, &flag_word, 1, 0));
  OK(evrt_stream_synchronize(b));
  EXPECT(out1[0] == 3);
  OK(evrt_stream_wait_value64(a, &flag_word, 2, EVRT_VALUE_WAIT_EQ));
  OK(evrt_memcpy_async(a, out1, out2, sizeof out2));
  /* written after the copy was enqueued: only the value orders them */
  OK(evrt_check_access(out2, sizeof out2, EVRT_CHECK_WRITE));
  OK(evrt_value_write64(&flag_word, 2));
  OK(evrt_device_synchronize(0));
}

/* Value waits that only look like cycles for a while: their writes are
 * queued behind a host function that is running (it may also write the
 * word), or behind a wait for it; and a wait no queued work writes, which
 * another host thread satisfies later.  Each synchronize blocks long
 * enough for the deadlock search to run (gate_fn holds for 300 ms). */
static void *open_gate_later(void *p) {
  (void)p;
  sleep_ms_(300);
  gate_open();
  return NULL;
}
static void *write_value_later(void *p) {
  sleep_ms_(300);
  evrt_value_write64(p, 1);
  return NULL;
}
SCENARIO(value_wait_writer_behind_running_work, CLEAN) {
  evrt_stream_t a = stream(), b = stream(), c = stream();
  evrt_event_t e = event(0);
  static uint64_t x;
  pthread_t t;
  OK(evrt_stream_wait_value64(a, &x, 1, EVRT_VALUE_WAIT_EQ));
  OK(evrt_launch_host_func(c, gate_fn, NULL));
  OK(evrt_event_record(e, c));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_stream_write_value64(b, &x, 1, 0));
  EXPECT(pthread_create(&t, NULL, open_gate_later, NULL) == 0);
  OK(evrt_stream_synchronize(a));
  OK(evrt_device_synchronize(0));
  pthread_join(t, NULL);
  EXPECT(x == 1);
}
SCENARIO(value_wait_host_writes_later, CLEAN) {
  evrt_stream_t a = stream();
  static uint64_t w;
  pthread_t t;
  OK(evrt_stream_wait_value64(a, &w, 1, EVRT_VALUE_WAIT_EQ));
  EXPECT(pthread_create(&t, NULL, write_value_later, &w) == 0);
  OK(evrt_stream_synchronize(a));
  pthread_join(t, NULL);
}

/* An interprocess event used within its process orders like any event:
 * a stream wait, and the host's synchronize. */
SCENARIO(ipc_event_orders_within_process, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(EVRT_EVENT_INTERPROCESS);
  evrt_ipc_event_handle_t h;
  OK(evrt_event_ipc_handle(e, &h));
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  gate_open();
  OK(evrt_stream_synchronize(b));
  OK(evrt_memset_async(a, buf, 2, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_event_synchronize(e));
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_WRITE));
}


SCENARIO(wait_orders, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  gate_open();
  OK(evrt_stream_synchronize(b));
  OK(evrt_check_access(out1, sizeof out1, EVRT_CHECK_READ));
  EXPECT(out1[0] == 1);
}

/* The correct double buffer: the host rewrites the half whose read the
 * event covers, after the stream has read the other half too. */
SCENARIO(double_buffer_refills_the_half_read_first, CLEAN) {
  double_buffer(0);
}

SCENARIO(adjacent_no_overlap, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 7, 16));
  OK(evrt_memset_async(b, buf + 16, 8, 16));
  OK(evrt_device_synchronize(0));
  OK(evrt_check_access(buf, 32, EVRT_CHECK_READ));
}

SCENARIO(read_read, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memcpy_async(a, out1, buf, sizeof buf));
  OK(evrt_memcpy_async(b, out2, buf, sizeof buf));
  OK(evrt_device_synchronize(0));
}

/* a -> b -> c through two events: c is ordered after a. */
SCENARIO(transitive_two_events, CLEAN) {
  evrt_stream_t a = stream(), b = stream(), c = stream();
  evrt_event_t e1 = event(0), e2 = event(EVRT_EVENT_TIMING);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_event_record(e1, a));
  OK(evrt_stream_wait_event(b, e1));
  OK(evrt_stream_delay(b, 100000));
  OK(evrt_event_record(e2, b));
  OK(evrt_stream_wait_event(c, e2));
  OK(evrt_memcpy_async(c, out1, buf, sizeof buf));
  gate_open();
  OK(evrt_stream_synchronize(c));
  EXPECT(out1[5] == 1);
}

SCENARIO(stream_synchronize_orders, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 2, sizeof buf));
  OK(evrt_stream_synchronize(a));
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_READ | EVRT_CHECK_WRITE));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_stream_synchronize(b));
}

SCENARIO(event_synchronize_orders, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(EVRT_EVENT_BLOCKING_SYNC);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 2, sizeof buf));
  OK(evrt_event_record(e, a));
  gate_open();
  OK(evrt_event_synchronize(e));
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_WRITE));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_stream_synchronize(b));
}

SCENARIO(device_synchronize_orders, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 2, 64));
  OK(evrt_memset_async(b, buf + 64, 3, 64));
  OK(evrt_device_synchronize(0));
  OK(evrt_check_access(buf, 128, EVRT_CHECK_WRITE));
}

SCENARIO(query_loop_orders, CLEAN) {
  evrt_stream_t a = stream();
  evrt_event_t e = event(0);
  OK(evrt_memset_async(a, buf, 2, sizeof buf));
  OK(evrt_stream_delay(a, 2000000));
  OK(evrt_event_record(e, a));
  while (evrt_event_query(e) != EVRT_SUCCESS)
    sleep_ms_(1);
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_READ));
  OK(evrt_memset_async(a, buf, 3, sizeof buf));
  while (evrt_stream_query(a) != EVRT_SUCCESS)
    sleep_ms_(1);
  OK(evrt_check_access(buf, sizeof buf, EVRT_CHECK_WRITE));
}

static void hostfn_read(void *p) {
  evrt_check_access(p, 64, EVRT_CHECK_READ);
}
SCENARIO(hostfn_ordered, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  OK(evrt_launch_host_func(a, hostfn_write, buf));
  OK(evrt_event_record(e, a));
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, 64));
  OK(evrt_launch_host_func(b, hostfn_read, buf));
  OK(evrt_device_synchronize(0));
}

/* A host function enqueues the reader itself, after its write: program
 * order inside the host function orders them. */
static evrt_stream_t fwd_target;
static void hostfn_write_then_forward(void *p) {
  hostfn_write(p);
  evrt_memcpy_async(fwd_target, out2, p, 64);
}
SCENARIO(hostfn_enqueue_orders, CLEAN) {
  evrt_stream_t a = stream();
  fwd_target = stream();
  OK(evrt_launch_host_func(a, hostfn_write_then_forward, buf));
  OK(evrt_stream_synchronize(a));
  OK(evrt_stream_synchronize(fwd_target));
  OK(evrt_check_access(out2, 64, EVRT_CHECK_READ));
}

/* A legacy wait enqueued before the record binds to it when it executes. */
SCENARIO(legacy_wait_binds_late, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t l = event(EVRT_EVENT_WAIT_NEXT_RECORD);
  OK(evrt_stream_wait_event(b, l));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, buf, 4, sizeof buf));
  OK(evrt_event_record(l, a));
  gate_open();
  OK(evrt_stream_synchronize(b));
  EXPECT(out1[0] == 4);
}

/* The wait is satisfied when it is made (no work item): the waiting stream
 * is still ordered after the generation.  The host learns of the writer's
 * end through a plain flag the checker does not see. */
static atomic_int flag_;
static void set_flag(void *p) { (void)p; atomic_store(&flag_, 1); }
SCENARIO(skipped_wait_orders, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  OK(evrt_memset_async(a, buf, 5, sizeof buf));
  OK(evrt_event_record(e, a));
  OK(evrt_launch_host_func(a, set_flag, NULL));
  while (!atomic_load(&flag_))
    sleep_ms_(1);
  sleep_ms_(5); /* let a go idle */
  OK(evrt_stream_wait_event(b, e));
  OK(evrt_memcpy_async(b, out1, buf, sizeof buf));
  OK(evrt_stream_synchronize(b));
  OK(evrt_stream_synchronize(a));
}

SCENARIO(alloc_free_ordered, CLEAN) {
  evrt_stream_t a = stream();
  char *blk = malloc(128);
  OK(evrt_check_alloc(blk, 128));
  OK(evrt_memset_async(a, blk, 1, 128));
  OK(evrt_memcpy_async(a, out1, blk, 128));
  OK(evrt_stream_synchronize(a));
  OK(evrt_check_free(blk, 128, free));
  char *again = malloc(128);
  OK(evrt_check_alloc(again, 128));
  OK(evrt_memset_async(a, again, 2, 128));
  OK(evrt_stream_synchronize(a));
  OK(evrt_check_free(again, 128, free));
}

/* Stream order alone: the same stream writes and reads. */
SCENARIO(same_stream_in_order, CLEAN) {
  evrt_stream_t a = stream();
  OK(evrt_memset_async(a, buf, 1, sizeof buf));
  OK(evrt_memcpy_async(a, out1, buf, sizeof buf));
  OK(evrt_memset_async(a, buf, 2, sizeof buf));
  OK(evrt_stream_synchronize(a));
}

/* ------------------------------------------- host-level synchronization */

/* The main thread writes buf and releases `key`; another thread (which the
 * checker sees created by nothing) acquires it and writes buf too.  With
 * forget, the key was dropped between the two (its object's memory was
 * reused): the acquire learns nothing and the writes race. */
static int key_;
static void *acquire_and_write(void *p) {
  (void)p;
  OK(evrt_check_acquire(&key_));
  OK(evrt_check_access(buf, 64, EVRT_CHECK_WRITE));
  return NULL;
}
static void release_then_other_thread(bool forget) {
  OK(evrt_check_access(buf, 64, EVRT_CHECK_WRITE));
  OK(evrt_check_release(&key_));
  if (forget)
    OK(evrt_check_forget(&key_));
  EXPECT(evrt_check_forget(NULL) == EVRT_ERROR_INVALID_VALUE);
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, acquire_and_write, NULL) == 0);
  pthread_join(t, NULL);
}
SCENARIO(sync_release_acquire_orders, CLEAN) { release_then_other_thread(false); }
SCENARIO(sync_forgotten_orders_nothing, "data race") {
  release_then_other_thread(true);
}

/* ------------------------------------ every way of observing completion */

/* Work on stream a writes a tracked block, held by a gate; the host polls
 * one of the ways of learning it is complete, then frees the block.  Each
 * "complete" answer orders the host after the work (clean); a free after a
 * "not ready" answer is a use after free.  (info, wait status: were
 * reported as use after free, issue 24.) */
enum {
  OBS_EVENT_QUERY,
  OBS_EVENT_INFO,
  OBS_EVENT_SYNC,
  OBS_EVENT_SYNC_TIMEOUT,
  OBS_WAIT_STATUS,
  OBS_STREAM_QUERY,
  OBS_STREAM_SYNC,
  OBS_STREAM_SYNC_TIMEOUT,
};
/* 1: complete, 0: not yet. */
static int observe(int how, evrt_stream_t a, evrt_event_t e) {
  evrt_event_info_t i = {.struct_size = sizeof i};
  evrt_status_t st;
  switch (how) {
  case OBS_EVENT_QUERY:
    st = evrt_event_query(e);
    break;
  case OBS_EVENT_INFO:
    OK(evrt_event_get_info(e, &i));
    return i.state == EVRT_EVENT_STATE_COMPLETE;
  case OBS_EVENT_SYNC:
    st = evrt_event_synchronize(e);
    break;
  case OBS_EVENT_SYNC_TIMEOUT:
    st = evrt_event_synchronize_timeout(e, 1000000);
    break;
  case OBS_WAIT_STATUS:
    st = evrt_event_wait_status(e);
    break;
  case OBS_STREAM_QUERY:
    st = evrt_stream_query(a);
    break;
  case OBS_STREAM_SYNC:
    st = evrt_stream_synchronize(a);
    break;
  default:
    st = evrt_stream_synchronize_timeout(a, 1000000);
    break;
  }
  EXPECT(st == EVRT_SUCCESS || st == EVRT_NOT_READY ||
         st == EVRT_ERROR_TIMEOUT);
  return st == EVRT_SUCCESS;
}
static void free_after(int how, bool until_complete) {
  enum { BLK = 4096 };
  evrt_stream_t a = stream(), b = stream();
  evrt_event_t e = event(0);
  char *blk = malloc(BLK);
  EXPECT(blk != NULL);
  OK(evrt_check_alloc(blk, BLK));
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, blk, 4, BLK));
  OK(evrt_event_record(e, a));
  OK(evrt_stream_wait_event(b, e)); /* (what the wait status reports) */
  if (until_complete) {
    gate_open();
    for (int n = 0; !observe(how, a, e); n++) {
      EXPECT(n < 20000);
      sleep_ms_(1);
    }
  } else {
    EXPECT(!observe(how, a, e)); /* the gate holds the work */
  }
  OK(evrt_check_free(blk, BLK, free));
  gate_open();
  OK(evrt_device_synchronize(0));
}
SCENARIO(free_after_event_query, CLEAN) { free_after(OBS_EVENT_QUERY, true); }
SCENARIO(free_after_event_info, CLEAN) { free_after(OBS_EVENT_INFO, true); }
SCENARIO(free_after_event_sync, CLEAN) { free_after(OBS_EVENT_SYNC, true); }
SCENARIO(free_after_event_sync_timeout, CLEAN) {
  free_after(OBS_EVENT_SYNC_TIMEOUT, true);
}
SCENARIO(free_after_wait_status, CLEAN) { free_after(OBS_WAIT_STATUS, true); }
SCENARIO(free_after_stream_query, CLEAN) { free_after(OBS_STREAM_QUERY, true); }
SCENARIO(free_after_stream_sync, CLEAN) { free_after(OBS_STREAM_SYNC, true); }
SCENARIO(free_after_stream_sync_timeout, CLEAN) {
  free_after(OBS_STREAM_SYNC_TIMEOUT, true);
}
/* A "not ready" answer orders nothing. */
SCENARIO(free_after_event_info_pending, "use after free") {
  free_after(OBS_EVENT_INFO, false);
}
SCENARIO(free_after_wait_status_not_ready, "use after free") {
  free_after(OBS_WAIT_STATUS, false);
}
SCENARIO(free_after_stream_query_not_ready, "use after free") {
  free_after(OBS_STREAM_QUERY, false);
}

/* A layer's own waits (evrt_check_unobserved_begin/end) order nothing:
 * the host writes what stream a wrote, after a synchronize the program did
 * not make itself.  Outside the pair the same synchronize orders it. */
static void host_write_after_sync(bool unobserved) {
  evrt_stream_t a = stream();
  OK(evrt_memset_async(a, buf, 1, 64));
  if (unobserved)
    OK(evrt_check_unobserved_begin());
  OK(evrt_stream_synchronize(a));
  EXPECT(evrt_stream_query(a) == EVRT_SUCCESS);
  OK(evrt_device_synchronize(0));
  if (unobserved)
    OK(evrt_check_unobserved_end());
  OK(evrt_check_access(buf, 64, EVRT_CHECK_WRITE));
}
SCENARIO(unobserved_sync_orders_nothing, "unsynchronized host access") {
  host_write_after_sync(true);
}
SCENARIO(sync_after_unobserved_end_orders, CLEAN) {
  host_write_after_sync(false);
}
/* Nested pairs; an end without a begin is refused and changes nothing
 * (the synchronize after it still orders the host). */
SCENARIO(unobserved_nests_and_unbalanced_end_refused, CLEAN) {
  evrt_stream_t a = stream();
  OK(evrt_check_unobserved_begin());
  OK(evrt_check_unobserved_begin());
  OK(evrt_check_unobserved_end());
  OK(evrt_memset_async(a, buf, 1, 64));
  OK(evrt_stream_synchronize(a)); /* still inside one pair: orders nothing */
  OK(evrt_check_unobserved_end());
  EXPECT(evrt_check_unobserved_end() == EVRT_ERROR_INVALID_VALUE);
  OK(evrt_stream_synchronize(a));
  OK(evrt_check_access(buf, 64, EVRT_CHECK_WRITE));
}

/* One annotation that reads and writes a range is one access: racing a
 * fill on another stream, it gives one finding, not one for its read and
 * one for its write (the fill is made to reach the checker first, the
 * order that gave two). */
static atomic_int fill_done_;
static void set_fill_done(void *p) {
  (void)p;
  atomic_store(&fill_done_, 1);
}
static void rw_after_fill(void *p) {
  for (int i = 0; i < 20000 && !atomic_load(&fill_done_); i++)
    sleep_ms_(1);
  evrt_check_access(p, 64, EVRT_CHECK_READ | EVRT_CHECK_WRITE);
}
SCENARIO(read_write_annotation_is_one_finding, "data race") {
  evrt_stream_t a = stream(), b = stream();
  OK(evrt_memset_async(a, buf, 1, 64));
  OK(evrt_launch_host_func(a, set_fill_done, NULL));
  OK(evrt_launch_host_func(b, rw_after_fill, buf));
  OK(evrt_device_synchronize(0));
  if (evrt_check_findings() != 1) { /* (_exit: the checker's exit status
                                     * handler would turn exit(3) into 66) */
    fprintf(stderr, "scenario: %llu findings, not 1\n",
            (unsigned long long)evrt_check_findings());
    fflush(stderr);
    _exit(3);
  }
}

/* ------------------------------------------- interprocess memory */

enum { IPC_N = 8192 };
static char ipc_out[IPC_N];

/* An exporter in another process (forked before this one starts evrt): it
 * allocates and exports IPC_N bytes without the pid check, writes the key
 * to kfd, then waits for a byte (an import in the exporting process is
 * refused: EVRT_ERROR_IPC_SAME_PROCESS). */
static pid_t nexp;
static int nexp_wake;
static char nkey[EVRT_IPC_MEM_KEY_SIZE];

static void native_exporter(void) {
  int kp[2], wp[2];
  EXPECT(pipe(kp) == 0 && pipe(wp) == 0);
  fflush(NULL);
  nexp = fork();
  EXPECT(nexp >= 0);
  if (nexp == 0) {
    close(kp[0]);
    close(wp[1]);
    void *m = NULL;
    char k[EVRT_IPC_MEM_KEY_SIZE] = {0};
    if (evrt_ipc_mem_alloc(IPC_N, &m))
      _exit(9);
    memset(m, 3, IPC_N);
    if (evrt_ipc_mem_export(m, IPC_N, EVRT_IPC_MEM_NO_PID_CHECK, k) ||
        write(kp[1], k, sizeof k) != (ssize_t)sizeof k)
      _exit(9);
    char c;
    (void)read(wp[0], &c, 1);
    _exit(0); /* (no exit report: its checker saw nothing of ours) */
  }
  close(kp[1]);
  close(wp[0]);
  nexp_wake = wp[1];
  size_t got = 0;
  while (got < sizeof nkey) {
    ssize_t r = read(kp[0], nkey + got, sizeof nkey - got);
    EXPECT(r > 0);
    got += (size_t)r;
  }
  close(kp[0]);
}

static void native_exporter_stop(void) {
  EXPECT(write(nexp_wake, "x", 1) == 1);
  int st = 0;
  EXPECT(waitpid(nexp, &st, 0) == nexp);
  EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The import is closed while a copy queued on it still reads it: a use
 * after free of the import.  Was clean (the import was no block), and the
 * copy read unmapped pages when it ran after the close. */
SCENARIO(ipc_close_while_copy_reads, "use after free") {
  native_exporter();
  evrt_stream_t a = stream();
  void *imp = NULL;
  size_t n = 0;
  OK(evrt_ipc_mem_import(nkey, 0, &imp, &n));
  EXPECT(n == IPC_N);
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memcpy_async(a, ipc_out, imp, IPC_N));
  OK(evrt_ipc_mem_close(nkey));
  gate_open();
  OK(evrt_stream_synchronize(a));
  native_exporter_stop();
}

/* The copy is done before the close: clean. */
SCENARIO(ipc_close_after_synchronize, CLEAN) {
  native_exporter();
  evrt_stream_t a = stream();
  void *imp = NULL;
  size_t n = 0;
  OK(evrt_ipc_mem_import(nkey, 0, &imp, &n));
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memcpy_async(a, ipc_out, imp, IPC_N));
  gate_open();
  OK(evrt_stream_synchronize(a));
  EXPECT(ipc_out[7] == 3);
  OK(evrt_ipc_mem_close(nkey));
  native_exporter_stop();
}

/* The exporter's own block freed while a fill queued on it still writes:
 * a use after free (the fill ran on unmapped pages before). */
SCENARIO(ipc_free_while_fill_writes, "use after free") {
  evrt_stream_t a = stream();
  void *m = NULL;
  OK(evrt_ipc_mem_alloc(IPC_N, &m));
  OK(evrt_launch_host_func(a, gate_fn, NULL));
  OK(evrt_memset_async(a, m, 1, IPC_N));
  OK(evrt_ipc_mem_free(m));
  gate_open();
  OK(evrt_stream_synchronize(a));
}

/* Freed after the fill is done, then a new block filled on another
 * stream: clean. */
SCENARIO(ipc_free_after_synchronize, CLEAN) {
  evrt_stream_t a = stream(), b = stream();
  void *m = NULL;
  OK(evrt_ipc_mem_alloc(IPC_N, &m));
  OK(evrt_memset_async(a, m, 1, IPC_N));
  OK(evrt_stream_synchronize(a));
  OK(evrt_ipc_mem_free(m));
  OK(evrt_ipc_mem_alloc(IPC_N, &m));
  OK(evrt_memset_async(b, m, 2, IPC_N));
  OK(evrt_stream_synchronize(b));
  OK(evrt_ipc_mem_free(m));
}
