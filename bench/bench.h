/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the msharefs benchmarks: the kinds of shared memory
 * they compare, timing, and what libmshare does not do (the hugetlb pool,
 * aligned mappings, touching pages). Regions and /proc numbers come from
 * libmshare, like in any program.
 */
#ifndef MSHARE_BENCH_H
#define MSHARE_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>
#include "mshare.h"

#define MSHARE_DIR	"/sys/fs/mshare"
#define HUGE_DIR	"/dev/hugepages"
#define THP_SHMEM	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"
#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define GIB		(1UL << 30)
#define KIB		1024L

/* The shared memory the benchmarks compare. */
enum kind { K_NONE, K_MSHARE, K_MEMFD, K_HUGETLB, K_THP, K_MSHARE_THP,
	    K_NKINDS };

static const char *const kind_names[K_NKINDS] = {
	"none", "mshare", "memfd", "hugetlb", "thp", "mshare-thp",
};

static inline int kind_parse(const char *s)
{
	int k;

	for (k = 0; k < K_NKINDS; k++)
		if (!strcmp(s, kind_names[k]))
			return k;
	return -1;
}

static inline void die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	fprintf(stderr, "error: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
	exit(1);
}

static inline double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "64M", "1G", "4096": bytes. */
static inline unsigned long parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	switch (*end) {
	case 'G': case 'g': return v << 30;
	case 'M': case 'm': return v << 20;
	case 'K': case 'k': return v << 10;
	default: return v;
	}
}

/*
 * A /proc/meminfo value in kB, exact: the per-CPU vmstat deltas are
 * folded in first, else PageTables lags by hundreds of kB.
 */
static inline long meminfo_kb(const char *key)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1\n", 2) != 2)
			fprintf(stderr, "stat_refresh: %s\n", strerror(errno));
		close(fd);
	}
	return mshare_proc_value("/proc/meminfo", key);
}

/* Same, without the refresh: cheap enough to call before every fork. */
static inline long meminfo_kb_fast(const char *key)
{
	return mshare_proc_value("/proc/meminfo", key);
}

static inline long vmpte_kb(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return mshare_proc_value(path, "VmPTE");
}

static inline int write_file(const char *path, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int fd, n, ret;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, buf, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

static inline int read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = read(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf = (char *)buf + n;
		len -= n;
	}
	return 0;
}

static inline int write_full(int fd, const void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf = (const char *)buf + n;
		len -= n;
	}
	return 0;
}

/* An msharefs region of one alignment unit, made anew; its fd (O_RDWR). */
static inline int region_create(const char *path)
{
	unlink(path);
	return mshare_region_create(AT_FDCWD, path, 0600,
				    mshare_alignment(NULL));
}

/*
 * Make sure the hugetlb pool holds at least @pages free 2 MiB pages;
 * returns the number it had before (to restore), or -1.
 */
static inline long hugepages_reserve(unsigned long pages)
{
	long total = mshare_proc_value("/proc/meminfo", "HugePages_Total");
	long free = mshare_proc_value("/proc/meminfo", "HugePages_Free");

	if (total < 0 || free < 0)
		return -1;
	if ((unsigned long)free < pages)
		write_file("/proc/sys/vm/nr_hugepages", "%lu\n",
			   total + pages - free);
	if ((unsigned long)mshare_proc_value("/proc/meminfo", "HugePages_Free") < pages)
		return -1;
	return total;
}

static inline void hugepages_restore(long total)
{
	if (total >= 0)
		write_file("/proc/sys/vm/nr_hugepages", "%ld\n", total);
}

/*
 * Map @size bytes of @fd MAP_SHARED at a 1 GiB-aligned address, so that
 * hugetlb's PMD-table sharing applies (it needs whole PUD-sized, aligned
 * ranges at the same alignment in every process).
 */
static inline void *map_gib_aligned(int fd, unsigned long size, int prot)
{
	unsigned long span = size + GIB, a;
	char *r = mmap(NULL, span, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *p;

	if (r == MAP_FAILED)
		return MAP_FAILED;
	a = ((unsigned long)r + GIB - 1) & ~(GIB - 1);
	p = mmap((void *)a, size, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		munmap(r, span);
		return MAP_FAILED;
	}
	if (a > (unsigned long)r)
		munmap(r, a - (unsigned long)r);
	if ((unsigned long)r + span > a + size)
		munmap((void *)(a + size), (unsigned long)r + span - a - size);
	return p;
}

/* Write one byte in every 4 KiB page: allocates what is not there. */
static inline void touch_write(char *p, unsigned long size)
{
	unsigned long i;

	for (i = 0; i < size; i += PAGE)
		((volatile char *)p)[i] = (char)(i >> 12);
}

/* Read one byte of every 4 KiB page; the sum keeps the loads. */
static inline unsigned long touch_read(const char *p, unsigned long size)
{
	unsigned long i, sum = 0;

	for (i = 0; i < size; i += PAGE)
		sum += ((const volatile char *)p)[i];
	return sum;
}

/*
 * Touch 32 KiB of stack so that a forked child copies it on write now,
 * not inside a measured section.
 */
static void __attribute__((noinline, unused)) warm_stack(void)
{
	volatile char buf[32 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 512)
		buf[i] = 1;
}

#endif /* MSHARE_BENCH_H */
