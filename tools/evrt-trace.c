/*
 * evrt-trace.c - draw a Chrome trace-event JSON file (as written by evrt's
 * tracing, docs/trace.md) as an SVG timeline:
 *
 *     evrt-trace FILE.json -o timeline.svg [--width PX] [--title TEXT]
 *
 * One lane per thread track (a stream, or a host thread), grouped by process
 * (a device, or "host"); complete slices coloured by category (the work item
 * kind); record markers; arrows along flow events (event dependencies); a
 * time axis in ms and a legend.  Every lane is a <g class="lane"> with its
 * pid, tid, process and name in data- attributes, so tests can count them.
 *
 * No dependencies: a small JSON reader (json.c) and stdio.
 */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lane {
  double pid, tid;
  const char *name; /* thread_name, or NULL */
  double tsort;
  int has_tsort;
  double y;
};

struct proc {
  double pid;
  const char *name;
  double sort;
  int has_sort;
};

struct slice {
  size_t lane;
  double ts, dur;
  const char *name, *cat;
};

struct mark {
  size_t lane;
  double ts;
  const char *name;
};

struct fpoint {
  double id;
  const char *name;
  int order; /* s = 0, t = 1, f = 2 */
  size_t lane;
  double ts;
  size_t seq;
};

struct model {
  struct lane *lanes;
  size_t nlanes, caplanes;
  struct proc *procs;
  size_t nprocs, capprocs;
  struct slice *slices;
  size_t nslices, capslices;
  struct mark *marks;
  size_t nmarks, capmarks;
  struct fpoint *fps;
  size_t nfps, capfps;
};

static void *xgrow(void *p, size_t *cap, size_t n, size_t size) {
  if (n < *cap)
    return p;
  size_t nc = *cap ? *cap * 2 : 64;
  void *q = realloc(p, nc * size);
  if (!q) {
    fprintf(stderr, "evrt-trace: out of memory\n");
    exit(1);
  }
  *cap = nc;
  return q;
}
#define PUSH(m, arr, n, cap)                                                   \
  (m->arr = xgrow(m->arr, &m->cap, m->n, sizeof *m->arr), &m->arr[m->n++])

static struct proc *proc_of(struct model *m, double pid) {
  for (size_t i = 0; i < m->nprocs; i++)
    if (m->procs[i].pid == pid)
      return &m->procs[i];
  struct proc *p = PUSH(m, procs, nprocs, capprocs);
  memset(p, 0, sizeof *p);
  p->pid = pid;
  return p;
}

static size_t lane_of(struct model *m, double pid, double tid) {
  for (size_t i = 0; i < m->nlanes; i++)
    if (m->lanes[i].pid == pid && m->lanes[i].tid == tid)
      return i;
  proc_of(m, pid);
  struct lane *l = PUSH(m, lanes, nlanes, caplanes);
  memset(l, 0, sizeof *l);
  l->pid = pid;
  l->tid = tid;
  return m->nlanes - 1;
}

