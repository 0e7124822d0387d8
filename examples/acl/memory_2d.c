/* 2-D copies, 32-bit fills and pointer attributes (the memory calls of the
 * CANN runtime's memory samples beyond aclrtMemcpy): a 3 x 4 matrix goes to
 * the device with a wider pitch and comes back packed, then a fill and the
 * attributes of device, host and unknown memory. */
#include "sample_common.h"

#include <string.h>

static void print_matrix(const char *title, const int32_t *m, int rows,
                         int cols, size_t pitch) {
  INFO_LOG("%s", title);
  for (int r = 0; r < rows; r++) {
    const int32_t *row = (const int32_t *)((const char *)m + r * pitch);
    printf("   ");
    for (int c = 0; c < cols; c++)
      printf(" %3d", row[c]);
    printf("\n");
  }
}

int main(void) {
  enum { ROWS = 3, COLS = 4 };
  const size_t hostPitch = COLS * sizeof(int32_t);
  const size_t devPitch = 8 * sizeof(int32_t); /* padded rows on the device */
  int32_t host[ROWS * COLS], back[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++)
    host[i] = i + 1;
  aclrtStream stream = NULL;
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  CHECK_ERROR(aclrtCreateStream(&stream));

  void *dev = NULL;
  CHECK_ERROR(aclrtMalloc(&dev, ROWS * devPitch, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ERROR(aclrtMemsetD32(dev, ROWS * devPitch, 0xFFFFFFFFu,
                             ROWS * devPitch / 4)); /* padding reads -1 */
  print_matrix("Host matrix:", host, ROWS, COLS, hostPitch);
  CHECK_ERROR(aclrtMemcpy2d(dev, devPitch, host, hostPitch, hostPitch, ROWS,
                            ACL_MEMCPY_HOST_TO_DEVICE));
  int32_t padded[ROWS * 8];
  CHECK_ERROR(aclrtMemcpy(padded, sizeof padded, dev, sizeof padded,
                          ACL_MEMCPY_DEVICE_TO_HOST));
  print_matrix("Device rows with their padding:", padded, ROWS, 8,
               8 * sizeof(int32_t));

  /* back with the async form into pinned host memory, then packed */
  int32_t *pinned = NULL;
  CHECK_ERROR(aclrtMallocHost((void **)&pinned, sizeof back));
  CHECK_ERROR(aclrtMemcpy2dAsync(pinned, hostPitch, dev, devPitch, hostPitch,
                                 ROWS, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  CHECK_ERROR(aclrtSynchronizeStream(stream));
  memcpy(back, pinned, sizeof back);
  print_matrix("Copied back:", back, ROWS, COLS, hostPitch);
  INFO_LOG("Round trip %s", memcmp(host, back, sizeof host) ? "differs" : "matches");

  /* a 32-bit fill as a stream task */
  CHECK_ERROR(aclrtMemsetD32Async(dev, ROWS * devPitch, 0x12345678u, 4, stream));
  CHECK_ERROR(aclrtSynchronizeStream(stream));
  uint32_t words[5];
  CHECK_ERROR(aclrtMemcpy(words, sizeof words, dev, sizeof words,
                          ACL_MEMCPY_DEVICE_TO_HOST));
  INFO_LOG("After MemsetD32Async of 4 words: %08x %08x %08x %08x %08x",
           words[0], words[1], words[2], words[3], words[4]);

  /* bad input: the width exceeds the destination pitch */
  aclError ret = aclrtMemcpy2d(dev, 8, host, hostPitch, hostPitch, ROWS,
                               ACL_MEMCPY_HOST_TO_DEVICE);
  INFO_LOG("aclrtMemcpy2d with width > dpitch returns %d", ret);
  ret = aclrtMemsetD32((char *)dev + 2, 64, 0, 4);
  INFO_LOG("aclrtMemsetD32 on an unaligned address returns %d", ret);
  (void)aclGetRecentErrMsg();

  aclrtPtrAttributes attr;
  static const char *types[] = {"host", "device", "unregistered", "managed"};
  void *ptrs[3] = {dev, pinned, host};
  static const char *names[3] = {"aclrtMalloc", "aclrtMallocHost", "a stack array"};
  for (int i = 0; i < 3; i++) {
    CHECK_ERROR(aclrtPointerGetAttributes(ptrs[i], &attr));
    INFO_LOG("Memory of %s: location %s", names[i],
             (unsigned)attr.location.type < 4 ? types[attr.location.type] : "?");
  }

  CHECK_ERROR(aclrtFreeHost(pinned));
  CHECK_ERROR(aclrtFree(dev));
  CHECK_ERROR(aclrtDestroyStream(stream));
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Done.");
  return 0;
}
