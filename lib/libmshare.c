// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libmshare: see mshare.h and libmshare(3).
 *
 * Each function is a thin layer over one or two system calls. The only
 * parsing is of text the kernel writes: mshare_info (decimal and a
 * newline) and the "key:\tvalue" lines of /proc files.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mshare.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define EXPORT	__attribute__((visibility("default")))

/* ---- /proc text ------------------------------------------------------ */

/*
 * Parse "@key:<blanks><number>" at the start of @line (@len bytes, not
 * NUL-terminated): true and *@v if it matches. Decimal, or hexadecimal
 * after 0x; a negative number is refused.
 */
static bool match_line(const char *line, size_t len, const char *key,
		       size_t klen, int64_t *v)
{
	uint64_t n = 0;
	unsigned int base = 10, d;
	size_t i, digits = 0;

	if (len <= klen || memcmp(line, key, klen) || line[klen] != ':')
		return false;
	for (i = klen + 1; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i + 1 < len && line[i] == '0' && line[i + 1] == 'x') {
		base = 16;
		i += 2;
	}
	for (; i < len; i++) {
		char c = line[i];

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		if (n > ((uint64_t)INT64_MAX - d) / base)
			return false;
		n = n * base + d;
		digits++;
	}
	if (!digits)
		return false;
	*v = n;
	return true;
}

EXPORT int64_t mshare_proc_value(const char *path, const char *key)
{
	size_t klen = strlen(key), have = 0, start, i;
	char buf[4096];
	bool skip = false;	/* in the rest of a line longer than buf */
	int64_t v = -1;
	ssize_t n;
	int fd, err = ENOENT;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		have += n;
		start = 0;
		for (i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			if (!skip && match_line(buf + start, i - start, key,
						klen, &v)) {
				err = 0;
				goto out;
			}
			skip = false;
			start = i + 1;
		}
		if (!n) {
			if (!skip && start < have &&
			    match_line(buf + start, have - start, key, klen, &v))
				err = 0;
			break;
		}
		/* Keep the unfinished line; a line that fills buf is skipped. */
		if (start == 0 && have == sizeof(buf)) {
			skip = true;
			have = 0;
			continue;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
out:
	close(fd);
	if (err) {
		errno = err;
		return -1;
	}
	return v;
}

EXPORT int64_t mshare_fdinfo_value(int fd, const char *key)
{
	char path[64], name[64];

	if ((size_t)snprintf(name, sizeof(name), "mshare-%s", key) >=
	    sizeof(name)) {
		errno = ENOENT;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return mshare_proc_value(path, name);
}

/* ---- the mount ------------------------------------------------------- */

EXPORT const char *mshare_mount_dir(void)
{
	const char *env = getenv("MSHARE_MOUNT");

	return env && *env ? env : MSHARE_DEFAULT_DIR;
}

EXPORT int mshare_is_msharefs(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return -1;
	return sfs.f_type == MSHARE_FS_MAGIC;
}

EXPORT uint64_t mshare_alignment(const char *dir)
{
	char path[4096], buf[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/" MSHARE_INFO_NAME,
			     dir ? dir : mshare_mount_dir()) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (buf[0] < '0' || buf[0] > '9' || errno || strcmp(end, "\n") || !v) {
		errno = EINVAL;
		return 0;
	}
	return v;
}

/* ---- regions --------------------------------------------------------- */

/*
 * Unlink @name under @dirfd if it is still the file open on @fd: a name
 * removed and made again meanwhile by someone else is theirs.
 */
static void unlink_own(int dirfd, const char *name, int fd)
{
	struct stat mine, now;

	if (!fstat(fd, &mine) && !fstatat(dirfd, name, &now,
					  AT_SYMLINK_NOFOLLOW) &&
	    mine.st_dev == now.st_dev && mine.st_ino == now.st_ino)
		unlinkat(dirfd, name, 0);
}

EXPORT int mshare_region_create(int dirfd, const char *name, mode_t mode,
				uint64_t size)
{
	int fd, err;

	/*
	 * Mode 0 first, then the final mode: the region is never open to
	 * more than @mode, and the umask (process-wide, so not ours to
	 * change in a library) does not apply.
	 */
	fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (mshare_is_msharefs(fd) != 1) {
		errno = ENOTTY;
		goto fail;
	}
	if (fchmod(fd, mode & 07777))
		goto fail;
	if (size && ftruncate(fd, size))
		goto fail;
	return fd;
fail:
	err = errno;
	unlink_own(dirfd, name, fd);
	close(fd);
	errno = err;
	return -1;
}

EXPORT int mshare_region_open(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, flags | O_CLOEXEC);
	struct stat st;
	int err = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!S_ISREG(st.st_mode) || mshare_is_msharefs(fd) != 1)
		err = ENOTTY;
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

EXPORT int mshare_region_set_size(int fd, uint64_t size)
{
	if (size > INT64_MAX) {
		errno = EINVAL;
		return -1;
	}
	return ftruncate(fd, size);
}

EXPORT int mshare_region_info(int fd, struct mshare_info *info)
{
	struct mshare_info i;
	ssize_t n = pread(fd, &i, sizeof(i), 0);

	if (n < 0)
		return -1;
	if (n != sizeof(i)) {
		errno = EIO;
		return -1;
	}
	*info = i;
	return 0;
}

EXPORT int mshare_region_remove(int dirfd, const char *name)
{
	return unlinkat(dirfd, name, 0);
}

/* ---- objects --------------------------------------------------------- */

EXPORT int mshare_map(int fd, uint64_t region_offset, uint64_t size,
		      int prot, int flags, int file_fd, uint64_t file_offset)
{
	struct mshare_create mc = {
		.region_offset	= region_offset,
		.size		= size,
		.offset		= file_offset,
		.prot		= prot,
		.flags		= flags | MAP_SHARED | MAP_FIXED |
				  (file_fd < 0 ? MAP_ANONYMOUS : 0),
		.fd		= file_fd,
	};

	return ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc);
}

