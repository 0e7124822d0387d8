/*
 * json_str.h - one JSON string writer for the files evrt writes (the trace,
 * src/trace_json.c; the checker's report, src/check/report.c).
 */
#ifndef EVRT_JSON_STR_H
#define EVRT_JSON_STR_H

#include <stddef.h>

/* Write s as a JSON string, quotes included, through put(p, n, ctx):
 * quotes, backslashes and control bytes escaped, bytes that are not valid
 * UTF-8 (a name cut in the middle of a character, a Latin-1 label) written
 * as '?', so the file stays valid JSON whatever the user's names hold.
 * NULL is written as "". */
void evrt__json_str(const char *s, void (*put)(const char *p, size_t n,
                                               void *ctx),
                    void *ctx);

#endif
