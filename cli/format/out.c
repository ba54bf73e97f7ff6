/*
 * out.c - atomic output files (out.h).  The same discipline as the
 * library's gmon.out writer (src/gmon/gmon_file.c): the temporary name is in
 * the target's directory (symbolic links resolved, so a link survives
 * and rename stays within one file system), and the directory is synced
 * after the rename so the new name is durable.
 */
#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../model/profile.h"

struct outfile {
	FILE *fp;
	char *target; /* NULL for stdout */
	char *tmp;    /* NULL when writing in place */
	struct outfile *next; /* in pending, while tmp exists */
};

/* Temporary files not yet renamed or removed: an exit in between (the
 * model's prof_oom(), while a writer streams its output) removes them,
 * so no half-written file is left beside the target.  The command is
 * single-threaded. */
static struct outfile *pending;

static void remove_pending(void)
{
	for (struct outfile *o = pending; o; o = o->next)
		if (o->tmp)
			unlink(o->tmp);
}

static void pend(struct outfile *o)
{
	static int registered;
	if (!registered)
		registered = atexit(remove_pending) == 0;
	o->next = pending;
	pending = o;
}

static void unpend(struct outfile *o)
{
	for (struct outfile **at = &pending; *at; at = &(*at)->next)
		if (*at == o) {
			*at = o->next;
			return;
		}
}

/* mkostemp creates 0600; the output should get the usual 0666 & ~umask
 * (the command is single-threaded, so reading the umask is safe). */
static mode_t umask_now(void)
{
	mode_t m = umask(0);
	umask(m);
	return m;
}

static struct outfile *fail(struct outfile *o, char *err, size_t errlen, const char *path)
{
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	out_abort(o);
	return NULL;
}

struct outfile *out_open(const char *path, char *err, size_t errlen)
{
	struct outfile *o = prof_xcalloc(1, sizeof *o);
	if (!path || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return o;
	}
	struct stat st;
	int rc = stat(path, &st);
	if (rc == 0 && !S_ISREG(st.st_mode)) {
		o->target = prof_xstrdup(path);
		o->fp = fopen(path, "we");
		return o->fp ? o : fail(o, err, errlen, path);
	}
	if (rc != 0 && errno != ENOENT)
		return fail(o, err, errlen, path);
	o->target = realpath(path, NULL);
	if (!o->target && errno != ENOENT)
		return fail(o, err, errlen, path);
	if (!o->target)
		o->target = prof_xstrdup(path);
	size_t n = strlen(o->target) + 16;
	o->tmp = prof_xcalloc(n, 1);
	snprintf(o->tmp, n, "%s.tmp-XXXXXX", o->target);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return fail(o, err, errlen, path);
	}
	pend(o);
	(void)fchmod(fd, 0666 & ~umask_now());
	if (!(o->fp = fdopen(fd, "w"))) {
		close(fd);
		return fail(o, err, errlen, path);
	}
	return o;
}

/* The directory the temporary file of path would go to (out_open():
 * beside the target, links resolved), malloc'd. */
static char *dir_of(const char *path)
{
	char *real = realpath(path, NULL);
	char *dir = prof_xstrdup(real ? real : path);
	char *slash = strrchr(dir, '/');
	free(real);
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = '\0'; /* "/x" -> "/" */
	return dir;
}

int out_check(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int ok;
	if (!path || strcmp(path, "-") == 0)
		return 0;
	int found = stat(path, &st) == 0;
	if (found && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		ok = 0;
	} else if (found && !S_ISREG(st.st_mode)) {
		ok = access(path, W_OK) == 0; /* written in place */
	} else if (found || errno == ENOENT) {
		char *dir = dir_of(path);
		ok = access(dir, W_OK | X_OK) == 0;
		free(dir);
	} else {
		ok = 0;
	}
	if (!ok)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return ok ? 0 : -1;
}

FILE *out_fp(struct outfile *o)
{
	return o->fp;
}

/* fsync that tolerates what cannot be synced (devices, pipes, ttys). */
static int sync_fd(int fd)
{
	return fsync(fd) == 0 || errno == EINVAL || errno == EROFS || errno == ENOTTY ? 0 : -1;
}

static int sync_dir(const char *target)
{
	char *dir = prof_xstrdup(target);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd >= 0 ? sync_fd(fd) : -1;
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

int out_commit(struct outfile *o, char *err, size_t errlen)
{
	const char *name = o->target ? o->target : "standard output";
	int rc = fflush(o->fp) == 0 && !ferror(o->fp) ? 0 : -1;
	if (rc == 0 && o->target)
		rc = sync_fd(fileno(o->fp));
	if (o->fp != stdout) {
		if (fclose(o->fp) != 0 && rc == 0)
			rc = -1;
		o->fp = NULL;
	}
	if (rc == 0 && o->tmp) {
		rc = rename(o->tmp, o->target);
		if (rc == 0) {
			free(o->tmp);
			o->tmp = NULL;
			sync_dir(o->target); /* the data is there; only durability is at stake */
		}
	}
	if (rc != 0)
		snprintf(err, errlen, "cannot write %s: %s", name, strerror(errno ? errno : EIO));
	out_abort(o);
	return rc;
}

void out_abort(struct outfile *o)
{
	if (!o)
		return;
	int e = errno;
	unpend(o);
	if (o->fp && o->fp != stdout)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->target);
	free(o);
	errno = e;
}
