/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the msharefs tests share: includes, paths, fallback definitions for
 * older libc headers, the errno and mapping assertions, the data patterns,
 * and small helpers for objects, child processes and /proc numbers.
 * Include it instead of kselftest_harness.h.
 *
 * Regions are made, opened, attached and inspected with libmshare
 * (lib/mshare.h), like any program would; only what tests the kernel's
 * interface byte by byte goes around it (create_mapping() sends any
 * struct mshare_create, open(2) and mmap(2) take any flags).
 */
#ifndef MSHARE_TEST_H
#define MSHARE_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/msharefs.h>

#include "kselftest_harness.h"
#include "mshare.h"

/*
 * The TEST_F wrapper of this harness reads its "child" variable after the
 * longjmp() of a failed ASSERT; GCC may assume it still holds its value from
 * before fork() and warns (-Wclobbered). When it does, a failed ASSERT
 * aborts the test process instead of running the teardown: the test is
 * still reported as failed, and the mounts it made die with its private
 * mount namespace (see private_mount_ns() in msharefs_fs_test.c). The fix
 * belongs in the harness ("child" volatile); silence the warning here.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wclobbered"
#endif

#ifndef MSHARE_MAGIC
#define MSHARE_MAGIC		MSHARE_FS_MAGIC
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE		0x08
#endif
/*
 * The end of the user address space a program gets without asking for
 * more: 47 bits on x86_64 (4-level paging, and 5-level without a hint
 * above it), 48 on arm64 with 48-bit virtual addresses.
 */
#ifdef __aarch64__
#define USER_VA_END		(1UL << 48)
#else
#define USER_VA_END		(1UL << 47)
#endif

/*
 * What the suite tests that only x86_64 has: soft-dirty bits (6.12's
 * arm64 has none) and protection keys (arm64's need POE, which the test
 * kernels leave out and QEMU 7.2 does not emulate: the pkey system calls
 * are ENOSYS there). Their tests skip elsewhere with a reason that starts
 * "x86-only:", the one skip tests/allowed-skips allows them.
 */
#ifdef __x86_64__
#define HAVE_PKEYS		1
#define SKIP_UNLESS_X86(what)	do { } while (0)
#else
#define HAVE_PKEYS		0
#define SKIP_UNLESS_X86(what)	SKIP(return, "x86-only: %s", what)
#endif

/* x86's; elsewhere (arm64) the bit is no flag, and must be refused too. */
#ifndef MAP_32BIT
#define MAP_32BIT		0x40
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT		26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB		(21U << MAP_HUGE_SHIFT)
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/* Sizes, protections and flags the tests use everywhere. */
#define PG		4096UL
#define HPAGE		(2UL << 20)
#define RW		(PROT_READ | PROT_WRITE)
#define ANON		(MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS)
#define FILEMAP		(MAP_SHARED | MAP_FIXED)

/* A disk file system in the guest, for objects backed by regular files. */
#define DISK_DIR	"/mnt/disk"

#define MSHARE_DIR	"/sys/fs/mshare"
#define INFO_NAME	"mshare_info"
#define INFO_PATH	MSHARE_DIR "/" INFO_NAME
#define NOBODY		65534U

/*
 * @call must fail with errno @err. ASSERT_FAILS_MSG() adds a printf-style
 * note for when @call alone does not say which case failed.
 */
#define __ASSERT_FAILS(err, call, what, fmt, ...) do {			\
	int _want = (err), _err;					\
	long _ret;							\
									\
	errno = 0;							\
	_ret = (long)(call);						\
	_err = errno;							\
	ASSERT_TRUE(_ret == -1 && _err == _want)			\
		TH_LOG("%s gave %ld, errno %d (%s); wanted %s" fmt,	\
		       what, _ret, _err, strerror(_err),		\
		       strerror(_want), ##__VA_ARGS__);			\
} while (0)