EXPORT int mshare_map_anon(int fd, uint64_t region_offset, uint64_t size)
{
	return mshare_map(fd, region_offset, size, PROT_READ | PROT_WRITE, 0,
			  -1, 0);
}

EXPORT int mshare_unmap(int fd, uint64_t region_offset, uint64_t size)
{
	struct mshare_unmap mu = {
		.region_offset	= region_offset,
		.size		= size,
	};

	return ioctl(fd, MSHAREFS_UNMAP, &mu);
}

/* ---- attaching ------------------------------------------------------- */

EXPORT void *mshare_attach(int fd, void *addr, int prot, int flags)
{
	struct mshare_info info;

	if (mshare_region_info(fd, &info))
		return MAP_FAILED;
	if (!info.size) {
		errno = EINVAL;		/* nothing to attach yet */
		return MAP_FAILED;
	}
	if (info.size > SIZE_MAX) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return mmap(addr, info.size, prot, MAP_SHARED | flags, fd, 0);
}

/* Attach at @start exactly, or fail with EEXIST. */
static void *attach_at(int fd, uint64_t start, uint64_t size, int prot)
{
	void *want = (void *)(uintptr_t)start;
	void *p = mshare_attach(fd, want, prot, MAP_FIXED_NOREPLACE);

	/* Kernels before 4.17 take the flag as a hint. */
	if (p != MAP_FAILED && p != want) {
		munmap(p, size);
		errno = EEXIST;
		return MAP_FAILED;
	}
	return p;
}