static void load(struct model *m, const struct json *events) {
  for (size_t i = 0; i < events->n; i++) {
    const struct json *e = &events->v[i];
    const char *ph = json_str(e, "ph", "");
    const struct json *tidj = json_get(e, "tid");
    double pid = json_num(e, "pid", 0), tid = json_num(e, "tid", 0);
    const char *name = json_str(e, "name", "");
    if (e->type != JSON_OBJ || !ph[0] || ph[1])
      continue;
    switch (ph[0]) {
    case 'M': {
      const struct json *args = json_get(e, "args");
      if (!strcmp(name, "process_name"))
        proc_of(m, pid)->name = json_str(args, "name", NULL);
      else if (!strcmp(name, "process_sort_index")) {
        struct proc *p = proc_of(m, pid);
        p->sort = json_num(args, "sort_index", 0);
        p->has_sort = 1;
      } else if (tidj && !strcmp(name, "thread_name")) {
        size_t li = lane_of(m, pid, tid); /* may move m->lanes */
        m->lanes[li].name = json_str(args, "name", NULL);
      } else if (tidj && !strcmp(name, "thread_sort_index")) {
        size_t li = lane_of(m, pid, tid);
        struct lane *l = &m->lanes[li];
        l->tsort = json_num(args, "sort_index", 0);
        l->has_tsort = 1;
      }
      break;
    }
    case 'X': {
      if (!isfinite(json_num(e, "ts", 0)) || !isfinite(json_num(e, "dur", 0)))
        break; /* nowhere to draw it */
      struct slice *s = PUSH(m, slices, nslices, capslices);
      s->lane = lane_of(m, pid, tid);
      s->ts = json_num(e, "ts", 0);
      s->dur = json_num(e, "dur", 0);
      if (!(s->dur >= 0))
        s->dur = 0;
      s->name = name;
      s->cat = json_str(e, "cat", "");
      break;
    }
    case 'i':
    case 'I': {
      if (!isfinite(json_num(e, "ts", 0)))
        break;
      struct mark *k = PUSH(m, marks, nmarks, capmarks);
      k->lane = lane_of(m, pid, tid);
      k->ts = json_num(e, "ts", 0);
      k->name = name;
      break;
    }
    case 's':
    case 't':
    case 'f': {
      if (!isfinite(json_num(e, "ts", 0)))
        break;
      const struct json *id = json_get(e, "id");
      struct fpoint *f = PUSH(m, fps, nfps, capfps);
      f->id = id && id->type == JSON_NUM ? id->num : 0;
      f->name = name;
      f->order = ph[0] == 's' ? 0 : ph[0] == 't' ? 1 : 2;
      f->lane = lane_of(m, pid, tid);
      f->ts = json_num(e, "ts", 0);
      f->seq = m->nfps;
      break;
    }
    default:
      break;
    }
  }
}

/* ---------------------------------------------------------------- draw */

static const struct {
  const char *cat, *color;
} kinds[] = {
    {"host_func", "#4e79a7"}, {"memcpy", "#f28e2b"}, {"memset", "#e15759"},
    {"delay", "#a0cbe8"},     {"record", "#59a14f"}, {"wait", "#edc948"},
    {"reset", "#b07aa1"},     {"host_wait", "#9c755f"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static const char *color_of(const char *cat) {
  static const char *const other[] = {"#ff9da7", "#76b7b2", "#bab0ac",
                                      "#8cd17d", "#d37295"};
  for (size_t i = 0; i < NKINDS; i++)
    if (!strcmp(cat, kinds[i].cat))
      return kinds[i].color;
  unsigned h = 0;
  for (const char *p = cat; *p; p++)
    h = h * 31u + (unsigned char)*p;
  return other[h % 5];
}

static void xml(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default:
      /* XML 1.0 has no place for other control characters */
      if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
        fputc('?', f);
      else
        fputc(*s, f);
    }
  }
}

static struct model *sort_model; /* for the qsort comparators */

