/*
 * demo.c - three streams in a producer/consumer pipeline, synchronized by
 * events only (no host locks):
 *
 *   produce  : fill buffer slot k with batch i            -> record filled[k]
 *   transform: wait filled[k], square every value, copy   -> record ready[k]
 *   consume  : wait ready[k], check and sum the batch      -> record free[k]
 *
 * and the producer waits free[k] before it reuses slot k (double buffering).
 * Each stage also sleeps a little (evrt_stream_delay) so the overlap of the
 * stages shows in the elapsed times and in a trace (EVRT_TRACE=demo.json).
 *
 * The host functions declare what they read and write (evrt_check_access),
 * so that EVRT_CHECK=1 checks their order too (docs/check.md).  With
 * --forget-wait the consumer does not wait for the transform: a data race
 * that usually computes the right sum, and that EVRT_CHECK=1 reports.
 * --no-delay leaves the delays out (bench/check_on.c times it).
 */
#include <evrt.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 2
#define BATCHES 8
#define N 4096

#define CHECK(call)                                                            \
  do {                                                                         \
    evrt_status_t st_ = (call);                                                \
    if (st_ != EVRT_SUCCESS) {                                                 \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, evrt_err_name(st_),       \
              evrt_last_error_message());                                      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

struct slot {
  int batch;
  long raw[N];
  long squared[N];
  long scratch[N];
};

struct job {
  struct slot *slot;
  int batch;
  long *total;
  int *errors;
};

static struct slot slots[SLOTS];
static struct job jobs[BATCHES];

static void produce(void *p) {
  struct job *j = p;
  evrt_check_access(&j->slot->batch, sizeof j->slot->batch, EVRT_CHECK_WRITE);
  evrt_check_access(j->slot->raw, sizeof j->slot->raw, EVRT_CHECK_WRITE);
  j->slot->batch = j->batch;
  for (int i = 0; i < N; i++)
    j->slot->raw[i] = (long)j->batch * N + i;
}

static void transform(void *p) {
  struct job *j = p;
  evrt_check_access(j->slot->raw, sizeof j->slot->raw, EVRT_CHECK_READ);
  evrt_check_access(j->slot->scratch, sizeof j->slot->scratch,
                    EVRT_CHECK_WRITE);
  for (int i = 0; i < N; i++)
    j->slot->scratch[i] = j->slot->raw[i] * j->slot->raw[i];
}

static void consume(void *p) {
  struct job *j = p;
  long sum = 0;
  evrt_check_access(&j->slot->batch, sizeof j->slot->batch, EVRT_CHECK_READ);
  evrt_check_access(j->slot->squared, sizeof j->slot->squared,
                    EVRT_CHECK_READ);
  if (j->slot->batch != j->batch)
    (*j->errors)++;
  for (int i = 0; i < N; i++) {
    long v = (long)j->batch * N + i;
    if (j->slot->squared[i] != v * v)
      (*j->errors)++;
    sum += j->slot->squared[i];
  }
  *j->total += sum;
}

int main(int argc, char **argv) {
  bool forget_wait = false, no_delay = false;
  for (int a = 1; a < argc; a++) {
    forget_wait |= strcmp(argv[a], "--forget-wait") == 0;
    no_delay |= strcmp(argv[a], "--no-delay") == 0;
  }
  evrt_stream_t prod, xform, cons;
  CHECK(evrt_stream_create(&prod, 0, 0, 0));
  CHECK(evrt_stream_create(&xform, 0, 0, 0));
  CHECK(evrt_stream_create(&cons, 0, 0, 0));
  CHECK(evrt_stream_set_name(prod, "produce"));
  CHECK(evrt_stream_set_name(xform, "transform"));
  CHECK(evrt_stream_set_name(cons, "consume"));

  evrt_event_t filled[SLOTS], ready[SLOTS], freed[SLOTS];
  for (int k = 0; k < SLOTS; k++) {
    CHECK(evrt_event_create(&filled[k], EVRT_EVENT_DEFAULT));
    CHECK(evrt_event_create(&ready[k], EVRT_EVENT_DEFAULT));
    CHECK(evrt_event_create(&freed[k], EVRT_EVENT_DEFAULT));
  }
  evrt_event_t start, produced, end;
  CHECK(evrt_event_create(&start, EVRT_EVENT_TIMING));
  CHECK(evrt_event_create(&produced, EVRT_EVENT_TIMING));
  CHECK(evrt_event_create(&end, EVRT_EVENT_TIMING | EVRT_EVENT_BLOCKING_SYNC));

  long total = 0;
  int errors = 0;
  CHECK(evrt_event_record(start, prod));
  for (int i = 0; i < BATCHES; i++) {
    int k = i % SLOTS;
    struct job *j = &jobs[i];
    j->slot = &slots[k];
    j->batch = i;
    j->total = &total;
    j->errors = &errors;
    /* Slot k is free once the consumer is done with batch i - SLOTS; before
     * the first use, freed[k] was never recorded: an empty dependency. */
    CHECK(evrt_stream_wait_event(prod, freed[k]));
    CHECK(evrt_launch_host_func_labeled(prod, produce, j, "produce"));
    if (!no_delay)
      CHECK(evrt_stream_delay(prod, 2000000));
    CHECK(evrt_event_record(filled[k], prod));

    CHECK(evrt_stream_wait_event(xform, filled[k]));
    CHECK(evrt_launch_host_func_labeled(xform, transform, j, "square"));
    if (!no_delay)
      CHECK(evrt_stream_delay(xform, 3000000));
    CHECK(evrt_memcpy_async(xform, j->slot->squared, j->slot->scratch,
                            sizeof j->slot->squared));
    CHECK(evrt_event_record(ready[k], xform));

    if (!forget_wait)
      CHECK(evrt_stream_wait_event(cons, ready[k]));
    CHECK(evrt_launch_host_func_labeled(cons, consume, j, "check+sum"));
    if (!no_delay)
      CHECK(evrt_stream_delay(cons, 1000000));
    CHECK(evrt_event_record(freed[k], cons));
  }
  CHECK(evrt_event_record(produced, prod));
  CHECK(evrt_event_record(end, cons));
  printf("evrt %s demo: %d batches of %d values through 3 streams "
         "(produce -> transform -> consume), %d slots\n",
         evrt_version_string(), BATCHES, N, SLOTS);
  printf("enqueued everything; host now waits on the final event "
         "(blocking sync)\n");
  CHECK(evrt_event_synchronize(end));
  /* `end` does not cover `produced`: the producer's last record follows
   * the fill the consumer waited for (and with --forget-wait the consumer
   * waits for nothing), so elapsed time needs its own synchronize. */
  CHECK(evrt_event_synchronize(produced));

  float ms_prod = 0, ms_all = 0;
  CHECK(evrt_event_elapsed_time(&ms_prod, start, produced));
  CHECK(evrt_event_elapsed_time(&ms_all, start, end));
  long want = 0;
  for (long v = 0; v < (long)BATCHES * N; v++)
    want += v * v;
  printf("producer finished after %.2f ms, pipeline after %.2f ms\n", ms_prod,
         ms_all);
  printf("serial stage time would be %.2f ms of delays; overlap saved %.2f "
         "ms\n",
         BATCHES * 6.0, BATCHES * 6.0 - ms_all);
  printf("checksum %ld (expected %ld), %d errors\n", total, want, errors);

  for (int k = 0; k < SLOTS; k++) {
    CHECK(evrt_event_destroy(filled[k]));
    CHECK(evrt_event_destroy(ready[k]));
    CHECK(evrt_event_destroy(freed[k]));
  }
  CHECK(evrt_event_destroy(start));
  CHECK(evrt_event_destroy(produced));
  CHECK(evrt_event_destroy(end));
  CHECK(evrt_stream_destroy(prod));
  CHECK(evrt_stream_destroy(xform));
  CHECK(evrt_stream_destroy(cons));
  CHECK(evrt_shutdown());
  if (total != want || errors) {
    printf("FAILED\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