EXPORT void *mshare_attach_start(int fd, int prot)
{
	struct mshare_info info;
	void *p;

	if (mshare_region_info(fd, &info))
		return MAP_FAILED;
	if (info.start)
		return attach_at(fd, info.start, info.size, prot);
	p = mshare_attach(fd, NULL, prot, 0);
	if (p == MAP_FAILED)
		return p;
	/*
	 * Another process may have attached first, elsewhere: its address
	 * is the region's start, and where pointers in it point.
	 */
	if (mshare_region_info(fd, &info) ||
	    info.start == (uintptr_t)p)
		return p;
	munmap(p, info.size);
	return attach_at(fd, info.start, info.size, prot);
}

EXPORT int mshare_detach(void *addr, uint64_t size)
{
	return munmap(addr, size);
}

/* ---- inspecting ------------------------------------------------------ */

static void object_parse(struct mshare_object *o, char *v)
{
	char prot[4] = "";
	int n = 0;

	memset(o, 0, sizeof(*o));
	if (sscanf(v, "%" SCNx64 " %" SCNx64 " %3s %" SCNx64 " %n",
		   &o->region_offset, &o->size, prot, &o->file_offset, &n) < 4)
		n = 0;
	o->prot = (prot[0] == 'r' ? PROT_READ : 0) |
		  (prot[1] == 'w' ? PROT_WRITE : 0);
	v += n;
	v[strcspn(v, "\n")] = '\0';
	o->backing = n ? v : NULL;
}

/* Each "mshare-@key:" line of @fd's fdinfo, to @fn with its value. */
static int fdinfo_lines(int fd, const char *key,
			int (*fn)(char *value, void *arg), void *arg)
{
	char path[64], *line = NULL;
	size_t cap = 0, klen = strlen(key);
	int ret = 0, err;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!ret && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "mshare-", 7) || strncmp(line + 7, key, klen) ||
		    line[7 + klen] != ':')
			continue;
		ret = fn(line + 8 + klen + strspn(line + 8 + klen, " \t"), arg);
	}
	err = errno;
	if (!ret && ferror(f)) {
		ret = -1;
		err = err ?: EIO;
	}
	free(line);
	fclose(f);
	errno = err;
	return ret;
}

struct object_list {
	struct mshare_object *objs;
	size_t n;
};

static int object_add(char *value, void *arg)
{
	struct object_list *l = arg;
	struct mshare_object *objs, *o;

	objs = realloc(l->objs, (l->n + 1) * sizeof(*objs));
	if (!objs)
		return -1;
	l->objs = objs;
	o = &objs[l->n];
	object_parse(o, value);
	if (!o->backing)
		return 0;	/* a line this library does not understand */
	o->backing = strdup(o->backing);
	if (!o->backing)
		return -1;
	l->n++;
	return 0;
}

EXPORT void mshare_objects_free(struct mshare_object *objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(objs[i].backing);
	free(objs);
}

EXPORT int mshare_region_objects(int fd, struct mshare_object **objs,
				 size_t *n)
{
	struct object_list l = { NULL, 0 };
	int err;

	if (fdinfo_lines(fd, "object", object_add, &l)) {
		err = errno;
		mshare_objects_free(l.objs, l.n);
		errno = err;
		return -1;
	}
	if (!l.n) {
		free(l.objs);
		l.objs = NULL;
	}
	*objs = l.objs;
	*n = l.n;
	return 0;
}

EXPORT int mshare_region_stats(int fd, struct mshare_stats *st)
{
	static const char *const keys[] = {
		"size", "start", "attachments", "rss", "pgtables", "objects",
	};
	uint64_t *field[] = {
		&st->size, &st->start, &st->attachments, &st->rss,
		&st->pgtables, &st->objects,
	};
	struct mshare_info info;
	int64_t v;
	size_t i;

	if (mshare_region_info(fd, &info))
		return -1;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = mshare_fdinfo_value(fd, keys[i]);
		if (v < 0 && errno != ENOENT)
			return -1;
		*field[i] = v < 0 ? MSHARE_UNKNOWN : (uint64_t)v;
	}
	/* What read(2) tells is there on every kernel with msharefs. */
	st->size = info.size;
	st->start = info.start;
	return 0;
}
