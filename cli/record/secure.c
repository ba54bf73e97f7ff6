/*
 * secure.c - whether the dynamic loader will run a file in secure-execution
 * mode, where it ignores LD_PRELOAD (ld.so(8): a path with a slash is
 * dropped), so the agent cannot enter it.
 *
 * The loader's test is the kernel's AT_SECURE, which exec sets when the
 * program gains privilege (security/commoncap.c, cap_bprm_creds_from_file):
 *  - its effective user or group is not the real one: a set-user-ID file
 *    owned by another user, a set-group-ID file (with group execute: without
 *    it the bit marks mandatory locking) of another group, or a caller
 *    already running with euid != uid;
 *  - for a caller whose real user is not root, file capabilities
 *    (security.capability) with the effective flag or a permitted set: the
 *    process's permitted capabilities grow.  Root gains nothing it did not
 *    have, and is not put in secure mode by them.
 * Neither applies on a file system mounted nosuid, nor under no_new_privs,
 * where the kernel grants neither.  Nor to a script: the kernel runs its
 * interpreter without the script's bits (the interpreter is then the
 * program, and the check is not repeated for it: rare enough to be left to
 * the warning after the recording).
 */
#include "record_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

/* The on-disk form of security.capability (linux/capability.h's
 * vfs_cap_data, v2; v3 appends the namespace's root uid).  Little-endian. */
#define CAP_XATTR "security.capability"
#define CAP_REVISION_MASK 0xFF000000u
#define CAP_REVISION_1 0x01000000u
#define CAP_FLAG_EFFECTIVE 0x000001u

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 1 when file's capabilities make exec raise privilege for a caller whose
 * real user is not root: the effective flag, or any permitted capability
 * (words 1 and, from revision 2, 3 of the attribute). */
static int caps_raise(const char *file)
{
	unsigned char v[24];
	ssize_t n = getxattr(file, CAP_XATTR, v, sizeof v);
	if (n < 12)
		return 0;
	uint32_t magic = le32(v);
	uint32_t permitted = le32(v + 4);
	if ((magic & CAP_REVISION_MASK) != CAP_REVISION_1 && n >= 20)
		permitted |= le32(v + 12);
	return (magic & CAP_FLAG_EFFECTIVE) || permitted != 0;
}

static int is_script(const char *file)
{
	char head[2];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	return n == 2 && head[0] == '#' && head[1] == '!';
}

const char *secure_exec_reason(const char *file, const struct stat *st)
{
	if (geteuid() != getuid() || getegid() != getgid())
		return "would run in secure-execution mode (profil's effective user or group "
		       "is not its real one)";
	struct statvfs fs;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ||
	    (statvfs(file, &fs) == 0 && (fs.f_flag & ST_NOSUID)) || is_script(file))
		return NULL;
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
		return "is set-user-ID";
	if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && st->st_gid != getgid())
		return "is set-group-ID";
	if (getuid() != 0 && caps_raise(file))
		return "has file capabilities";
	return NULL;
}
