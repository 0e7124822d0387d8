/* evrt_stream_create's device (issue 23, item 9): -1 is the calling
 * thread's current device, as evrt.h says; other negative or too large
 * values are EVRT_ERROR_INVALID_DEVICE and create nothing.  Two virtual
 * devices, so that "current" and "device 0" differ. */
#include "test.h"

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1); /* read at initialization */
}

static void *other_thread(void *out) {
  /* a new thread's current device is 0, whatever the creator's */
  evrt_stream_t s;
  int *dev = out;
  if (evrt_stream_create(&s, -1, 0, 0) != EVRT_SUCCESS ||
      evrt_stream_get_device(s, dev) != EVRT_SUCCESS ||
      evrt_stream_destroy(s) != EVRT_SUCCESS)
    *dev = -100;
  return NULL;
}

TEST(device_minus_one_is_the_current_device) {
  int n = 0;
  ASSERT_OK(evrt_device_count(&n));
  ASSERT_EQ(n, 2);
  evrt_stream_t s;
  int dev = -7;
  ASSERT_OK(evrt_stream_create(&s, -1, 0, 0));
  ASSERT_OK(evrt_stream_get_device(s, &dev));
  ASSERT_EQ(dev, 0);
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_set_device(1));
  ASSERT_OK(evrt_stream_create(&s, -1, 0, 0));
  ASSERT_OK(evrt_stream_get_device(s, &dev));
  ASSERT_EQ(dev, 1);
  /* it runs work like any stream of that device */
  static char src[16] = "device one", dst[16];
  ASSERT_OK(evrt_memcpy_async(s, dst, src, sizeof src));
  ASSERT_OK(evrt_device_synchronize(1));
  ASSERT(strcmp(dst, src) == 0);
  ASSERT_OK(evrt_stream_destroy(s));
  pthread_t t;
  int tdev = -7;
  ASSERT(pthread_create(&t, NULL, other_thread, &tdev) == 0);
  pthread_join(t, NULL);
  ASSERT_EQ(tdev, 0);
  ASSERT_OK(evrt_set_device(0));
}

TEST(other_bad_devices_are_invalid_device_and_create_nothing) {
  static const int bad[] = {-2, -100, 2, 1 << 30, (int)0x80000000u};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    evrt_stream_t s = (evrt_stream_t)(uintptr_t)0x1234;
    ASSERT_ST(evrt_stream_create(&s, bad[i], 0, 0), EVRT_ERROR_INVALID_DEVICE);
    ASSERT(s == (evrt_stream_t)(uintptr_t)0x1234); /* left as it was */
  }
}
