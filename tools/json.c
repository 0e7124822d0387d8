/*
 * json.c - a small recursive-descent JSON reader (RFC 8259) for evrt-trace.
 *
 * It must never crash on a malformed or hostile file: nesting is bounded,
 * every read checks the end of the input, and all sizes are checked before
 * they grow.
 */
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct parser {
  const char *s, *end, *p;
  char *err;
  size_t errlen;
  int failed;
};

static void fail(struct parser *ps, const char *what) {
  if (ps->failed)
    return;
  ps->failed = 1;
  int line = 1, col = 1;
  for (const char *q = ps->s; q < ps->p && q < ps->end; q++) {
    if (*q == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  snprintf(ps->err, ps->errlen, "line %d column %d: %s", line, col, what);
}

static void skip_ws(struct parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                             *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static int lit(struct parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
    return 0;
  ps->p += n;
  return 1;
}

static int hex4(struct parser *ps, unsigned *out) {
  if (ps->end - ps->p < 4)
    return 0;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = ps->p[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return 0;
  }
  ps->p += 4;
  *out = v;
  return 1;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* At the opening quote.  The decoded string is never longer than its
 * source, so one allocation of the source length is enough. */
static char *parse_string(struct parser *ps) {
  ps->p++;
  const char *q = ps->p;
  while (q < ps->end && *q != '"')
    q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
  if (q >= ps->end) {
    fail(ps, "unterminated string");
    return NULL;
  }
  char *o = malloc((size_t)(q - ps->p) + 1), *w = o;
  if (!o) {
    fail(ps, "out of memory");
    return NULL;
  }
  while (*ps->p != '"') {
    unsigned char c = (unsigned char)*ps->p++;
    if (c < 0x20) {
      ps->p--;
      fail(ps, "control character in string");
      free(o);
      return NULL;
    }
    if (c != '\\') {
      *w++ = (char)c;
      continue;
    }
    char e = *ps->p++;
    switch (e) {
    case '"': *w++ = '"'; break;
    case '\\': *w++ = '\\'; break;
    case '/': *w++ = '/'; break;
    case 'b': *w++ = '\b'; break;
    case 'f': *w++ = '\f'; break;
    case 'n': *w++ = '\n'; break;
    case 'r': *w++ = '\r'; break;
    case 't': *w++ = '\t'; break;
    case 'u': {
      unsigned cp, lo;
      if (!hex4(ps, &cp)) {
        fail(ps, "bad \\u escape");
        free(o);
        return NULL;
      }
      /* A high surrogate followed by a low one is one code point; a lone
       * surrogate becomes U+FFFD. (6 source bytes always hold the output.) */
      if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 &&
          ps->p[0] == '\\' && ps->p[1] == 'u') {
        const char *save = ps->p;
        ps->p += 2;
        if (hex4(ps, &lo) && lo >= 0xdc00 && lo < 0xe000)
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        else
          ps->p = save;
      }
      if (cp >= 0xd800 && cp < 0xe000)
        cp = 0xfffd;
      w += put_utf8(w, cp);
      break;
    }
    default:
      ps->p--;
      fail(ps, "bad escape in string");
      free(o);
      return NULL;
    }
  }
  ps->p++;
  *w = 0;
  return o;
}

static int parse_value(struct parser *ps, struct json *out, int depth);

static int grow(struct parser *ps, struct json **v, char ***keys, size_t n,
                size_t *cap) {
  if (n < *cap)
    return 1;
  size_t nc = *cap ? *cap * 2 : 8;
  if (nc > SIZE_MAX / sizeof(struct json)) {
    fail(ps, "too many members");
    return 0;
  }
  struct json *nv = realloc(*v, nc * sizeof **v);
  if (!nv) {
    fail(ps, "out of memory");
    return 0;
  }
  *v = nv;
  if (keys) {
    char **nk = realloc(*keys, nc * sizeof **keys);
    if (!nk) {
      fail(ps, "out of memory");
      return 0;
    }
    *keys = nk;
  }
  *cap = nc;
  return 1;
}

static int parse_container(struct parser *ps, struct json *out, int depth,
                           int obj) {
  char close = obj ? '}' : ']';
  size_t cap = 0;
  ps->p++;
  out->type = obj ? JSON_OBJ : JSON_ARR;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    return 1;
  }
  for (;;) {
    skip_ws(ps);
    if (!grow(ps, &out->v, obj ? &out->keys : NULL, out->n, &cap))
      return 0;
    if (obj) {
      if (ps->p >= ps->end || *ps->p != '"') {
        fail(ps, "expected a member name");
        return 0;
      }
      char *k = parse_string(ps);
      if (!k)
        return 0;
      out->keys[out->n] = k;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        free(k);
        fail(ps, "expected ':'");
        return 0;
      }
      ps->p++;
    }
    memset(&out->v[out->n], 0, sizeof out->v[out->n]);
    /* count the member before parsing it so json_free sees it on error */
    out->n++;
    if (!parse_value(ps, &out->v[out->n - 1], depth + 1))
      return 0;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
      return 1;
    }
    fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    return 0;
  }
}

