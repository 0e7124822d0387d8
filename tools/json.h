/*
 * json.h - the minimal JSON reader of evrt-trace (tools/json.c): a whole
 * document parsed into a tree of values, strings decoded to UTF-8.
 */
#ifndef EVRT_TOOLS_JSON_H
#define EVRT_TOOLS_JSON_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
  enum json_type type;
  double num;        /* JSON_NUM; JSON_BOOL: 0 or 1 */
  char *str;         /* JSON_STR (NUL-terminated, may hold "\u0000" as 0) */
  size_t n;          /* JSON_ARR / JSON_OBJ: number of members */
  struct json *v;    /* members */
  char **keys;       /* JSON_OBJ: member names */
};

/* Parse text[0..len).  Returns NULL on error with a message in err
 * ("line L column C: what"). */
struct json *json_parse(const char *text, size_t len, char *err,
                        size_t errlen);
void json_free(struct json *j);

/* Member of an object by name, or NULL (also when j is not an object). */
const struct json *json_get(const struct json *j, const char *key);
/* Helpers that tolerate a missing or mistyped member. */
double json_num(const struct json *j, const char *key, double dflt);
const char *json_str(const struct json *j, const char *key, const char *dflt);

#endif