#define ASSERT_FAILS(err, call)	__ASSERT_FAILS(err, call, #call, "")
#define ASSERT_FAILS_MSG(err, call, fmt, ...)				\
	__ASSERT_FAILS(err, call, #call, fmt, ##__VA_ARGS__)

/* @call must return 0. */
#define ASSERT_OK(call) do {						\
	long _r = (long)(call);						\
									\
	ASSERT_EQ(0L, _r) TH_LOG("%s: %s", #call, strerror(errno));	\
} while (0)

/* mmap()-like @call must succeed; its result goes to @p. */
#define ASSERT_MAPS(p, call) do {					\
	__typeof__(p) _m = (call);					\
									\
	ASSERT_TRUE((void *)_m != MAP_FAILED)				\
		TH_LOG("%s: %s", #call, strerror(errno));		\
	(p) = _m;							\
} while (0)

/* ---- data patterns ------------------------------------------------------ */

/* Seed of "all zeros" for the pattern helpers. */
#define ZERO		(-1)

/* The byte at @i of pattern @seed: differs between pages and seeds. */
static inline char pat(int seed, size_t i)
{
	if (seed == ZERO)
		return 0;
	return (char)(seed * 37 + (i >> 12) * 11 + (i & 0xff));
}

/* Fill @len bytes at @p with bytes @from... of pattern @seed. */
static inline void fill_from(char *p, size_t len, int seed, size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, from + i);
}

static inline void fill(char *p, size_t len, int seed)
{
	fill_from(p, len, seed, 0);
}

/*
 * Index of the first of @len bytes at @p that is not bytes @from... of
 * pattern @seed, or -1.
 */
static inline long mismatch_from(const char *p, size_t len, int seed,
				 size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, from + i))
			return i;
	return -1;
}

static inline long mismatch(const char *p, size_t len, int seed)
{
	return mismatch_from(p, len, seed, 0);
}

/* Index of the first byte of file @fd at @off that is not @seed, or -1. */
static inline long file_mismatch(int fd, off_t off, size_t len, int seed)
{
	char *buf = malloc(len);
	long ret = -2;

	if (buf && pread(fd, buf, len, off) == (ssize_t)len)
		ret = mismatch(buf, len, seed);
	free(buf);
	return ret;
}

#define ASSERT_PATTERN_FROM(p, len, seed, from) do {			\
	const char *_p = (p);						\
	int _seed = (seed);						\
	long _at = mismatch_from(_p, len, _seed, from);			\
									\
	ASSERT_EQ(-1L, _at) TH_LOG("pattern %d at %p differs at +%#lx", \
				   _seed, _p, _at);			\
} while (0)

#define ASSERT_PATTERN(p, len, seed) ASSERT_PATTERN_FROM(p, len, seed, 0)

/* ---- files and /proc ---------------------------------------------------- */

/* Read a small file into @buf and NUL-terminate it. */
static inline ssize_t read_small(int dirfd, const char *name, char *buf,
				 size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Write string @s to file @path: 0 or -1. */
static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/*
 * The alignment, from mshare_info @name under @dirfd (an absolute path
 * ignores @dirfd): decimal digits and a newline, nothing else. 0 if the
 * file is missing or malformed.
 */
static inline unsigned long read_align_at(int dirfd, const char *name)
{
	unsigned long long v;
	char buf[64], *end;

	if (read_small(dirfd, name, buf, sizeof(buf)) <= 0 ||
	    buf[0] < '0' || buf[0] > '9')
		return 0;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || strcmp(end, "\n") || v > LLONG_MAX)
		return 0;
	return v;
}

/* The alignment of the instance on /sys/fs/mshare; 0 if unreadable. */
static inline unsigned long read_align(void)
{
	return mshare_alignment(MSHARE_DIR);
}

static inline bool is_msharefs(const char *path)
{
	struct statfs sfs;

	return !statfs(path, &sfs) && sfs.f_type == MSHARE_MAGIC;
}

/*
 * Field @key (in kB) of the entry of /proc/self/@file (smaps or
 * numa_maps style) that starts at @addr; -1 if there is none.
 */
static inline long smaps_field(const char *file, void *addr, const char *key)
{
	char path[64], line[512], start[32];
	size_t klen = strlen(key);
	bool in = false;
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strchr("0123456789abcdef", line[0]) && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = !strncmp(line, start, strlen(start));
			continue;
		}
		if (in && !strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* A /proc/meminfo field in KiB, or -1. */
static inline long meminfo_kb(const char *key)
{
	return mshare_proc_value("/proc/meminfo", key);
}

/*
 * A /proc/meminfo field, exact: the per-CPU deltas of the vmstat counters
 * (hundreds of kB on the test machine) are folded in first.
 */
static inline long meminfo_exact_kb(const char *key)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1\n", 2) != 2)
			ksft_print_msg("stat_refresh: %s\n", strerror(errno));
		close(fd);
	}
	return meminfo_kb(key);
}

