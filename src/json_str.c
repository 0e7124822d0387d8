/*
 * json_str.c - the JSON string writer (json_str.h).  Any thread; no lock
 * (the caller's sink is its own).
 */
#include "json_str.h"

#include <stdbool.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p) {
  unsigned c = p[0];
  int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3
          : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  for (int i = 1; i < len; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0; /* also stops at the terminating NUL */
  if (len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
    return 0;
  if (len == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
    return 0;
  return len;
}

void evrt__json_str(const char *s, void (*put)(const char *p, size_t n,
                                               void *ctx),
                    void *ctx) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  put("\"", 1, ctx);
  while (*p) {
    /* the run of bytes that need nothing goes out in one call */
    const unsigned char *q = p;
    while (*q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
      q++;
    if (q > p) {
      put((const char *)p, (size_t)(q - p), ctx);
      p = q;
      continue;
    }
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(e, 2, ctx);
      p++;
    } else if (c < 0x20) {
      char e[8];
      snprintf(e, sizeof e, "\\u%04x", c);
      put(e, 6, ctx);
      p++;
    } else {
      int len = utf8_len(p);
      if (len) {
        put((const char *)p, (size_t)len, ctx);
        p += len;
      } else {
        put("?", 1, ctx);
        p++;
      }
    }
  }
  put("\"", 1, ctx);
}