static int cmp_lane_idx(const void *pa, const void *pb) {
  const struct lane *a = &sort_model->lanes[*(const size_t *)pa];
  const struct lane *b = &sort_model->lanes[*(const size_t *)pb];
  const struct proc *p = proc_of(sort_model, a->pid);
  const struct proc *q = proc_of(sort_model, b->pid);
  double ka = p->has_sort ? p->sort : a->pid, kb = q->has_sort ? q->sort : b->pid;
  if (ka != kb)
    return ka < kb ? -1 : 1;
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  ka = a->has_tsort ? a->tsort : a->tid;
  kb = b->has_tsort ? b->tsort : b->tid;
  if (ka != kb)
    return ka < kb ? -1 : 1;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int cmp_slice_lane(const void *pa, const void *pb) {
  const struct slice *a = pa, *b = pb;
  if (a->lane != b->lane)
    return a->lane < b->lane ? -1 : 1;
  return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_mark_lane(const void *pa, const void *pb) {
  const struct mark *a = pa, *b = pb;
  if (a->lane != b->lane)
    return a->lane < b->lane ? -1 : 1;
  return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_fp(const void *pa, const void *pb) {
  const struct fpoint *a = pa, *b = pb;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  int c = strcmp(a->name, b->name);
  if (c)
    return c;
  if (a->order != b->order)
    return a->order - b->order;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A tick step of 1, 2 or 5 times a power of ten giving about 10 ticks. */
static double tick_step(double span_ms) {
  double raw = span_ms / 10, p = pow(10, floor(log10(raw)));
  double r = raw / p;
  return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * p;
}

#define LEFT 190.0
#define RIGHT 24.0
#define TOP 64.0
#define LANE_H 24.0
#define HEAD_H 20.0

struct view {
  double t0, t1, x0, x1;
};
static double X(const struct view *v, double ts) {
  return v->x0 + (ts - v->t0) / (v->t1 - v->t0) * (v->x1 - v->x0);
}

static void draw(struct model *m, FILE *f, double width, const char *title) {
  struct view v = {INFINITY, -INFINITY, LEFT, width - RIGHT};
  for (size_t i = 0; i < m->nslices; i++) {
    v.t0 = fmin(v.t0, m->slices[i].ts);
    v.t1 = fmax(v.t1, m->slices[i].ts + m->slices[i].dur);
  }
  for (size_t i = 0; i < m->nmarks; i++) {
    v.t0 = fmin(v.t0, m->marks[i].ts);
    v.t1 = fmax(v.t1, m->marks[i].ts);
  }
  if (!(v.t0 <= v.t1)) {
    v.t0 = 0;
    v.t1 = 1000;
  }
  if (v.t1 - v.t0 < 1) /* at least 1 us shown */
    v.t1 = v.t0 + 1;

  /* Lane order: processes by sort index, then threads by sort index. */
  size_t *order = malloc((m->nlanes ? m->nlanes : 1) * sizeof *order);
  if (!order) {
    fprintf(stderr, "evrt-trace: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < m->nlanes; i++)
    order[i] = i;
  sort_model = m;
  qsort(order, m->nlanes, sizeof *order, cmp_lane_idx);
  double y = TOP;
  for (size_t k = 0; k < m->nlanes; k++) {
    struct lane *l = &m->lanes[order[k]];
    if (k == 0 || m->lanes[order[k - 1]].pid != l->pid)
      y += HEAD_H;
    l->y = y;
    y += LANE_H;
  }
  double legend_y = y + 34, height = legend_y + 30;

  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
             "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
             "font-size=\"11\">\n",
          width, height, width, height);
  fputs("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" "
        "refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
        "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
        "fill=\"#222\"/></marker></defs>\n",
        f);
  fprintf(f, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
          width, height);
  fputs("<text class=\"title\" x=\"12\" y=\"22\" font-size=\"15\" "
        "font-weight=\"bold\">",
        f);
  xml(f, title);
  fputs("</text>\n", f);

  /* Time axis (ms of the trace's clock) with a grid across the lanes. */
  double span_ms = (v.t1 - v.t0) / 1000, step = tick_step(span_ms);
  fputs("<g class=\"axis\">\n", f);
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
             "stroke=\"#444\"/>\n",
          v.x0, TOP - 8, v.x1, TOP - 8);
  /* t from an integer count: adding step to a huge t could stand still */
  double first = ceil(v.t0 / 1000 / step) * step;
  for (int i = 0; i < 100 && first + i * step <= v.t1 / 1000 + 1e-9; i++) {
    double t = first + i * step;
    double x = X(&v, t * 1000);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#e4e4e4\"/>",
            x, TOP - 8, x, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
               "fill=\"#444\">%.*f</text>\n",
            x, TOP - 13, step < 1 ? (int)ceil(-log10(step) - 1e-9) : 0, t);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
             "fill=\"#444\">time (ms)</text>\n</g>\n",
          v.x0 - 8, TOP - 13);

  /* Lanes, with their slices and record markers (both sorted by lane, so
   * each lane's run is found by a binary search). */
  /* (qsort wants a valid pointer even for no elements) */
  if (m->nslices)
    qsort(m->slices, m->nslices, sizeof *m->slices, cmp_slice_lane);
  if (m->nmarks)
    qsort(m->marks, m->nmarks, sizeof *m->marks, cmp_mark_lane);
  for (size_t k = 0; k < m->nlanes; k++) {
    size_t li = order[k];
    struct lane *l = &m->lanes[li];
    struct proc *p = proc_of(m, l->pid);
    char pbuf[64], tbuf[64];
    snprintf(pbuf, sizeof pbuf, "pid %.0f", l->pid);
    snprintf(tbuf, sizeof tbuf, "tid %.0f", l->tid);
    const char *pname = p->name ? p->name : pbuf;
    const char *lname = l->name ? l->name : tbuf;
    if (k == 0 || m->lanes[order[k - 1]].pid != l->pid) {
      fprintf(f, "<text class=\"process\" x=\"8\" y=\"%.1f\" "
                 "font-weight=\"bold\">",
              l->y - 6);
      xml(f, pname);
      fputs("</text>\n", f);
    }
    fprintf(f, "<g class=\"lane\" data-pid=\"%.0f\" data-tid=\"%.0f\" "
               "data-process=\"",
            l->pid, l->tid);
    xml(f, pname);
    fputs("\" data-name=\"", f);
    xml(f, lname);
    fprintf(f, "\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%.1f\" fill=\"%s\"/>",
            v.x0, l->y, v.x1 - v.x0, LANE_H, k % 2 ? "#f7f7f7" : "#efefef");
    fprintf(f, "<text x=\"20\" y=\"%.1f\">", l->y + LANE_H / 2 + 4);
    xml(f, lname);
    fputs("</text>\n", f);
    size_t lo = 0, hi = m->nslices;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (m->slices[mid].lane < li)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t i = lo; i < m->nslices && m->slices[i].lane == li; i++) {
      const struct slice *s = &m->slices[i];
      double xa = X(&v, s->ts), xb = X(&v, s->ts + s->dur);
      double w = xb - xa < 1 ? 1 : xb - xa;
      fprintf(f, "<rect class=\"slice\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                 "height=\"%.1f\" fill=\"%s\" stroke=\"#00000040\" "
                 "stroke-width=\"0.5\"><title>",
              xa, l->y + 3, w, LANE_H - 6, color_of(s->cat));
      xml(f, s->name);
      fputs(" (", f);
      xml(f, s->cat);
      fprintf(f, ") at %.3f ms, %.3f ms</title></rect>\n", s->ts / 1000,
              s->dur / 1000);
      /* the name, if it fits (about 6 px a character) */
      if (w > 6.0 * (double)strlen(s->name) + 6) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                   "fill=\"#111\">",
                xa + 3, l->y + LANE_H / 2 + 3.5);
        xml(f, s->name);
        fputs("</text>\n", f);
      }
    }
    for (lo = 0, hi = m->nmarks; lo < hi;) {
      size_t mid = (lo + hi) / 2;
      if (m->marks[mid].lane < li)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t i = lo; i < m->nmarks && m->marks[i].lane == li; i++) {
      const struct mark *k2 = &m->marks[i];
      double x = X(&v, k2->ts);
      fprintf(f, "<path class=\"marker\" d=\"M%.1f,%.1f l-3.5,-6 h7 z\" "
                 "fill=\"#2d6a2d\"><title>",
              x, l->y + 6);
      xml(f, k2->name);
      fprintf(f, " at %.3f ms</title></path>\n", k2->ts / 1000);
    }
    fputs("</g>\n", f);
  }

  /* Arrows along each flow: consecutive points s -> t ... -> f. */
  if (m->nfps)
    qsort(m->fps, m->nfps, sizeof *m->fps, cmp_fp);
  fputs("<g class=\"flows\" fill=\"none\" stroke=\"#222\" "
        "stroke-opacity=\"0.7\" stroke-width=\"1\">\n",
        f);
  for (size_t i = 0; i + 1 < m->nfps; i++) {
    const struct fpoint *a = &m->fps[i], *b = &m->fps[i + 1];
    if (a->id != b->id || strcmp(a->name, b->name) || a->order == 2)
      continue;
    double xa = X(&v, a->ts), xb = X(&v, b->ts);
    double ya = m->lanes[a->lane].y + LANE_H / 2;
    double yb = m->lanes[b->lane].y + LANE_H / 2;
    /* within one lane the arrow arcs above it, else it would hide */
    double cy = ya == yb ? ya - LANE_H * 0.9 : (ya + yb) / 2;
    fprintf(f, "<path class=\"flow\" d=\"M%.2f,%.1f Q%.2f,%.1f %.2f,%.1f\" "
               "marker-end=\"url(#arrow)\"/>\n",
            xa, ya, (xa + xb) / 2, cy, xb, yb);
  }
  fputs("</g>\n", f);

  /* Legend. */
  fputs("<g class=\"legend\">\n", f);
  double x = 12;
  for (size_t i = 0; i < NKINDS; i++) {
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" "
               "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
            x, legend_y - 10, kinds[i].color, x + 18, legend_y, kinds[i].cat);
    x += 26 + 7.0 * (double)strlen(kinds[i].cat);
  }
  fprintf(f, "<path d=\"M%.0f,%.0f l-3.5,-6 h7 z\" fill=\"#2d6a2d\"/>"
             "<text x=\"%.0f\" y=\"%.0f\">record</text>\n",
          x + 4, legend_y - 2, x + 12, legend_y);
  x += 64;
  fprintf(f, "<path d=\"M%.0f,%.0f L%.0f,%.0f\" stroke=\"#222\" "
             "marker-end=\"url(#arrow)\"/><text x=\"%.0f\" y=\"%.0f\">event "
             "dependency (record &#8594; wait &#8594; resume)</text>\n",
          x, legend_y - 4, x + 26, legend_y - 4, x + 32, legend_y);
  fputs("</g>\n</svg>\n", f);
  free(order);
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += r;
    if (n == cap) {
      char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = n;
  return buf;
}

