/*
 * helpers.h: the scaffolding the cmocka unit tests share: one scratch
 * directory per test binary (made by a group setup, removed by its
 * teardown), paths in it, the source tree's fixtures, and writing and
 * reading whole files.  Header-only: each test binary is one file.
 *
 *   cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
 *   char *p = helper_path("a.db");              (free it)
 *   char *f = helper_fixture("records", "good.jsonl");
 *   helper_write(p, "text"); char *s = helper_slurp(p, &len);
 */
#ifndef KGATE_TEST_HELPERS_H
#define KGATE_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/util.h"

/* The scratch directory, under $TMPDIR (or /tmp). */
static char helper_dir[512];

static inline int helper_tmpdir_setup(void **state)
{
	const char *t = getenv("TMPDIR");

	snprintf(helper_dir, sizeof(helper_dir), "%s/kgate-unit.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(helper_dir))
		return -1;
	*state = helper_dir;
	return 0;
}

static inline int helper_tmpdir_teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", helper_dir);
	int rc = system(cmd);

	free(cmd);
	(void)state;
	return rc == 0 ? 0 : -1;
}

/* NAME in the scratch directory (allocated). */
static inline char *helper_path(const char *name)
{
	return xasprintf("%s/%s", helper_dir, name);
}

/* The source tree: $KGATE_SRC (make test sets it), else the working directory. */
static inline const char *helper_src_dir(void)
{
	const char *s = getenv("KGATE_SRC");

	return s && *s ? s : ".";
}

/* tests/fixtures/SUBDIR/NAME in the source tree (allocated). */
static inline char *helper_fixture(const char *subdir, const char *name)
{
	return xasprintf("%s/tests/fixtures/%s/%s", helper_src_dir(), subdir, name);
}

/* Writes TEXT to PATH, replacing it; fails the test when it cannot. */
static inline void helper_write(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0 || !*text, 1);
	assert_int_equal(fclose(fp), 0);
}

/* TEXT as the file NAME in the scratch directory; its path (allocated). */
static inline char *helper_write_tmp(const char *name, const char *text)
{
	char *p = helper_path(name);

	helper_write(p, text);
	return p;
}

/* The whole file (allocated, NUL-terminated), its length in *len when len
 * is not NULL; NULL when it cannot be opened. */
static inline char *helper_slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	struct kg_buf b = KG_BUF_INIT;
	char chunk[4096];
	size_t n;

	if (!fp)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		buf_add(&b, chunk, n);
	fclose(fp);
	if (len)
		*len = b.len;
	return b.s ? buf_detach(&b) : xstrdup("");
}

#endif
