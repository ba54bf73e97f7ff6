/*
 * input.c - load a file, inflating gzip (input.h).
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../model/profile.h"

struct grow {
	unsigned char *p;
	size_t n, cap;
	uint64_t limit;
};

/* Room for at least one more byte; -1 when that would pass the limit. */
static int room(struct grow *g)
{
	if (g->n < g->cap)
		return 0;
	if (g->n >= g->limit)
		return -1;
	size_t cap = g->cap ? g->cap * 2 : 1 << 16;
	if (cap > g->limit)
		cap = (size_t)g->limit;
	g->p = prof_xrealloc(g->p, cap, 1);
	g->cap = cap;
	return 0;
}

static int read_all(FILE *f, struct grow *g)
{
	while (room(g) == 0) {
		size_t n = fread(g->p + g->n, 1, g->cap - g->n, f);
		g->n += n;
		if (n == 0)
			return ferror(f) ? -1 : 0;
	}
	return fgetc(f) == EOF && !ferror(f) ? 0 : 1; /* 1: over the limit */
}

static const char *human(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

/* Inflates gzip members (concatenated ones too) from raw into g. */
static int gunzip(const struct grow *raw, struct grow *g, const char *path, char *err,
                  size_t errlen)
{
	z_stream z = {0};
	char hb[32];
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		prof_oom();
	z.next_in = raw->p;
	z.avail_in = (uInt)raw->n;
	int rc = Z_OK;
	while (rc != Z_STREAM_END || z.avail_in > 0) {
		if (rc == Z_STREAM_END && inflateReset(&z) != Z_OK)
			break;
		if (room(g) != 0) {
			snprintf(err, errlen, "%s: decompresses to more than %s; refusing it", path,
			         human(g->limit, hb, sizeof hb));
			inflateEnd(&z);
			return -1;
		}
		z.next_out = g->p + g->n;
		z.avail_out = (uInt)(g->cap - g->n > UINT32_MAX ? UINT32_MAX : g->cap - g->n);
		uInt before = z.avail_out;
		rc = inflate(&z, Z_NO_FLUSH);
		g->n += before - z.avail_out;
		if (rc == Z_BUF_ERROR && z.avail_in == 0)
			break; /* input ended inside a member */
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
			snprintf(err, errlen, "%s: corrupt gzip data (%s)", path,
			         z.msg ? z.msg : "inflate failed");
			inflateEnd(&z);
			return -1;
		}
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		snprintf(err, errlen, "%s: truncated gzip data", path);
		return -1;
	}
	return 0;
}

int input_load(const char *path, uint64_t cap, unsigned char **buf, size_t *len, char *err,
               size_t errlen)
{
	char hb[32];
	/* "-": standard input (`curl .../debug/pprof/profile | profil report -`) */
	int std_in = strcmp(path, "-") == 0;
	FILE *f = std_in ? stdin : fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	struct grow raw = {NULL, 0, 0, cap};
	int rc = read_all(f, &raw);
	int e = errno;
	if (!std_in)
		fclose(f);
	if (rc != 0) {
		if (rc < 0)
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
		else
			snprintf(err, errlen, "%s: larger than %s; refusing it", path,
			         human(cap, hb, sizeof hb));
		free(raw.p);
		return -1;
	}
	if (raw.n >= 2 && raw.p[0] == 0x1f && raw.p[1] == 0x8b) {
		struct grow g = {NULL, 0, 0, cap};
		rc = gunzip(&raw, &g, path, err, errlen);
		free(raw.p);
		if (rc != 0) {
			free(g.p);
			return -1;
		}
		raw = g;
	}
	*buf = raw.p;
	*len = raw.n;
	return 0;
}

FILE *input_open_named(const char *path)
{
	/* O_NONBLOCK: open() of a FIFO with no writer would wait for one */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}
