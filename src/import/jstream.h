/*
 * import/jstream.h: the streaming JSON reader the JSON importers share
 * (jstream.c): one top-level object walked key by key, an array of it
 * element by element, each element's bytes handed over (and parsed with
 * jansson only when the importer wants it), so that memory holds one value
 * and a window, never the whole document.  Files are read through zlib, so
 * a gzip-compressed file reads as its text.
 */
#ifndef KGATE_IMPORT_JSTREAM_H
#define KGATE_IMPORT_JSTREAM_H

#include "kgate/jtok.h"

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

/* The most bytes one value kept in the window may have (an array element,
 * or a value parsed whole): the reader's memory bound, with the window. */
#define JSTREAM_VALUE_MAX (64u << 20)
#define JSTREAM_WINDOW (1u << 20)

/* The file, inflated on a thread of its own (jstream.c), ZPIPE_BLOCKS
 * blocks of ZPIPE_BLOCK bytes ahead of the reader. */
#define ZPIPE_BLOCKS 4
#define ZPIPE_BLOCK (256u << 10)
struct zpipe {
	gzFile gz;
	pthread_t tid;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *blk[ZPIPE_BLOCKS];
	size_t len[ZPIPE_BLOCKS];
	size_t head, count;     /* the ready blocks: count of them from head */
	size_t off;             /* bytes of blk[head] already taken */
	int done;               /* the inflater has finished (end or error) */
	int failed;             /* with an error: */
	int zerr, err_no;       /* gzerror's code, errno */
	char msg[160];          /* gzerror's text */
	int stop;               /* the reader has gone */
};

/* What jstream_array found of its probe key in the element it hands over
 * (jstream_probe): the value's bytes of a top-level key of that name. */
struct jstream_probe {
	size_t off, len;        /* the value's text, quotes left out, from the
				 * element's first byte */
	int hits;               /* how many times the key occurs at the top */
	int unsure;             /* the scan cannot say: the element is not an
				 * object, a top-level key or the value has a
				 * backslash, or the value is not a string */
};

struct jstream {
	const char *path;
	const char *what;       /* the format, for messages ("nvbench") */
	const char *probe;      /* jstream_probe's key (NULL: none) */
	size_t probe_len;
	struct jstream_probe pr;
	struct zpipe z;
	unsigned char *b;
	size_t cap, len, pos;
	size_t mark;            /* bytes before it may be dropped */
	uint64_t dropped;       /* bytes dropped before b[0] */
	int eof;
	struct jtok jt;         /* jstream_parse's tokens */
};

/* What a key or element callback returns to end the walk there: the rest
 * of the file is neither read nor checked, and jstream_walk returns 0. */
#define JSTREAM_STOP (-100)

/* Called with each key of the top-level object, the reader at its value,
 * which it must consume (jstream_array, jstream_json, jstream_skip). */
typedef int (*jstream_key_fn)(struct jstream *r, const char *key, void *ctx);
/* Called with each element of an array: its bytes [s, s + n) in the window. */
typedef int (*jstream_elem_fn)(struct jstream *r, const unsigned char *s, size_t n, void *ctx);

/* Open path, walk its top-level object with fn (to the end of the file:
 * bytes after the document are an error), close it.  0 (KG_EXIT_PASS), or
 * an exit status after printing why ("PATH: byte N: ...", "PATH:
 * truncated: ..."). */
int jstream_walk(const char *path, const char *what, jstream_key_fn fn, void *ctx);

/* The value at the reader: an array, element by element; skipped; parsed
 * whole (NULL after printing why). */
int jstream_array(struct jstream *r, jstream_elem_fn fn, void *ctx);
/* While key is set (NULL: none), jstream_array's scan of each element also
 * notes where the element's top-level key of that name has its string
 * value, in r->pr, as it finds the element's end, without a second pass:
 * a filter on one field (Kineto's "cat") without parsing every element. */
void jstream_probe(struct jstream *r, const char *key);
int jstream_skip(struct jstream *r);
json_t *jstream_json(struct jstream *r);

/* The first byte of the value at the reader (white space passed over, the
 * byte not consumed): '{', '[', '"', ...; -1 at the end, -2 after an error
 * said. */
int jstream_peek(struct jstream *r);

/* An element's bytes parsed (NULL after printing "PATH: byte N: bad WHAT
 * JSON: why"). */
json_t *jstream_parse(struct jstream *r, const unsigned char *s, size_t n);

/* The byte offset in the (decompressed) file of a pointer into the window. */
uint64_t jstream_offset(const struct jstream *r, const unsigned char *at);

#endif