/*
 * Free pages parked on the per-CPU lists (not in MemFree), in KiB, from the
 * "count:" lines of /proc/zoneinfo; -1 if unreadable.
 */
static inline long pcp_free_kb(void)
{
	char line[128];
	long pages = 0, n;
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &n) == 1)
			pages += n;
	fclose(f);
	return pages * (getpagesize() / 1024);
}

/* Free memory in KiB: MemFree plus the per-CPU free lists. */
static inline long free_kb(void)
{
	long v = meminfo_kb("MemFree"), pcp = pcp_free_kb();

	return v < 0 || pcp < 0 ? -1 : v + pcp;
}

/*
 * Unlink the entries of directory @path named "@tag-@pid-...": what the
 * tests of process @pid left there.
 */
static inline void unlink_tagged(const char *path, const char *tag, pid_t pid)
{
	char prefix[32];
	struct dirent *d;
	DIR *dir;

	snprintf(prefix, sizeof(prefix), "%s-%d-", tag, pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, prefix, strlen(prefix)))
			unlinkat(dirfd(dir), d->d_name, 0);
	closedir(dir);
}

static inline int drop_caches(void)
{
	sync();
	return write_str("/proc/sys/vm/drop_caches", "3\n");
}

/*
 * Give back what the slab caches hold but nobody uses: empty slabs,
 * per-CPU partial slabs and, with KASAN, the freed objects waiting in its
 * quarantine. Best effort: needs SLUB's sysfs files.
 */
static inline void shrink_slabs(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir("/sys/kernel/slab");

	if (!d)
		return;
	while ((de = readdir(d))) {
		/* Aliases are symbolic links to the caches. */
		if (de->d_name[0] == '.' || de->d_type == DT_LNK)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 de->d_name);
		if (write_str(path, "1"))
			ksft_print_msg("%s: %s\n", path, strerror(errno));
	}
	closedir(d);
}

/* ---- regions and objects ------------------------------------------------ */

/*
 * MSHAREFS_CREATE_MAPPING with exactly these fields, in the order of struct
 * mshare_create: an object of @backing (a file, or -1). mshare_map() of
 * libmshare adds the flags every object needs; the tests of the interface
 * need to leave them out.
 */
static inline int create_mapping(int fd, __u64 roff, __u64 size, __u64 off,
				 __u32 prot, __u32 flags, int backing)
{
	struct mshare_create mc = {
		.region_offset	= roff,
		.size		= size,
		.offset		= off,
		.prot		= prot,
		.flags		= flags,
		.fd		= backing,
	};

	return ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc);
}

/* A memfd of @size bytes, or -1. */
static inline int memfd_sized(const char *name, unsigned int flags,
			      unsigned long size)
{
	int fd = memfd_create(name, flags);

	if (fd >= 0 && ftruncate(fd, size)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- child processes ---------------------------------------------------- */

/* Wait for @pid; its exit code, 128 + signal, or -1. */
static inline int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* Fork; the child runs @fn(@arg) and exits with its result. Its pid. */
static inline pid_t fork_run(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

/*
 * Run @fn(@arg) in a child (without core dumps). Its exit status, 128 +
 * the signal that killed it, or -1.
 */
static inline int run_child(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_CORE, &none);
		_exit(fn(arg));
	}
	return wait_exit(pid);
}

/*
 * Child processes must not use ASSERT_* (a failure would run the
 * fixture's teardown in the child): they report and exit non-zero.
 * FAILED(cond) is true, after a message, when @cond does not hold.
 */
#define FAILED(cond) child_failed(cond, #cond, __func__, __LINE__)

static inline bool child_failed(bool ok, const char *what, const char *fn,
				int line)
{
	if (!ok)
		fprintf(stderr,
			"# child %d, uid %d: %s:%d: %s (errno %d, %s)\n",
			getpid(), getuid(), fn, line, what, errno,
			strerror(errno));
	return !ok;
}

/* Drop every privilege to @uid/@gid, with no supplementary groups. */
static inline int become_user(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid))
		return -1;
	return 0;
}

static inline int become_nobody(void)
{
	return become_user(NOBODY, NOBODY);
}

#endif /* MSHARE_TEST_H */