static void usage(FILE *f) {
  fputs("usage: evrt-trace FILE.json [-o OUT.svg] [--width PX] "
        "[--title TEXT]\n"
        "Draw a Chrome trace-event file (EVRT_TRACE=FILE.json) as an SVG "
        "timeline.\nWithout -o the SVG goes to standard output.\n",
        f);
}

int main(int argc, char **argv) {
  const char *in = NULL, *outp = NULL, *title = NULL;
  double width = 1200;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      outp = argv[++i];
    } else if (!strcmp(argv[i], "--width") && i + 1 < argc) {
      char *end;
      width = strtod(argv[++i], &end);
      if (*end || !(width >= 400 && width <= 100000)) {
        fprintf(stderr, "evrt-trace: --width wants 400..100000 pixels\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--title") && i + 1 < argc) {
      title = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      usage(stderr);
      return 2;
    } else if (!in) {
      in = argv[i];
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (!in) {
    usage(stderr);
    return 2;
  }
  size_t len;
  char *text = read_all(in, &len);
  if (!text) {
    perror(in);
    return 1;
  }
  char err[160];
  struct json *doc = json_parse(text, len, err, sizeof err);
  free(text);
  if (!doc) {
    fprintf(stderr, "evrt-trace: %s: %s\n", in, err);
    return 1;
  }
  /* Both trace formats: {"traceEvents": [...]} and a bare array. */
  const struct json *events =
      doc->type == JSON_ARR ? doc : json_get(doc, "traceEvents");
  if (!events || events->type != JSON_ARR) {
    fprintf(stderr, "evrt-trace: %s: no traceEvents array\n", in);
    json_free(doc);
    return 1;
  }
  struct model m;
  memset(&m, 0, sizeof m);
  load(&m, events);
  FILE *f = outp ? fopen(outp, "w") : stdout;
  if (!f) {
    perror(outp);
    json_free(doc);
    return 1;
  }
  if (!title) {
    const char *base = strrchr(in, '/');
    title = base ? base + 1 : in;
  }
  draw(&m, f, width, title);
  int rc = 0;
  if (fflush(f) != 0 || ferror(f)) {
    perror(outp ? outp : "stdout");
    rc = 1;
  }
  if (outp && fclose(f) != 0)
    rc = 1;
  free(m.lanes);
  free(m.procs);
  free(m.slices);
  free(m.marks);
  free(m.fps);
  json_free(doc);
  return rc;
}
