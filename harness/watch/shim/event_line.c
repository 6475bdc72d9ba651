#include "event_line.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "watch_shim.h"

size_t fc_utoa(uint64_t v, char* buf) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) buf[i] = tmp[n - 1 - i];
  return n;
}

/* Leaves room for the closing "}\n". */
static int fits(struct fc_line* l, size_t n) {
  if (l->overflow || l->len + n + 2 > FC_LINE_CAP) {
    l->overflow = 1;
    return 0;
  }
  return 1;
}

static void put(struct fc_line* l, const char* s, size_t n) {
  if (!fits(l, n)) return;
  memcpy(l->buf + l->len, s, n);
  l->len += n;
}

void fc_line_raw(struct fc_line* l, const char* s) { put(l, s, strlen(s)); }

void fc_line_key(struct fc_line* l, const char* key) {
  put(l, ",\"", 2);
  fc_line_raw(l, key);
  put(l, "\":", 2);
}

void fc_line_u64(struct fc_line* l, uint64_t v) {
  char b[20];
  put(l, b, fc_utoa(v, b));
}

void fc_line_i64(struct fc_line* l, int64_t v) {
  if (v < 0) {
    put(l, "-", 1);
    fc_line_u64(l, (uint64_t)0 - (uint64_t)v);
  } else {
    fc_line_u64(l, (uint64_t)v);
  }
}

void fc_line_hex(struct fc_line* l, uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  char b[18];
  b[0] = '"';
  for (int i = 0; i < 16; ++i) b[1 + i] = digits[(v >> (60 - 4 * i)) & 0xf];
  b[17] = '"';
  put(l, b, sizeof b);
}

void fc_line_bool(struct fc_line* l, int v) { fc_line_raw(l, v ? "true" : "false"); }

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one. Strict
 * like the readers' parsers: no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char* s, size_t n) {
  unsigned char c = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf)
    need = 1;
  else if (c >= 0xe0 && c <= 0xef) {
    need = 2;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 3;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else
    return 0;
  if (n < need + 1) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i <= need; ++i)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return need + 1;
}

void fc_line_str(struct fc_line* l, const char* s, size_t max) {
  static const char hex[] = "0123456789abcdef";
  put(l, "\"", 1);
  const unsigned char* p = (const unsigned char*)s;
  size_t n = 0;
  while (n < max && p[n] != 0) ++n;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(l, e, 2);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
      put(l, e, 6);
      ++i;
    } else if (c < 0x80) {
      put(l, (const char*)p + i, 1);
      ++i;
    } else {
      size_t k = utf8_len(p + i, n - i);
      if (k == 0) {
        put(l, "\\ufffd", 6);
        ++i;
      } else {
        put(l, (const char*)p + i, k);
        i += k;
      }
    }
  }
  put(l, "\"", 1);
}

void fc_line_field_u64(struct fc_line* l, const char* key, uint64_t v) {
  fc_line_key(l, key);
  fc_line_u64(l, v);
}
void fc_line_field_i64(struct fc_line* l, const char* key, int64_t v) {
  fc_line_key(l, key);
  fc_line_i64(l, v);
}
void fc_line_field_str(struct fc_line* l, const char* key, const char* s, size_t max) {
  fc_line_key(l, key);
  fc_line_str(l, s, max);
}
void fc_line_field_hex(struct fc_line* l, const char* key, uint64_t v) {
  fc_line_key(l, key);
  fc_line_hex(l, v);
}
void fc_line_field_bool(struct fc_line* l, const char* key, int v) {
  fc_line_key(l, key);
  fc_line_bool(l, v);
}

void fc_line_begin(struct fc_line* l, const char* ev) {
  l->len = 0;
  l->overflow = 0;
  size_t n = strlen(ev);
  if (n >= sizeof l->ev) n = sizeof l->ev - 1;
  memcpy(l->ev, ev, n);
  l->ev[n] = 0;
  fc_line_raw(l, "{\"ev\":");
  fc_line_str(l, ev, n);
  fc_line_field_i64(l, "pid", fc_getpid());
  fc_line_field_u64(l, "t", fc_now_ns());
}

/* FORKCHECK_WATCH_DIR/<pid>.jsonl, NUL-terminated, into buf (at least 1100 bytes). */
static void event_path(char* buf, pid_t pid) {
  size_t n = strlen(fc_cfg.dir);
  memcpy(buf, fc_cfg.dir, n);
  buf[n++] = '/';
  n += fc_utoa((uint64_t)pid, buf + n);
  memcpy(buf + n, ".jsonl", 7);
}

void fc_line_write(struct fc_line* l) {
  if (!fc_cfg.active) return;
  int saved = errno;
  if (l->overflow) {
    /* A valid line that says so beats a torn one. */
    char ev[sizeof l->ev];
    memcpy(ev, l->ev, sizeof ev);
    fc_line_begin(l, ev);
    fc_line_field_bool(l, "truncated", 1);
  }
  l->buf[l->len++] = '}';
  l->buf[l->len++] = '\n';
  char path[1100];
  event_path(path, fc_getpid());
  int fd;
  do fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
  while (fd < 0 && errno == EINTR);
  if (fd >= 0) {
    /* O_APPEND: each event lands whole at the end, whichever thread of the process writes. */
    ssize_t w;
    do w = write(fd, l->buf, l->len);
    while (w < 0 && errno == EINTR);
    close(fd);
  }
  errno = saved;
}