static int parse_number(struct parser *ps, struct json *out) {
  const char *q = ps->p;
  char buf[64];
  if (q < ps->end && *q == '-')
    q++;
  if (q >= ps->end || !(*q >= '0' && *q <= '9')) {
    fail(ps, "unexpected character");
    return 0;
  }
  while (q < ps->end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
                         *q == 'E' || *q == '+' || *q == '-'))
    q++;
  size_t n = (size_t)(q - ps->p);
  if (n >= sizeof buf) {
    fail(ps, "number too long");
    return 0;
  }
  memcpy(buf, ps->p, n);
  buf[n] = 0;
  char *end;
  out->type = JSON_NUM;
  out->num = strtod(buf, &end);
  if (*end) {
    fail(ps, "malformed number");
    return 0;
  }
  ps->p = q;
  return 1;
}

static int parse_value(struct parser *ps, struct json *out, int depth) {
  if (depth > MAX_DEPTH) {
    fail(ps, "nested too deeply");
    return 0;
  }
  skip_ws(ps);
  if (ps->p >= ps->end) {
    fail(ps, "unexpected end of input");
    return 0;
  }
  switch (*ps->p) {
  case '{':
    return parse_container(ps, out, depth, 1);
  case '[':
    return parse_container(ps, out, depth, 0);
  case '"':
    out->type = JSON_STR;
    return (out->str = parse_string(ps)) != NULL;
  case 't':
  case 'f':
  case 'n':
    if (lit(ps, "true") || lit(ps, "false")) {
      out->type = JSON_BOOL;
      out->num = ps->p[-1] == 'e' && ps->p[-2] == 'u';
      return 1;
    }
    if (lit(ps, "null")) {
      out->type = JSON_NULL;
      return 1;
    }
    fail(ps, "unexpected word");
    return 0;
  default:
    return parse_number(ps, out);
  }
}

static void free_members(struct json *j) {
  if (j->type == JSON_STR)
    free(j->str);
  for (size_t i = 0; i < j->n; i++) {
    free_members(&j->v[i]);
    if (j->keys)
      free(j->keys[i]);
  }
  free(j->v);
  free(j->keys);
}

void json_free(struct json *j) {
  if (j) {
    free_members(j);
    free(j);
  }
}

struct json *json_parse(const char *text, size_t len, char *err,
                        size_t errlen) {
  struct parser ps = {text, text + len, text, err, errlen, 0};
  struct json *j = calloc(1, sizeof *j);
  if (!j) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (parse_value(&ps, j, 0)) {
    skip_ws(&ps);
    if (ps.p != ps.end)
      fail(&ps, "text after the document");
  }
  if (ps.failed) {
    json_free(j);
    return NULL;
  }
  return j;
}

const struct json *json_get(const struct json *j, const char *key) {
  if (!j || j->type != JSON_OBJ)
    return NULL;
  for (size_t i = 0; i < j->n; i++)
    if (strcmp(j->keys[i], key) == 0)
      return &j->v[i];
  return NULL;
}

double json_num(const struct json *j, const char *key, double dflt) {
  const struct json *m = json_get(j, key);
  return m && m->type == JSON_NUM ? m->num : dflt;
}

const char *json_str(const struct json *j, const char *key, const char *dflt) {
  const struct json *m = json_get(j, key);
  return m && m->type == JSON_STR ? m->str : dflt;
}
