/*
 * util.h: memory, strings and error messages used by every module.
 *
 * Allocation failure is fatal (xmalloc and friends print and exit 3).
 * kg_error() prints "kgate: <message>" on stderr; kg_warn() prints
 * "kgate: warning: <message>" (both in msg.c, the message escaped as
 * terminal text).  struct kg_buf is a growable string.  Escaping for every
 * other reader is kgate/escape.h's.
 */
#ifndef KGATE_UTIL_H
#define KGATE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define KG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KG_PRINTF(a, b)
#endif

/* -1, 0 or 1 as a is below, equal to or above b (for qsort comparators). */
#define KG_CMP(a, b) (((a) > (b)) - ((a) < (b)))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) KG_PRINTF(1, 2);

void kg_error(const char *fmt, ...) KG_PRINTF(1, 2);
void kg_warn(const char *fmt, ...) KG_PRINTF(1, 2);
void kg_note(const char *fmt, ...) KG_PRINTF(1, 2); /* chatter: stderr */

/* The progress of a suite run on stderr: with inplace, one line rewritten in
 * place ("\r", erase to the end of the line; no colour), else a plain line
 * per call.  kg_progress_inplace(): 1 when stderr is a terminal whose TERM
 * is not "dumb".  kg_progress_end() erases a line shown in place; every
 * kg_error, kg_warn and kg_note does so first. */
void kg_progress(int inplace, const char *fmt, ...) KG_PRINTF(2, 3);
int kg_progress_inplace(void);
void kg_progress_end(void);

/* --format json: kg_json_errors(1) keeps every kg_error message (they are
 * still printed on stderr); kg_json_errors_finish(status), for an exit
 * status of 2 or 3, prints them on stdout as one JSON object
 * {"error": first, "messages": [...], "exit_status": status}, unless the
 * command wrote its JSON document (kg_json_document_written).
 * kg_json_print(doc, flags) writes the command's JSON document on stdout
 * (json_dumpf with flags, then a newline), marks it written and frees it. */
struct json_t;
void kg_json_errors(int on);
void kg_json_document_written(void);
void kg_json_print(struct json_t *doc, size_t flags);
void kg_json_errors_finish(int status);

/* 1 when colour may be used on the stream (a terminal, NO_COLOR unset). */
int kg_use_color(int fd);

struct kg_buf {
	char *s;      /* always NUL-terminated once anything was added */
	size_t len;
	size_t cap;
};
#define KG_BUF_INIT { NULL, 0, 0 }

void buf_add(struct kg_buf *b, const char *s, size_t n);
void buf_adds(struct kg_buf *b, const char *s);
void buf_addc(struct kg_buf *b, char c);
void buf_printf(struct kg_buf *b, const char *fmt, ...) KG_PRINTF(2, 3);
void buf_vprintf(struct kg_buf *b, const char *fmt, va_list ap);
void buf_reset(struct kg_buf *b);
char *buf_detach(struct kg_buf *b);
void buf_free(struct kg_buf *b);

/*
 * Lines of a stream, read in blocks and found with memchr (a getc a byte
 * cost 9% of an ingest).  kg_lines_next points *line at the next line in
 * the reader's buffer, its '\n' replaced by a NUL (*newline says whether
 * it had one; the last line of a file may not), valid until the next call;
 * it returns the length without the '\n', -1 at end of file or on a read
 * error (ferror tells), -2 when the line with its '\n' is longer than max
 * bytes.  The buffer never holds more than max + 1 bytes and one block
 * (KG_LINES_BLOCK), whatever the input.  The struct may be copied while
 * only one copy is read from.  Zeroed, then fp set, it is ready;
 * kg_lines_free releases the buffer (not the stream) and zeroes it.
 */
#define KG_LINES_BLOCK (256 * 1024)
struct kg_lines {
	FILE *fp;
	char *buf;
	size_t cap;      /* usable bytes of buf (one more is kept for a NUL) */
	size_t beg, end; /* the bytes read and not yet returned */
	int eof;
};
long kg_lines_next(struct kg_lines *l, char **line, size_t max, int *newline);
void kg_lines_free(struct kg_lines *l);

/*
 * Open addressing with linear probing: a table of cap slots of size bytes
 * each, cap a power of two, a slot either empty (the size bytes at empty)
 * or holding an entry (a pointer, or an index into an array kept
 * elsewhere).  kg_table_grow returns a new table of cap slots holding the
 * entries of old (oldcap slots; may be NULL when oldcap is 0), each placed
 * at hash(slot, arg), and frees old.  The slots' order changes; what they
 * hold does not.
 */
void *kg_table_grow(void *old, size_t oldcap, size_t cap, size_t size, const void *empty,
		    size_t (*hash)(const void *slot, const void *arg), const void *arg);

/* Edit distance, for "did you mean" suggestions. */
size_t kg_levenshtein(const char *a, const char *b);
/* The candidate nearest to word, or NULL when none is near enough. */
const char *kg_suggest(const char *word, const char *const *candidates, size_t n);
/* kg_suggest, but only when word is at most half wrong: "warning" may mean
 * "warn", "nope" does not mean "ignore"; "--basline" means "--baseline". */
const char *kg_suggest_close(const char *word, const char *const *candidates, size_t n);

/* The directory of the running kgate binary (/proc/self/exe), malloc'd, or NULL. */
char *kg_exe_dir(void);

/* Commits in human outputs: a hexadecimal SHA longer than KG_SHA_SHORT
 * digits, alone or at the start of a label ("<sha> (merge base with
 * main)"), cut to KG_SHA_SHORT digits; any other name (a tag, "demo-base")
 * as it is.  Machine outputs (JSON) keep the full SHA. */
#define KG_SHA_SHORT 12
/* sha shortened into out (at least KG_SHA_SHORT_BUF bytes), returned;
 * a longer name than out holds is cut.  NULL is "?". */
#define KG_SHA_SHORT_BUF 80
const char *kg_sha_short(char *out, const char *sha);
/* 1 when s is a full commit SHA (40 or 64 hexadecimal digits). */
int kg_is_sha(const char *s);

/* The file name in the working directory or the nearest directory above it,
 * as git finds its top level: the search stops after the directory that
 * holds .git, before a directory of GIT_CEILING_DIRECTORIES, or at the
 * file system's root.  "name" itself when it is in
 * the working directory, else an absolute path (malloc'd); NULL when there
 * is none.  *top (when not NULL) gets the directory that holds .git, or
 * NULL (malloc'd). */
char *kg_find_up(const char *name, char **top);

#endif
