/* One event as a JSON line, built in a caller's buffer and appended to this process's event file
 * with one write(). Everything here is async-signal-safe: no allocation, no stdio, no locale. */
#ifndef FC_EVENT_LINE_H
#define FC_EVENT_LINE_H

#include <stddef.h>
#include <stdint.h>

/* Big enough for a fork event with 64 threads, 16 runtimes, 8 frames and a command line. */
#define FC_LINE_CAP 8192

struct fc_line {
  char buf[FC_LINE_CAP];
  size_t len;
  int overflow; /* something did not fit: the line is written as a short "truncated" event */
  char ev[16];
};

/* {"ev":EV,"pid":PID,"t":MONOTONIC_NS */
void fc_line_begin(struct fc_line* l, const char* ev);
void fc_line_raw(struct fc_line* l, const char* s);
/* ,"KEY": */
void fc_line_key(struct fc_line* l, const char* key);
/* A JSON string from at most `max` bytes of `s` (stopping at NUL): escaped, invalid UTF-8
 * replaced, so that any reader's JSON parser accepts it. */
void fc_line_str(struct fc_line* l, const char* s, size_t max);
void fc_line_u64(struct fc_line* l, uint64_t v);
void fc_line_i64(struct fc_line* l, int64_t v);
void fc_line_hex(struct fc_line* l, uint64_t v); /* "0123abcd..." (quoted) */
void fc_line_bool(struct fc_line* l, int v);
/* Convenience: ,"KEY":value */
void fc_line_field_u64(struct fc_line* l, const char* key, uint64_t v);
void fc_line_field_i64(struct fc_line* l, const char* key, int64_t v);
void fc_line_field_str(struct fc_line* l, const char* key, const char* s, size_t max);
void fc_line_field_hex(struct fc_line* l, const char* key, uint64_t v);
void fc_line_field_bool(struct fc_line* l, const char* key, int v);

/* Closes the object and appends the line to FORKCHECK_WATCH_DIR/<pid>.jsonl; errno is kept. */
void fc_line_write(struct fc_line* l);

/* Decimal digits of v into buf (no NUL); returns the count. */
size_t fc_utoa(uint64_t v, char* buf);

#endif
