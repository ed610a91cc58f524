// SPDX-License-Identifier: GPL-2.0
/*
 * msharefs regions and the rest of memory management: memory cgroup
 * charging and OOM (in a cgroup and guest-wide), OOM badness, transparent
 * huge pages and hugetlb objects, swap (zram) and MADV_PAGEOUT, compaction,
 * NUMA (migrate_pages, move_pages, mbind, NUMA balancing), KSM,
 * userfaultfd, core dumps, and what /proc shows of an attachment (maps,
 * smaps, smaps_rollup, status, pagemap, numa_maps) and mincore().
 *
 * Every test checks the data in the region as well as what the kernel
 * reports. Several tests change system settings (shmem THP, NUMA
 * balancing, KSM, core_pattern, swap, cgroups): each restores them in the
 * fixture's teardown, which runs even after a failed assertion.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y and msharefs on /sys/fs/mshare,
 * cgroup2 on /sys/fs/cgroup, zram, two NUMA nodes (numa=fake=2), free
 * 2 MiB hugetlb pages and no swap at the start. The guest-wide OOM test
 * fills all memory of the machine: run it in a test guest only.
 *
 * Build: make -C tests
 * Run:   ./mshare_mm_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include "mshare_test.h"

#include <elf.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/fs.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>

#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)

#define ANON_HUGE	(ANON | MAP_HUGETLB | MAP_HUGE_2MB)

#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101	/* uapi asm-generic/mman-common.h */
#endif

#define CGROOT		"/sys/fs/cgroup"
#define THP_SHMEM	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"
#define NUMA_BAL	"/proc/sys/kernel/numa_balancing"
#define NUMA_DBG	"/sys/kernel/debug/sched/numa_balancing/"
#define KSM_DIR		"/sys/kernel/mm/ksm/"
#define KSM_RUN		KSM_DIR "run"
#define KSM_SCAN	KSM_DIR "pages_to_scan"
#define KSM_SLEEP	KSM_DIR "sleep_millisecs"
#define CORE_PATTERN	"/proc/sys/kernel/core_pattern"
#define ZRAM_DEV	"/dev/zram0"
#define ZRAM_SYS	"/sys/block/zram0"

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE	67
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE		(1 << 1)
#endif

/* The alignment (and size of every region here), from mshare_info. */
static unsigned long A;

/* ---- data ------------------------------------------------------------- */

/* One byte per page, cheap enough for hundreds of MiB under emulation. */
static char page_tag(int seed, size_t pgno)
{
	return (char)(seed * 13 + pgno * 7 + 1);
}

static void tag_pages(char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len / PG; i++)
		p[i * PG] = page_tag(seed, i);
}

static long tag_mismatch(const char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len / PG; i++)
		if (p[i * PG] != page_tag(seed, i))
			return i;
	return -1;
}

/* ---- /proc, sysfs ----------------------------------------------------- */

/*
 * mshare-rss of fdinfo may be "a little behind" (msharefs.rst): the
 * per-CPU batches of the region's counters, 32 pages per CPU here.
 */
#define RSS_SLACK	(1 * MIB)

#define ASSERT_NEAR(want, got, slack) do {				\
	long _w = (long)(want), _g = (long)(got);			\
									\
	ASSERT_TRUE(_g >= _w - (long)(slack) && _g <= _w + (long)(slack)) \
		TH_LOG("%s is %ld, wanted %ld +- %ld", #got, _g, _w,	\
		       (long)(slack));					\
} while (0)

static long read_long(const char *path)
{
	char buf[64];

	if (read_small(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 0);
}

/* The number after "@key " in a flat-keyed file (memory.events); -1. */
static long keyed_long(const char *path, const char *key)
{
	char buf[1024], *p;
	size_t klen = strlen(key);

	if (read_small(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtol(p + klen + 1, NULL, 10);
	return -1;
}

static long smaps_kb(void *addr, const char *key)
{
	return smaps_field("smaps", addr, key);
}

/* The line of /proc/self/@file that starts with address @addr. */
static int proc_line(const char *file, void *addr, char *out, size_t len)
{
	char path[64], start[32], line[1024];
	int found = -1;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	n = snprintf(start, sizeof(start), "%lx", (unsigned long)addr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f))
		if (!strncmp(line, start, n) &&
		    (line[n] == '-' || line[n] == ' ')) {
			snprintf(out, len, "%s", line);
			found = 0;
		}
	fclose(f);
	return found;
}

static long swap_used_kb(void)
{
	return meminfo_kb("SwapTotal") - meminfo_kb("SwapFree");
}

/* ---- children ----------------------------------------------------------- */

/* The OOM killer may take children: the test process is protected. */
static int set_oom_adj(pid_t pid, int adj)
{
	char path[64], val[16];

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", pid);
	snprintf(val, sizeof(val), "%d\n", adj);
	return write_str(path, val);
}

/* Block until a byte arrives on @fd (a child is ready); 0 or -1. */
static int wait_byte(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

/* ---- fixture ---------------------------------------------------------- */

#define SAVED_MAX	8

struct saved {
	char path[96];
	char val[128];
};

/*
 * Every name a test creates in /sys/fs/mshare or /sys/fs/cgroup starts
 * with "mm-PID-", PID being the test process's; settings it changes are
 * saved in @saved. FIXTURE_TEARDOWN_PARENT puts everything back.
 */
FIXTURE(mm) {
	char path[64];		/* the region */
	int fd;			/* O_RDWR */
	pid_t pid;
	char cgroup[96];	/* created cgroup, or "" */
	bool swap_on;		/* zram0 swap enabled by the test */
	int nsaved;
	struct saved saved[SAVED_MAX];
};

/* Write @val to @path after saving its value for the teardown. */
static int set_knob(FIXTURE_DATA(mm) *self, const char *path,
		    const char *val)
{
	struct saved *s;
	char *bracket;

	if (self->nsaved == SAVED_MAX)
		return -1;
	s = &self->saved[self->nsaved];
	if (read_small(AT_FDCWD, path, s->val, sizeof(s->val)) < 0)
		return -1;
	/* "always [never] ..." lists: the selected value is bracketed. */
	bracket = strchr(s->val, '[');
	if (bracket) {
		memmove(s->val, bracket + 1, strlen(bracket));
		*strchr(s->val, ']') = '\0';
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	self->nsaved++;
	return write_str(path, val);
}

static void swap_off(void)
{
	swapoff(ZRAM_DEV);
	write_str(ZRAM_SYS "/reset", "1\n");
}

FIXTURE_SETUP(mm)
{
	static int seq;

	self->fd = -1;
	self->pid = getpid();
	self->cgroup[0] = '\0';
	self->swap_on = false;
	self->nsaved = 0;
	if (A == 0)
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	snprintf(self->path, sizeof(self->path), MSHARE_DIR "/mm-%d-%d",
		 getpid(), seq++);
	self->fd = mshare_region_create(AT_FDCWD, self->path, 0600, A);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
}

FIXTURE_TEARDOWN_PARENT(mm)
{
	int i;

	for (i = self->nsaved - 1; i >= 0; i--)
		write_str(self->saved[i].path, self->saved[i].val);
	if (self->swap_on)
		swap_off();
	if (self->cgroup[0])
		rmdir(self->cgroup);
	unlink_tagged(MSHARE_DIR, "mm", self->pid);
}

static int create_anon(int fd, __u64 roff, __u64 size)
{
	return create_mapping(fd, roff, size, 0, RW, ANON, -1);
}

/*
 * Free the region of the fixture: unlink it and close it. The test
 * process must have detached; the memory goes once the last file
 * reference is dropped, which may take a moment (delayed fput).
 */
static void region_drop(FIXTURE_DATA(mm) *self)
{
	unlink(self->path);
	close(self->fd);
	self->fd = -1;
}

/* ---- memory cgroups ----------------------------------------------------- */

/* Create cgroup mm-PID-@name with memory.max @max; 0 or -1. */
static int cgroup_new(FIXTURE_DATA(mm) *self, const char *name,
		      unsigned long max)
{
	char path[160], val[32];

	if (write_str(CGROOT "/cgroup.subtree_control", "+memory\n"))
		return -1;
	snprintf(self->cgroup, sizeof(self->cgroup), CGROOT "/mm-%d-%s",
		 self->pid, name);
	if (mkdir(self->cgroup, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/memory.max", self->cgroup);
	snprintf(val, sizeof(val), "%lu\n", max);
	if (write_str(path, val))
		return -1;
	/* Only RAM: no swap to spill into, if a swap device were left on. */
	snprintf(path, sizeof(path), "%s/memory.swap.max", self->cgroup);
	write_str(path, "0\n");
	return 0;
}

static long cg_long(FIXTURE_DATA(mm) *self, const char *file)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", self->cgroup, file);
	return read_long(path);
}

static long cg_event(FIXTURE_DATA(mm) *self, const char *key)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/memory.events", self->cgroup);
	return keyed_long(path, key);
}

struct cg_toucher {
	const char *cgroup;
	int fd;			/* the region */
	size_t size;		/* bytes to touch from offset 0 */
	int seed;
};

/* Join the cgroup, attach, tag every page; 0 if all went well. */
static int cg_touch(void *arg)
{
	struct cg_toucher *t = arg;
	char path[160], pid[16];
	char *p;

	snprintf(path, sizeof(path), "%s/cgroup.procs", t->cgroup);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (FAILED(!write_str(path, pid)) ||
	    FAILED(!set_oom_adj(getpid(), 0)))
		return 2;
	p = mshare_attach(t->fd, NULL, RW, 0);
	if (FAILED(p != MAP_FAILED))
		return 3;
	tag_pages(p, t->size, t->seed);
	return tag_mismatch(p, t->size, t->seed) == -1 ? 0 : 4;
}

/* memory.current of the cgroup once it is at most @below, polling 5 s. */
static long cg_settle(FIXTURE_DATA(mm) *self, long below)
{
	long cur = -1;
	int i;

	for (i = 0; i < 50; i++) {
		cur = cg_long(self, "memory.current");
		if (cur >= 0 && cur <= below)
			break;
		usleep(100000);
	}
	return cur;
}

/* Move the calling process into cgroup @dir: 0 or -1. */
static int cg_join(const char *dir)
{
	char path[160], pid[16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	return write_str(path, pid);
}

/*
 * A region's memory is charged to the cgroup the region was sized in, not
 * to the cgroup of the task that faults it in: a sharer cannot make
 * another pay, nor pay for others. The region of the fixture was sized in
 * the root cgroup; a toucher in a cgroup of its own adds nothing there.
 * The data stays after the toucher is gone, and goes with the region.
 */
TEST_F_TIMEOUT(mm, memcg_not_charged_to_toucher, 120)
{
	struct cg_toucher t = { .fd = self->fd, .size = 64 * MIB, .seed = 3 };
	long before, after, left;
	pid_t pid;
	char *p;

	ASSERT_OK(create_anon(self->fd, 0, 128 * MIB));
	ASSERT_OK(cgroup_new(self, "big", 512 * MIB));
	t.cgroup = self->cgroup;
	before = cg_long(self, "memory.current");
	ASSERT_LE(0, before);

	pid = fork_run(cg_touch, &t);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, wait_exit(pid));
	after = cg_long(self, "memory.current");
	TH_LOG("memory.current %ld -> %ld after touching 64 MiB", before,
	       after);
	/* None of the 64 MiB, nor their page tables: the toucher is gone. */
	ASSERT_GE(before + (long)(2 * MIB), after);
	ASSERT_EQ(0, cg_event(self, "oom_kill"));

	/* Still there: the data, read by a process of another cgroup. */
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_EQ(-1, tag_mismatch(p, t.size, t.seed));
	ASSERT_OK(munmap(p, A));

	region_drop(self);
	left = cg_settle(self, before + 4 * MIB);
	TH_LOG("after unlink and close: %ld", left);
	ASSERT_GE(before + (long)(4 * MIB), left);
}

/*
 * A region sized in a cgroup limited to 64 MiB, 256 MiB of it touched by
 * a task of that cgroup: the cgroup's OOM killer takes the toucher,
 * nothing is charged beyond the limit, and the charge stays with the
 * region until it is freed.
 */
TEST_F_TIMEOUT(mm, memcg_oom_in_cgroup, 120)
{
	struct cg_toucher t = { .size = 256 * MIB, .seed = 5 };
	long peak, cur, left, kills;
	pid_t pid;
	int st;
	char *p;

	ASSERT_OK(cgroup_new(self, "small", 64 * MIB));
	t.cgroup = self->cgroup;
	/* A region of the small cgroup: sized by a task in it. */
	region_drop(self);
	ASSERT_OK(cg_join(self->cgroup));
	self->fd = mshare_region_create(AT_FDCWD, self->path, 0600, A);
	ASSERT_OK(cg_join(CGROOT));
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
	ASSERT_OK(create_anon(self->fd, 0, 256 * MIB));
	t.fd = self->fd;

	pid = fork_run(cg_touch, &t);
	ASSERT_LT(0, pid);
	st = wait_exit(pid);
	kills = cg_event(self, "oom_kill");
	peak = cg_long(self, "memory.peak");
	cur = cg_long(self, "memory.current");
	TH_LOG("toucher status %d, oom_kill %ld, peak %ld, current %ld",
	       st, kills, peak, cur);
	ASSERT_TRUE(st == 128 + SIGKILL || st == 128 + SIGBUS);
	ASSERT_LE(1, kills);
	ASSERT_GE((long)(64 * MIB), peak);
	ASSERT_LE((long)(48 * MIB), peak);
	/* The toucher is gone, the pages it brought in are still charged. */
	ASSERT_LE((long)(48 * MIB), cur);

	/* What it wrote before the limit is there. */
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_EQ(-1, tag_mismatch(p, 16 * MIB, t.seed));
	ASSERT_OK(munmap(p, A));

	region_drop(self);
	left = cg_settle(self, 4 * MIB);
	TH_LOG("after unlink and close: %ld", left);
	ASSERT_GE((long)(4 * MIB), left);
}

/* ---- the OOM killer --------------------------------------------------- */

struct idler {
	int fd;			/* region to attach, or -1 */
	int ready;		/* pipe to say so */
};

/* Attach (or not), tell the parent, wait to be killed. */
static int idle(void *arg)
{
	struct idler *i = arg;
	char *p;

	if (FAILED(!set_oom_adj(getpid(), 0)))
		return 2;
	if (i->fd >= 0) {
		p = mshare_attach(i->fd, NULL, RW, 0);
		if (FAILED(p != MAP_FAILED))
			return 3;
		/* Link the region: the badness must not depend on it. */
		if (FAILED(p[0] == page_tag(7, 0)))
			return 4;
	}
	if (write(i->ready, "r", 1) != 1)
		return 5;
	for (;;)
		pause();
}

static long oom_score(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/oom_score", pid);
	return read_long(path);
}

/*
 * The pages of a region count in the badness of each attached process:
 * 512 MiB make an idle attached process a much better victim than the
 * same process without the attachment.
 */
TEST_F_TIMEOUT(mm, oom_score_counts_region, 120)
{
	struct cg_toucher t = { .fd = self->fd, .size = 512 * MIB,
				.seed = 7 };
	struct idler with = { .fd = self->fd }, without = { .fd = -1 };
	long s_with, s_without, want, total;
	int pfd[2];
	pid_t a, b, toucher;
	char *p;

	ASSERT_OK(create_anon(self->fd, 0, 512 * MIB));
	/* The toucher runs in the root cgroup: no limit. */
	t.cgroup = CGROOT;
	toucher = fork_run(cg_touch, &t);
	ASSERT_LT(0, toucher);
	ASSERT_EQ(0, wait_exit(toucher));
	ASSERT_LE(512 * MIB - RSS_SLACK,
		  (unsigned long)mshare_fdinfo_value(self->fd, "rss"));

	ASSERT_OK(pipe(pfd));
	with.ready = without.ready = pfd[1];
	a = fork_run(idle, &with);
	ASSERT_LT(0, a);
	b = fork_run(idle, &without);
	ASSERT_LT(0, b);
	ASSERT_OK(wait_byte(pfd[0]));
	ASSERT_OK(wait_byte(pfd[0]));

	s_with = oom_score(a);
	s_without = oom_score(b);
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, wait_exit(a));
	ASSERT_EQ(128 + SIGKILL, wait_exit(b));

	/*
	 * oom_score is (1000 + badness in thousandths of RAM + swap) * 2 / 3
	 * (proc_oom_score()).
	 */
	total = meminfo_kb("MemTotal") + meminfo_kb("SwapTotal");
	want = (512 * KIB) * 1000 / total * 2 / 3;
	TH_LOG("oom_score %ld attached, %ld not; 512 MiB is %ld", s_with,
	       s_without, want);
	ASSERT_LE(want * 9 / 10, s_with - s_without);
	ASSERT_GE(want + 10, s_with - s_without);

	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_EQ(-1, tag_mismatch(p, t.size, t.seed));
	ASSERT_OK(munmap(p, A));
}

struct hog {
	int fd;
	__u64 roff;
	size_t size;
	int seed;
};

/*
 * What each hog holds of its own: the memory the last victim gives back
 * when it dies lets the machine go on once every hog is gone (the region
 * still holds all its memory then, and only unlinking it frees that).
 */
#define BALLAST		(32 * MIB)

/* Attach and tag an object page by page until done or killed. */
static int hog(void *arg)
{
	struct hog *h = arg;
	char *p;
	size_t i;

	if (FAILED(!set_oom_adj(getpid(), 0)))
		return 2;
	p = mmap(NULL, BALLAST, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (FAILED(p != MAP_FAILED))
		return 3;
	tag_pages(p, BALLAST, 1);
	p = mshare_attach(h->fd, NULL, RW, 0);
	if (FAILED(p != MAP_FAILED))
		return 3;
	p += h->roff;
	for (i = 0; i < h->size / PG; i++) {
		p[i * PG] = page_tag(h->seed, i);
		if (!(i % 4096))
			sched_yield();
	}
	return tag_mismatch(p, h->size, h->seed) == -1 ? 0 : 4;
}

/* MemAvailable once it is at least @want, polling for 10 s. */
static long avail_settle(long want)
{
	long v = -1;
	int i;

	for (i = 0; i < 100; i++) {
		drop_caches();
		v = meminfo_exact_kb("MemAvailable");
		if (v >= want)
			break;
		usleep(100000);
	}
	return v;
}

#define HOGS	4

/*
 * Four attached processes touch objects adding up to 5/4 of RAM: the
 * machine runs out of memory, the OOM killer kills attached processes
 * (their badness holds the region), the kernel survives, and unlinking
 * the region gives all the memory back.
 */
TEST_F_TIMEOUT(mm, oom_guest_wide, 900)
{
	struct hog h[HOGS];
	long base, after, shmem, total = meminfo_kb("MemTotal");
	size_t each = (total * KIB * 5 / 4 / HOGS) & ~(HPAGE - 1);
	int i, st, killed = 0;
	pid_t pid[HOGS];
	char adj[64];
	char *p;

	/* Only the hogs may be killed: not this test nor the harness. */
	snprintf(adj, sizeof(adj), "/proc/%d/oom_score_adj", getppid());
	ASSERT_OK(set_knob(self, adj, "-1000\n"));
	ASSERT_OK(set_oom_adj(getpid(), -1000));
	/*
	 * Huge pages where they can be had: filling the machine with 4 KiB
	 * faults takes minutes under emulation. When memory runs short the
	 * faults fall back to small pages.
	 */
	ASSERT_OK(set_knob(self, THP_SHMEM, "always\n"));
	ASSERT_EQ(0, meminfo_kb("SwapTotal"));
	drop_caches();
	base = meminfo_exact_kb("MemAvailable");
	shmem = meminfo_kb("Shmem");
	for (i = 0; i < HOGS; i++) {
		h[i] = (struct hog){ self->fd, i * 2 * GIB, each, 20 + i };
		ASSERT_OK(create_anon(self->fd, h[i].roff, each));
	}
	for (i = 0; i < HOGS; i++) {
		pid[i] = fork_run(hog, &h[i]);
		ASSERT_LT(0, pid[i]);
	}
	for (i = 0; i < HOGS; i++) {
		st = wait_exit(pid[i]);
		ksft_print_msg("hog %d: status %d\n", i, st);
		EXPECT_TRUE(st == 0 || st == 128 + SIGKILL);
		killed += st == 128 + SIGKILL;
	}
	TH_LOG("%d of %d hogs killed, %zu MiB each, MemAvailable %ld kB",
	       killed, HOGS, each / MIB, base);
	ASSERT_LE(1, killed);
	ASSERT_LE((long)total * (long)KIB / 2, mshare_fdinfo_value(self->fd, "rss"));

	/* The pages the victims wrote first are intact. */
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	for (i = 0; i < HOGS; i++)
		ASSERT_EQ(-1, tag_mismatch(p + h[i].roff, 16 * MIB, h[i].seed));
	ASSERT_OK(munmap(p, A));

	region_drop(self);
	after = avail_settle(base - 8 * 1024);
	TH_LOG("MemAvailable %ld kB before, %ld kB after; Shmem %ld -> %ld",
	       base, after, shmem, meminfo_kb("Shmem"));
	ASSERT_LE(base - 64 * 1024, after);
	/* The region's objects are shmem: all of it must be gone. */
	ASSERT_GE(shmem + 8 * 1024, meminfo_kb("Shmem"));
}

/* ---- huge pages ------------------------------------------------------- */

/*
 * With shmem THP always on, an anonymous object at a 2 MiB aligned offset
 * is mapped by PMDs in the region, seen through any attachment.
 */
TEST_F(mm, thp_shmem_pmd)
{
	const __u64 roff = 4 * HPAGE;
	const size_t size = 8 * MIB;
	long pmd, rss;
	char *p, *q;

	ASSERT_OK(set_knob(self, THP_SHMEM, "always\n"));
	ASSERT_OK(create_anon(self->fd, roff, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	/* Advice on the object is advice on the region's object. */
	ASSERT_OK(madvise(p + roff, size, MADV_HUGEPAGE));
	ASSERT_FAILS(ENOMEM, madvise(p, A, MADV_HUGEPAGE));
	fill(p + roff, size, 11);

	pmd = smaps_kb(p, "ShmemPmdMapped");
	rss = smaps_kb(p, "Rss");
	TH_LOG("ShmemPmdMapped %ld kB, Rss %ld kB", pmd, rss);
	ASSERT_LT(0, pmd);
	ASSERT_EQ((long)(size / KIB), rss);
	ASSERT_NEAR(size, mshare_fdinfo_value(self->fd, "rss"), RSS_SLACK);

	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_NE(p, q);
	ASSERT_PATTERN(q + roff, size, 11);
	ASSERT_EQ(pmd, smaps_kb(q, "ShmemPmdMapped"));
	fill(q + roff, HPAGE, 12);
	ASSERT_PATTERN(p + roff, HPAGE, 12);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

/* Anonymous hugetlb objects: shared, counted, data intact. */
TEST_F(mm, hugetlb_anon)
{
	const __u64 roff = 16 * HPAGE;
	const size_t size = 4 * HPAGE;
	long shared, private;
	char *p, *q;

	ASSERT_OK(create_mapping(self->fd, roff, size, 0, RW, ANON_HUGE, -1));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	fill(p + roff, size, 13);
	ASSERT_PATTERN(q + roff, size, 13);

	ASSERT_NEAR(size, mshare_fdinfo_value(self->fd, "rss"), RSS_SLACK);
	shared = smaps_kb(p, "Shared_Hugetlb");
	private = smaps_kb(p, "Private_Hugetlb");
	TH_LOG("Shared_Hugetlb %ld kB, Private_Hugetlb %ld kB", shared,
	       private);
	ASSERT_EQ((long)(size / KIB), shared + private);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

/*
 * smaps counts a region's pages "as Shared_* once there is more than one
 * [attachment]" (msharefs.rst): hugetlb pages too.
 */
TEST_F(mm, hugetlb_smaps_shared)
{
	const __u64 roff = 16 * HPAGE;
	const size_t size = 2 * HPAGE;
	char *p, *q;

	ASSERT_OK(create_mapping(self->fd, roff, size, 0, RW, ANON_HUGE, -1));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	fill(p + roff, size, 14);
	ASSERT_PATTERN(q + roff, size, 14);
	ASSERT_EQ((long)(size / KIB), smaps_kb(p, "Shared_Hugetlb"));
	ASSERT_EQ(0, smaps_kb(p, "Private_Hugetlb"));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

/* ---- swap ------------------------------------------------------------- */

static int zram_swap_on(FIXTURE_DATA(mm) *self)
{
	char buf[16];

	if (access(ZRAM_SYS, F_OK) &&
	    read_small(AT_FDCWD, "/sys/class/zram-control/hot_add", buf,
		       sizeof(buf)) <= 0)
		return -1;
	if (write_str(ZRAM_SYS "/disksize", "256M\n"))
		return -1;
	self->swap_on = true;
	if (system("mkswap " ZRAM_DEV " >/dev/null 2>&1"))
		return -1;
	return swapon(ZRAM_DEV, 0);
}

/* Writers of the region, each checking what it wrote, round by round. */
struct churner {
	char *p;
	size_t size;
	int seed;
	int rounds;
};

static int churn(void *arg)
{
	struct churner *c = arg;
	int r;

	for (r = 0; r < c->rounds; r++) {
		fill(c->p, c->size, c->seed + r);
		if (FAILED(mismatch(c->p, c->size, c->seed + r) == -1))
			return 1;
	}
	return 0;
}

/* Has child @pid exited? Leaves it to be reaped by wait_exit(). */
static bool exited(pid_t pid)
{
	siginfo_t si = { 0 };

	if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT))
		return true;
	return si.si_pid == pid;
}

/* MADV_PAGEOUT through an attachment swaps the region out, and back. */
TEST_F_TIMEOUT(mm, swap_pageout, 60)
{
	const size_t size = 32 * MIB;
	long used0, used1, rss0, rss1;
	char *p, *q;

	ASSERT_EQ(0, zram_swap_on(self))
		TH_LOG("zram swap: %s", strerror(errno));
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size, 15);
	used0 = swap_used_kb();
	rss0 = mshare_fdinfo_value(self->fd, "rss");
	ASSERT_OK(madvise(p, size, MADV_PAGEOUT));
	used1 = swap_used_kb();
	rss1 = mshare_fdinfo_value(self->fd, "rss");
	TH_LOG("swap used %ld -> %ld kB, mshare-rss %ld -> %ld", used0,
	       used1, rss0, rss1);
	ASSERT_LE(used0 + (long)(16 * KIB), used1);
	ASSERT_GE(rss0 - (long)(16 * MIB), rss1);
	ASSERT_GE((long)(16 * KIB), smaps_kb(p, "Rss"));
	ASSERT_LE((long)(16 * MIB), smaps_kb(p, "Swap") * (long)KIB);
	ASSERT_OK(munmap(p, A));

	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_PATTERN(q, size, 15);
	ASSERT_NEAR(size, mshare_fdinfo_value(self->fd, "rss"), RSS_SLACK);
	ASSERT_EQ((long)(size / KIB), smaps_kb(q, "Rss"));
	ASSERT_EQ(0, smaps_kb(q, "Swap"));
	ASSERT_OK(munmap(q, A));

	swap_off();
	self->swap_on = false;
}

/* Pages of [p, p + len) resident, by mincore(); -1 on error. */
static long resident(char *p, size_t len)
{
	unsigned char *vec = malloc(len / PG);
	long n = 0;
	size_t i;

	if (!vec || mincore(p, len, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < len / PG; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

#define OWN_RECLAIM_TRIES	8

/*
 * The only sharer of a region, alone on its CPU, reclaims the region's
 * pages itself (memory.reclaim of the cgroup the region was sized in) and
 * flushes each page as it goes, at its own address (msharefs.rst). Then it
 * writes through the same attachment: a flush at a wrong address would
 * leave the old entries, the writes would land in the freed pages, and a
 * second attachment would read the pages back from swap without them.
 * 64 pages, so that the entries stay in the emulator's TLB until then
 * (with 8 MiB, a flush at the region's address instead passed). Not
 * MADV_PAGEOUT: it ends with a flush of the whole range, hiding a miss.
 */
TEST_F_TIMEOUT(mm, memcg_reclaim_own_tlb, 120)
{
	const size_t size = 64 * PG, off = 2 * MIB + 3 * PG;
	char path[200], rpath[160], val[32];
	int cpu = sched_getcpu(), fd, i;
	long res0, res = 0, used0;
	cpu_set_t cpus;
	char *p, *q;

	ASSERT_LE(0, cpu);
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	ASSERT_OK(sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, zram_swap_on(self))
		TH_LOG("zram swap: %s", strerror(errno));
	ASSERT_OK(cgroup_new(self, "own", 512 * MIB));
	snprintf(rpath, sizeof(rpath), "%s/memory.swap.max", self->cgroup);
	ASSERT_OK(write_str(rpath, "max\n"));
	ASSERT_OK(cg_join(self->cgroup));
	snprintf(path, sizeof(path), "%s-own", self->path);
	fd = mshare_region_create(AT_FDCWD, path, 0600, A);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_OK(create_anon(fd, off, size));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	tag_pages(p + off, size, 1);
	res0 = resident(p + off, size);
	used0 = swap_used_kb();

	snprintf(rpath, sizeof(rpath), "%s/memory.reclaim", self->cgroup);
	snprintf(val, sizeof(val), "%zu\n", size);
	for (i = 0; i < OWN_RECLAIM_TRIES; i++) {
		/* EAGAIN: less than asked was reclaimed. */
		if (write_str(rpath, val))
			ASSERT_EQ(EAGAIN, errno);
		res = resident(p + off, size);
		if (res <= (long)(size / PG / 4))
			break;
	}
	TH_LOG("%d memory.reclaim writes: resident %ld -> %ld pages, swap used +%ld kB",
	       i + 1, res0, res, swap_used_kb() - used0);
	ASSERT_EQ((long)(size / PG), res0);
	ASSERT_GE((long)(size / PG / 4), res);
	tag_pages(p + off, size, 2);
	ASSERT_EQ(-1, tag_mismatch(p + off, size, 2));

	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(-1, tag_mismatch(q + off, size, 2));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	close(fd);
	unlink(path);
	ASSERT_OK(cg_join(CGROOT));
	swap_off();
	self->swap_on = false;
}

/* ---- reclaim, compaction, NUMA ------------------------------------- */

/* The PFNs of @n pages at @p, from pagemap (root sees them); 0 or -1. */
static int pfns(char *p, size_t n, uint64_t *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t len = n * sizeof(*pfn);
	size_t i;

	if (fd < 0)
		return -1;
	if (pread(fd, pfn, len, (unsigned long)p / PG * 8) != len) {
		close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < n; i++)
		pfn[i] &= (1ULL << 55) - 1;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static long vmstat(const char *key)
{
	char line[128];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = strtol(line + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A part of a region, for a child that attaches it anew. */
struct sharer {
	int fd;			/* the region */
	size_t off, size;
	int seed;
	const uint64_t *pfn;	/* the PFNs the caller sees there, or NULL */
};

/*
 * Another sharer: attach the region at an address of its own, find
 * pattern @seed there and, if given, the same page frames as the caller.
 */
static int sharer_sees(void *arg)
{
	struct sharer *s = arg;
	size_t n = s->size / PG, k;
	uint64_t *pfn = calloc(n, sizeof(*pfn));
	char *p = mshare_attach(s->fd, NULL, RW, 0);

	if (FAILED(pfn != NULL) || FAILED(p != MAP_FAILED))
		return 1;
	if (FAILED(mismatch(p + s->off, s->size, s->seed) == -1))
		return 2;
	if (s->pfn) {
		if (FAILED(pfns(p + s->off, n, pfn) == 0))
			return 3;
		for (k = 0; k < n; k++)
			if (FAILED(pfn[k] == s->pfn[k]))
				return 4;
	}
	return munmap(p, A) ? 5 : 0;
}

/*
 * Fault @len bytes at @p in with pattern @seed, each page next to a page
 * of a private buffer that is freed afterwards: the region's pages end up
 * in half-empty pageblocks, the first thing compaction empties.
 */
static int fragmented_fault(char *p, size_t len, int seed)
{
	char *f = mmap(NULL, len, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (f == MAP_FAILED)
		return -1;
	madvise(f, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len; i += PG) {
		p[i] = 1;
		f[i] = 1;
	}
	fill(p, len, seed);
	return munmap(f, len);
}

/* Two attachments of one anonymous object, and its frames at times. */
struct frames {
	char *p, *q;
	size_t n;			/* pages */
	uint64_t *before, *after, *seen;
};

static int frames_setup(FIXTURE_DATA(mm) *self, struct frames *f, size_t size)
{
	f->n = size / PG;
	f->before = calloc(f->n, sizeof(uint64_t));
	f->after = calloc(f->n, sizeof(uint64_t));
	f->seen = calloc(f->n, sizeof(uint64_t));
	if (!f->before || !f->after || !f->seen || create_anon(self->fd, 0, size))
		return -1;
	f->p = mshare_attach(self->fd, NULL, RW, 0);
	f->q = mshare_attach(self->fd, NULL, RW, 0);
	if (f->p == MAP_FAILED || f->q == MAP_FAILED)
		return -1;
	/* No kcompactd moving pages between the reads compared. */
	return set_knob(self, "/proc/sys/vm/compaction_proactiveness", "0");
}

/*
 * Read the frames now through both attachments: the first page where they
 * differ, -1 if none does, -2 if pagemap could not be read.
 */
static long frames_differ(struct frames *f)
{
	size_t k;

	if (pfns(f->p, f->n, f->after) || pfns(f->q, f->n, f->seen))
		return -2;
	for (k = 0; k < f->n; k++)
		if (f->after[k] != f->seen[k])
			return k;
	return -1;
}

static void frames_free(struct frames *f)
{
	munmap(f->q, A);
	munmap(f->p, A);
	free(f->before);
	free(f->after);
	free(f->seen);
}

/*
 * Reclaim of region pages under writers of the region. Reclaim clears
 * many PTEs of the region and flushes them in one batch through all the
 * sharers, after the loop, not page by page; a write through an entry
 * left cached past that flush would be lost with the swapped-out copy.
 * Two writers (processes of their own, each checking every round what it
 * wrote) run while a third attachment pages the object out, 1 MiB after
 * another, round and round: both writers find all their data, pages went
 * to swap, and every attachment and a new sharer read the last round.
 */
TEST_F_TIMEOUT(mm, swap_pageout_writers, 180)
{
	const size_t size = 16 * MIB;
	long out0, pageouts = 0, under = 0;
	struct churner c[2];
	struct sharer s;
	size_t off;
	pid_t pid[2];
	char *p, *q;
	int i;

	ASSERT_EQ(0, zram_swap_on(self))
		TH_LOG("zram swap: %s", strerror(errno));
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size, 50);
	out0 = vmstat("pswpout");
	ASSERT_LE(0, out0);
	for (i = 0; i < 2; i++) {
		c[i] = (struct churner){ p + i * size / 2, size / 2,
					 50 + 10 * i, 12 };
		pid[i] = fork_run(churn, &c[i]);
		ASSERT_LT(0, pid[i]);
	}
	/*
	 * Page out under the writers while they run; on a loaded machine
	 * they may finish after a few page-outs, so go on until every MiB
	 * of the object was paged out at least once, for the count below.
	 */
	for (off = 0; !exited(pid[0]) || !exited(pid[1]) ||
		      pageouts < (long)(size / MIB);
	     off = (off + MIB) % size) {
		if (!exited(pid[0]) || !exited(pid[1]))
			under++;
		ASSERT_OK(madvise(q + off, MIB, MADV_PAGEOUT));
		pageouts++;
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, wait_exit(pid[i])) TH_LOG("writer %d", i);
	TH_LOG("%ld page-outs of 1 MiB, %ld under the writers, pswpout +%ld",
	       pageouts, under, vmstat("pswpout") - out0);
	ASSERT_LE(2, under);
	ASSERT_LT(out0 + (long)(size / PG / 4), vmstat("pswpout"));

	for (i = 0; i < 2; i++) {
		ASSERT_PATTERN(p + i * size / 2, size / 2, c[i].seed + 11);
		ASSERT_PATTERN(q + i * size / 2, size / 2, c[i].seed + 11);
		s = (struct sharer){ self->fd, i * size / 2, size / 2,
				     c[i].seed + 11, NULL };
		ASSERT_EQ(0, run_child(sharer_sees, &s));
	}
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	swap_off();
	self->swap_on = false;
}

/*
 * One try: fault @p in fragmented, compact every zone (up to five times)
 * under two writers; the number of region pages whose frame changed.
 */
static long compact_try(char *p, size_t size, uint64_t *before,
			uint64_t *after, struct churner *c)
{
	size_t n = 2 * size / PG, moved = 0, k;
	pid_t pid[2];
	int i, round, bad = 0;

	if (madvise(p, 2 * size, MADV_DONTNEED) ||
	    fragmented_fault(p, 2 * size, 29) || pfns(p, n, before))
		return -1;
	for (k = 0; k < n; k++)
		if (!before[k])
			return -1;
	for (i = 0; i < 2; i++) {
		c[i] = (struct churner){ p + i * size, size, 30 + 10 * i, 4 };
		pid[i] = fork_run(churn, &c[i]);
		if (pid[i] <= 0)
			return -1;
	}
	for (round = 0; round < 5 && !moved && !bad; round++) {
		bad = write_str("/proc/sys/vm/compact_memory", "1\n") ||
		      usleep(200000) || pfns(p, n, after);
		for (k = 0; k < n && !bad; k++)
			moved += before[k] != after[k];
	}
	for (i = 0; i < 2; i++)
		bad |= wait_exit(pid[i]) != 0;
	return bad ? -1 : (long)moved;
}

/*
 * Compaction runs over region pages under readers and writers of the
 * region: it scans (compact_migrate_scanned rises), every byte stays what
 * it was, and all sharers, also one that attaches afterwards, see the same
 * frames and the data.
 *
 * Whether it moves region pages depends on where its two scanners meet,
 * i.e. on the layout of free memory: on a fresh boot the region's pages
 * can all sit above that point (measured: 0 of 4096 moved in four tries
 * in the first run after a boot, 2 boots of 3; every later run moved some).
 * So up to four tries fault the region in anew until pages moved, and the
 * count is logged, not asserted: mm.soft_offline moves chosen region pages
 * through the same migration code, deterministically.
 */
TEST_F_TIMEOUT(mm, compaction, 240)
{
	const size_t size = 8 * MIB;
	long scanned, migrated, moved = 0;
	struct churner c[2];
	struct frames f;
	struct sharer s;
	int i, try;

	ASSERT_OK(frames_setup(self, &f, 2 * size));
	scanned = vmstat("compact_migrate_scanned");
	migrated = vmstat("pgmigrate_success");
	ASSERT_LE(0, scanned);
	ASSERT_LE(0, migrated);
	for (try = 1; try <= 4 && !moved; try++) {
		moved = compact_try(f.p, size, f.before, f.after, c);
		ASSERT_LE(0, moved) TH_LOG("try %d: fault, compaction or a writer failed", try);
		TH_LOG("try %d: %ld of %zu region pages moved", try, moved, f.n);
	}
	TH_LOG("compact_migrate_scanned +%ld, pgmigrate_success +%ld",
	       vmstat("compact_migrate_scanned") - scanned,
	       vmstat("pgmigrate_success") - migrated);
	ASSERT_LT(scanned, vmstat("compact_migrate_scanned"));

	/* Data and frames as every sharer sees them. */
	ASSERT_EQ(-1, frames_differ(&f));
	for (i = 0; i < 2; i++) {
		ASSERT_PATTERN(f.p + i * size, size, c[i].seed + 3);
		ASSERT_PATTERN(f.q + i * size, size, c[i].seed + 3);
		s = (struct sharer){ self->fd, i * size, size, c[i].seed + 3,
				     f.after + i * size / PG };
		ASSERT_EQ(0, run_child(sharer_sees, &s));
	}
	frames_free(&f);
}

/*
 * Soft offline migrates the pages it is given to new frames: the migration
 * compaction does (isolate, unmap through the region's rmap, copy, remap),
 * on pages the test chooses. Under two writers of the region, each chosen
 * page, offlined through another attachment than the writers', gets a new
 * frame; every byte stays what the writers wrote; all sharers, also one
 * that attaches afterwards, see the new frames. The old frames are retired
 * for good: 32 pages of the guest.
 *
 * Before patch "mm/rmap: write the migration entry before flushing an
 * msharefs region", 7 to 19 of the 32 failed with EBUSY here: a writer
 * faulted on the empty PTE while every sharer was being flushed and held
 * a folio reference through the move.
 */
TEST_F_TIMEOUT(mm, soft_offline, 120)
{
	const size_t size = 16 * MIB, step = 128;
	struct churner c[2];
	struct frames f;
	struct sharer s;
	long migrated;
	pid_t pid[2];
	size_t k;
	int i;

	ASSERT_OK(frames_setup(self, &f, size));
	fill(f.p, size, 31);
	ASSERT_OK(pfns(f.p, f.n, f.before));
	migrated = vmstat("pgmigrate_success");
	ASSERT_LE(0, migrated);
	for (i = 0; i < 2; i++) {
		c[i] = (struct churner){ f.p + i * size / 2, size / 2,
					 30 + 10 * i, 4 };
		pid[i] = fork_run(churn, &c[i]);
		ASSERT_LT(0, pid[i]);
	}
	for (k = 0; k < f.n; k += step) {
		ASSERT_EQ(0, madvise(f.q + k * PG, PG, MADV_SOFT_OFFLINE)) {
			TH_LOG("page %zu: %s", k, strerror(errno));
		}
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, wait_exit(pid[i]));
	ASSERT_LE(migrated + (long)(f.n / step), vmstat("pgmigrate_success"));

	ASSERT_EQ(-1, frames_differ(&f));
	for (k = 0; k < f.n; k++) {
		ASSERT_EQ(k % step == 0, f.before[k] != f.after[k]) {
			TH_LOG("page %zu: frame %#llx before, %#llx after", k,
			       (unsigned long long)f.before[k],
			       (unsigned long long)f.after[k]);
		}
	}
	for (i = 0; i < 2; i++) {
		ASSERT_PATTERN(f.p + i * size / 2, size / 2, c[i].seed + 3);
		ASSERT_PATTERN(f.q + i * size / 2, size / 2, c[i].seed + 3);
		s = (struct sharer){ self->fd, i * size / 2, size / 2,
				     c[i].seed + 3, f.after + i * f.n / 2 };
		ASSERT_EQ(0, run_child(sharer_sees, &s));
	}
	frames_free(&f);
}

static bool have_node1(void)
{
	return !access("/sys/devices/system/node/node1", F_OK);
}

static int page_node(void *addr);

/* A region opened read-only, with an object of @size at offset 0. */
struct numa_reader {
	int fd;
	size_t size;
	void **pages;		/* four pages of the parent's attachment */
};

/*
 * move_pages() of the parent's pages, through its writer's attachment,
 * without MPOL_MF_MOVE_ALL: they are every sharer's (EACCES per page).
 */
static int numa_remote_moves(void *arg)
{
	const struct numa_reader *rd = arg;
	int nodes[4] = { 0, 0, 0, 0 }, status[4], i;

	if (FAILED(!syscall(__NR_move_pages, getppid(), 4, rd->pages, nodes,
			    status, MPOL_MF_MOVE)))
		return 1;
	for (i = 0; i < 4; i++)
		if (FAILED(status[i] == -EACCES))
			return 2;
	return 0;
}

/* A reader's move_pages(): it may query the region's pages, not move them. */
static int numa_reader_moves(void *arg)
{
	const struct numa_reader *rd = arg;
	void *pages[4];
	int nodes[4], status[4], i;
	char *q;

	q = mshare_attach(rd->fd, NULL, PROT_READ, 0);
	if (FAILED(q != MAP_FAILED))
		return 1;
	for (i = 0; i < 4; i++) {
		pages[i] = q + i * (rd->size / 4);
		nodes[i] = 0;
		status[i] = 1234;
	}
	if (FAILED(!syscall(__NR_move_pages, 0, 4, pages, NULL, status, 0)))
		return 2;
	for (i = 0; i < 4; i++)
		if (FAILED(status[i] == 1))
			return 3;
	if (FAILED(!syscall(__NR_move_pages, 0, 4, pages, nodes, status,
			    MPOL_MF_MOVE)))
		return 4;
	for (i = 0; i < 4; i++)
		if (FAILED(status[i] == -EACCES))
			return 5;
	return munmap(q, A) ? 6 : 0;
}

/*
 * move_pages() through a writer's attachment queries and moves the
 * region's pages, as those of a mapping of the object; a reader may only
 * query (EACCES per page, as for a page another process maps), and so may
 * another process through the writer's attachment. A hole is EFAULT.
 * migrate_pages() by root moves them too (see numa_migrate_pages_region);
 * their data stays intact.
 */
TEST_F(mm, numa_migrate_move_pages)
{
	unsigned long from = 1, to = 2;
	const size_t size = 4 * MIB;
	struct numa_reader rd = { .size = size };
	void *pages[5];
	int nodes[5], status[5];
	long ret;
	char *p;
	int i;

	ASSERT_TRUE(have_node1());
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size, 40);

	ret = syscall(__NR_migrate_pages, 0, 8 * sizeof(long), &from, &to);
	ASSERT_LE(0, ret) TH_LOG("migrate_pages: %s", strerror(errno));
	ASSERT_PATTERN(p, size, 40);

	for (i = 0; i < 4; i++) {
		pages[i] = p + i * MIB;
		nodes[i] = 1;
		status[i] = 1234;
	}
	pages[4] = p + 2 * size;	/* a hole of the region */
	nodes[4] = 1;
	ASSERT_OK(syscall(__NR_move_pages, 0, 5, pages, NULL, status, 0));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(page_node(pages[i]), status[i]);
	ASSERT_EQ(-EFAULT, status[4]);
	ASSERT_OK(syscall(__NR_move_pages, 0, 5, pages, nodes, status,
			  MPOL_MF_MOVE));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, status[i]);
		ASSERT_EQ(1, page_node(pages[i]));
	}
	ASSERT_EQ(-EFAULT, status[4]);
	ASSERT_PATTERN(p, size, 40);

	rd.fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rd.fd);
	ASSERT_EQ(0, run_child(numa_reader_moves, &rd));
	close(rd.fd);
	/* Nor may another process, through this writer's attachment. */
	rd.fd = -1;
	rd.pages = pages;
	ASSERT_EQ(0, run_child(numa_remote_moves, &rd));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(1, page_node(pages[i]));
	ASSERT_PATTERN(p, size, 40);
	ASSERT_OK(munmap(p, A));
}

/* The first page of @len at @p that is not on @node, or -1. */
static long first_page_not_on(char *p, size_t len, int node)
{
	size_t i;

	for (i = 0; i < len; i += PG)
		if (page_node(p + i) != node)
			return i / PG;
	return -1;
}

/* What migrate_as_nobody() does, and what it must find after. */
struct numa_migrator {
	char *p;		/* the parent's writer attachment */
	size_t size;
	int fd;			/* the region, O_RDONLY */
	bool reader;		/* through a reader's attachment, not @p */
	int want_node;
};

/*
 * A child without CAP_SYS_NICE (uid 65534) moves its own pages from node
 * 1 to node 0 with migrate_pages(): MPOL_MF_MOVE, not MOVE_ALL. Through a
 * writer's attachment that moves the region's pages; a reader, which
 * detached the writer's attachment it inherited, moves none of them.
 */
static int migrate_as_nobody(void *arg)
{
	const struct numa_migrator *m = arg;
	unsigned long from = 2, to = 1;
	char *q = m->p;
	long at;

	if (m->reader) {
		q = mshare_attach(m->fd, NULL, PROT_READ, 0);
		if (FAILED(q != MAP_FAILED) || FAILED(!munmap(m->p, A)))
			return 1;
	}
	if (FAILED(!become_nobody()))
		return 2;
	if (FAILED(syscall(__NR_migrate_pages, 0, 8 * sizeof(long), &from,
			   &to) >= 0))
		return 3;
	at = first_page_not_on(q, m->size, m->want_node);
	if (FAILED(at == -1))
		return 4;
	return 0;
}

/*
 * migrate_pages() moves the region pages behind a process's attachments,
 * as the shared pages of a mapping: all of them for root (MOVE_ALL),
 * through a writer's attachment for anyone, never through a reader's.
 */
TEST_F(mm, numa_migrate_pages_region)
{
	struct numa_migrator m = { .size = 4 * MIB };
	unsigned long from = 1, to = 2;
	void *pages[64];
	int nodes[64], status[64];
	size_t i;
	char *p;

	ASSERT_TRUE(have_node1());
	ASSERT_OK(create_anon(self->fd, 0, m.size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, m.size, 41);
	/* Start on node 0: move_pages() through this writer's attachment. */
	for (i = 0; i < m.size / PG; i += 64) {
		size_t j, n = 64;

		for (j = 0; j < n; j++) {
			pages[j] = p + (i + j) * PG;
			nodes[j] = 0;
		}
		ASSERT_OK(syscall(__NR_move_pages, 0, n, pages, nodes, status,
				  MPOL_MF_MOVE));
	}
	ASSERT_EQ(-1L, first_page_not_on(p, m.size, 0));

	ASSERT_LE(0, syscall(__NR_migrate_pages, 0, 8 * sizeof(long), &from,
			     &to)) TH_LOG("migrate_pages: %s", strerror(errno));
	ASSERT_EQ(-1L, first_page_not_on(p, m.size, 1));

	m.p = p;
	m.fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, m.fd);
	m.reader = true;
	m.want_node = 1;
	ASSERT_EQ(0, run_child(migrate_as_nobody, &m));
	ASSERT_EQ(-1L, first_page_not_on(p, m.size, 1));
	m.reader = false;
	m.want_node = 0;
	ASSERT_EQ(0, run_child(migrate_as_nobody, &m));
	ASSERT_EQ(-1L, first_page_not_on(p, m.size, 0));
	ASSERT_PATTERN(p, m.size, 41);
	close(m.fd);
	ASSERT_OK(munmap(p, A));
}

/* The node of the page at @addr, as get_mempolicy() tells; -1 if none. */
static int page_node(void *addr)
{
	int node = -1;

	if (syscall(__NR_get_mempolicy, &node, NULL, 0, addr,
		    MPOL_F_NODE | MPOL_F_ADDR))
		return -1;
	return node;
}

/* The policy mode at @addr and its nodes in @nodes; -1 on error. */
static int addr_policy(void *addr, unsigned long *nodes)
{
	int mode = -1;

	*nodes = 0;
	if (syscall(__NR_get_mempolicy, &mode, nodes, 8 * sizeof(*nodes),
		    addr, MPOL_F_ADDR))
		return -1;
	return mode;
}

/* Pages of [@p, @p + @len) on node 0, on node 1, and elsewhere or none. */
static void count_nodes(char *p, size_t len, long n[3])
{
	size_t i;
	int node;

	n[0] = n[1] = n[2] = 0;
	for (i = 0; i < len / PG; i++) {
		node = page_node(p + i * PG);
		n[node == 0 || node == 1 ? node : 2]++;
	}
}

/* Does the numa_maps line at @addr hold each of the words of @want? */
static bool numa_line_has(void *addr, const char *const *want, int n)
{
	char line[1024];
	int i;

	if (proc_line("numa_maps", addr, line, sizeof(line)))
		return false;
	for (i = 0; i < n; i++)
		if (!strstr(line, want[i])) {
			fprintf(stderr, "# numa_maps: no \"%s\" in %s", want[i],
				line);
			return false;
		}
	return true;
}

/* What a sharer checks or does at its own address. */
struct numa_sharer {
	int fd;			/* the region, opened for reading or writing */
	size_t size;		/* of the object at offset 0 */
	int prot;
};

/*
 * Another sharer, at an address of its own: the second half of the object
 * is bound to node 1 and lives there, the first half has no policy.
 */
static int numa_sharer_sees_bind(void *arg)
{
	const char *const bind[] = { "bind:1", "N1=" };
	const char *const dflt[] = { "default" };
	struct numa_sharer *ns = arg;
	char *q = mshare_attach(ns->fd, NULL, ns->prot, 0);
	size_t half = ns->size / 2;
	unsigned long nodes;
	long n[3];

	if (FAILED(q != MAP_FAILED))
		return 1;
	if (FAILED(addr_policy(q + half, &nodes) == MPOL_BIND) ||
	    FAILED(nodes == 2) ||
	    FAILED(addr_policy(q, &nodes) == MPOL_DEFAULT))
		return 2;
	count_nodes(q + half, half, n);
	if (FAILED(n[1] == (long)(half / PG)))
		return 3;
	if (FAILED(numa_line_has(q + half, bind, 2)) ||
	    FAILED(numa_line_has(q, dflt, 1)))
		return 4;
	return munmap(q, A) ? 5 : 0;
}

/*
 * mbind() through a writer's attachment sets the policy of the region's
 * object there, for every sharer, as a thread's does for its siblings:
 * a part of the object splits it in the region, not the attachment, which
 * stays one VMA. MPOL_MF_MOVE moves the region's pages. Another sharer
 * sees the policy in get_mempolicy() and numa_maps, at its own address.
 */
TEST_F(mm, numa_mbind_region)
{
	struct numa_sharer ns = { .fd = self->fd, .size = 4 * MIB,
				  .prot = RW };
	const size_t half = ns.size / 2;
	unsigned long node1 = 2, nodes;
	char line[1024], want[64];
	long n[3];
	char *p;

	ASSERT_TRUE(have_node1());
	ASSERT_OK(create_anon(self->fd, 0, ns.size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, ns.size, 41);
	snprintf(want, sizeof(want), "%lx-%lx ", (unsigned long)p,
		 (unsigned long)p + A);

	ASSERT_OK(syscall(__NR_mbind, p + half, half, MPOL_BIND, &node1,
			  8 * sizeof(long), MPOL_MF_MOVE));
	ASSERT_OK(proc_line("maps", p, line, sizeof(line)));
	ASSERT_EQ(0, strncmp(line, want, strlen(want))) TH_LOG("%s", line);
	ASSERT_EQ(MPOL_BIND, addr_policy(p + half, &nodes));
	ASSERT_EQ(2UL, nodes);
	ASSERT_EQ(MPOL_DEFAULT, addr_policy(p, &nodes));
	count_nodes(p + half, half, n);
	ASSERT_EQ((long)(half / PG), n[1]) TH_LOG("node0 %ld node1 %ld other %ld",
					  n[0], n[1], n[2]);
	ASSERT_PATTERN(p, ns.size, 41);
	ASSERT_EQ(0, run_child(numa_sharer_sees_bind, &ns));

	/* Back to the default, as a thread would: the pages stay. */
	ASSERT_OK(syscall(__NR_mbind, p, ns.size, MPOL_DEFAULT, NULL, 0, 0));
	ASSERT_EQ(MPOL_DEFAULT, addr_policy(p + half, &nodes));
	count_nodes(p + half, half, n);
	ASSERT_EQ((long)(half / PG), n[1]);
	ASSERT_PATTERN(p, ns.size, 41);
	ASSERT_OK(munmap(p, A));
}

/* Fault the object in at an address of its own; pages on both nodes. */
static int numa_sharer_interleaves(void *arg)
{
	const char *const il[] = { "interleave:0-1", "N0=", "N1=" };
	struct numa_sharer *ns = arg;
	char *q = mshare_attach(ns->fd, NULL, ns->prot, 0);
	long n[3], pages = ns->size / PG;

	if (FAILED(q != MAP_FAILED))
		return 1;
	fill(q, ns->size, 43);
	count_nodes(q, ns->size, n);
	fprintf(stderr, "# interleaved: node0 %ld node1 %ld other %ld\n",
		n[0], n[1], n[2]);
	/* Interleaving alternates; allow for pages a fallback placed. */
	if (FAILED(n[2] == 0) || FAILED(n[0] >= pages / 4) ||
	    FAILED(n[1] >= pages / 4))
		return 2;
	if (FAILED(numa_line_has(q, il, 3)))
		return 3;
	return munmap(q, A) ? 4 : 0;
}

/*
 * A database interleaves its shared buffers over the nodes: the policy set
 * through one attachment before anything is faulted places the pages that
 * another sharer faults in, at its own address.
 */
TEST_F(mm, numa_interleave_from_sharer)
{
	struct numa_sharer ns = { .fd = self->fd, .size = 8 * MIB,
				  .prot = RW };
	unsigned long both = 3, nodes;
	char *p;

	ASSERT_TRUE(have_node1());
	ASSERT_OK(create_anon(self->fd, 0, ns.size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_OK(syscall(__NR_mbind, p, ns.size, MPOL_INTERLEAVE, &both,
			  8 * sizeof(long), 0));
	ASSERT_EQ(MPOL_INTERLEAVE, addr_policy(p, &nodes));
	ASSERT_EQ(3UL, nodes);
	ASSERT_EQ(0, run_child(numa_sharer_interleaves, &ns));
	ASSERT_PATTERN(p, ns.size, 43);
	ASSERT_OK(munmap(p, A));
}

/* A reader's mbind() is refused; the policy stays the default. */
static int numa_reader_refused(void *arg)
{
	struct numa_sharer *ns = arg;
	char *q = mshare_attach(ns->fd, NULL, ns->prot, 0);
	unsigned long node1 = 2, nodes;

	if (FAILED(q != MAP_FAILED))
		return 1;
	if (FAILED(syscall(__NR_mbind, q, ns->size, MPOL_BIND, &node1,
			   8 * sizeof(long), MPOL_MF_MOVE) == -1) ||
	    FAILED(errno == EPERM))
		return 2;
	if (FAILED(syscall(__NR_mbind, q, ns->size, MPOL_DEFAULT, NULL, 0,
			   0) == -1) || FAILED(errno == EPERM))
		return 3;
	if (FAILED(addr_policy(q, &nodes) == MPOL_DEFAULT))
		return 4;
	return munmap(q, A) ? 5 : 0;
}

/*
 * What mbind() refuses through an attachment, changing nothing: any
 * policy from a read-only attacher (where everyone's memory lives is for
 * writers: EPERM), a hole of the region (EFAULT, as unmapped memory; the
 * default policy may span holes), a range that holds the attachment and
 * memory of the process's own (EINVAL).
 */
TEST_F(mm, numa_mbind_refused)
{
	struct numa_sharer ns = { .size = 4 * MIB, .prot = PROT_READ };
	unsigned long node1 = 2, nodes;
	char *p, *own;
	int node;

	ASSERT_TRUE(have_node1());
	ASSERT_OK(create_anon(self->fd, 0, ns.size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, ns.size, 44);
	node = page_node(p);
	ASSERT_LE(0, node);

	ns.fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ns.fd);
	ASSERT_EQ(0, run_child(numa_reader_refused, &ns));
	close(ns.fd);

	ASSERT_FAILS(EFAULT, syscall(__NR_mbind, p, 2 * ns.size, MPOL_BIND,
				     &node1, 8 * sizeof(long), MPOL_MF_MOVE));
	ASSERT_EQ(MPOL_DEFAULT, addr_policy(p, &nodes));
	ASSERT_EQ(node, page_node(p));
	ASSERT_OK(syscall(__NR_mbind, p, 2 * ns.size, MPOL_DEFAULT, NULL, 0,
			  0));

	own = mmap(p + A, PG, RW, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p + A, own) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_FAILS(EINVAL, syscall(__NR_mbind, p + A - PG, 2 * PG,
				     MPOL_BIND, &node1, 8 * sizeof(long), 0));
	ASSERT_EQ(MPOL_DEFAULT, addr_policy(own, &nodes));
	ASSERT_OK(syscall(__NR_mbind, own, PG, MPOL_BIND, &node1,
			  8 * sizeof(long), 0));
	ASSERT_EQ(MPOL_BIND, addr_policy(own, &nodes));
	ASSERT_EQ(MPOL_DEFAULT, addr_policy(p, &nodes));
	ASSERT_PATTERN(p, ns.size, 44);
	ASSERT_OK(munmap(own, PG));
	ASSERT_OK(munmap(p, A));
}

/* A "@key : value" line of /proc/self/sched (CONFIG_SCHED_DEBUG); -1. */
static long sched_long(const char *key)
{
	char line[256], *colon;
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/sched", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ' &&
		    (colon = strchr(line, ':')))
			v = strtol(colon + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Load one byte of each of @n pages at @p. */
static void read_pages(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		(void)*(volatile const char *)(p + i * PG);
}

/* NUMA hint faults taken while reading @n pages at @p. */
static long hint_faults(const char *p, size_t n)
{
	long f = vmstat("numa_hint_faults");

	read_pages(p, n);
	return vmstat("numa_hint_faults") - f;
}

/*
 * NUMA balancing scans this process and leaves its attachment alone: a
 * plain shared memfd mapping of the same size, read in turns with the
 * region, takes hint faults (its PTEs were made PROT_NONE by the scan)
 * while the region's pages take none; the data stay intact for every
 * sharer. The scan runs from the task's own ticks, so the test keeps the
 * CPU busy reading; the scan delay and period are shortened where
 * debugfs has them.
 */
TEST_F_TIMEOUT(mm, numa_balancing, 90)
{
	const size_t size = 4 * MIB, n = size / PG;
	long updates, seq, ctl = 0, reg = 0;
	struct churner c;
	struct sharer s;
	int mfd, rounds;
	double t0;
	pid_t pid;
	char *p, *m;

	ASSERT_TRUE(have_node1());
	ASSERT_OK(set_knob(self, NUMA_BAL, "1\n"));
	if (!access(NUMA_DBG "scan_delay_ms", W_OK)) {
		ASSERT_OK(set_knob(self, NUMA_DBG "scan_delay_ms", "100\n"));
		ASSERT_OK(set_knob(self, NUMA_DBG "scan_period_min_ms",
				   "100\n"));
		ASSERT_OK(set_knob(self, NUMA_DBG "scan_period_max_ms",
				   "1000\n"));
	}
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	mfd = memfd_sized("numa", MFD_CLOEXEC, size);
	ASSERT_LE(0, mfd);
	ASSERT_MAPS(m, mmap(NULL, size, RW, MAP_SHARED, mfd, 0));
	fill(p, size, 50);
	fill(m, size, 51);
	updates = vmstat("numa_pte_updates");
	seq = sched_long("mm->numa_scan_seq");
	ASSERT_LE(0, updates);

	/* Until the control took two scans' worth of hint faults. */
	t0 = now();
	for (rounds = 0; ctl < 2 * (long)n && now() < t0 + 60; rounds++) {
		ctl += hint_faults(m, n);
		reg += hint_faults(p, n);
	}
	updates = vmstat("numa_pte_updates") - updates;
	TH_LOG("%d rounds in %.1f s: numa_pte_updates +%ld, numa_scan_seq %ld -> %ld; hint faults: %ld on the memfd, %ld on the region (%zu pages each)",
	       rounds, now() - t0, updates, seq,
	       sched_long("mm->numa_scan_seq"), ctl, reg, n);
	ASSERT_LE((long)n, updates);
	ASSERT_LE((long)n, ctl);
	/*
	 * The stack and the heap of vmstat() may take a few in the region's
	 * turn; a scanned attachment would take as many as the memfd.
	 */
	ASSERT_GT((long)n / 8, reg);

	ASSERT_PATTERN(p, size, 50);
	ASSERT_PATTERN(m, size, 51);
	c = (struct churner){ p, size, 52, 2 };
	pid = fork_run(churn, &c);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, wait_exit(pid));
	ASSERT_PATTERN(p, size, 53);
	s = (struct sharer){ self->fd, 0, size, 53, NULL };
	ASSERT_EQ(0, run_child(sharer_sees, &s));
	ASSERT_OK(munmap(m, size));
	close(mfd);
	ASSERT_OK(munmap(p, A));
}

/* ---- per-VMA locks ---------------------------------------------------- */

/*
 * Faults on an attachment are served under VMA locks, the attachment's
 * and the object's in the region, not the process's mmap_lock, once the
 * unit is linked: every page but the first is a vma_lock_success, and few
 * are aborted (before, each was: the attachment was refused its VMA lock).
 * Needs CONFIG_PER_VMA_LOCK_STATS.
 */
TEST_F(mm, vma_lock_faults)
{
	const size_t size = 8 * MIB, n = size / PG;
	long success, abort_;
	char *p;

	ASSERT_LE(0, vmstat("vma_lock_success"))
		TH_LOG("no vma_lock_* in /proc/vmstat: CONFIG_PER_VMA_LOCK_STATS");
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	p[0] = 1;
	success = vmstat("vma_lock_success");
	abort_ = vmstat("vma_lock_abort");
	fill(p + PG, size - PG, 60);
	success = vmstat("vma_lock_success") - success;
	abort_ = vmstat("vma_lock_abort") - abort_;
	TH_LOG("%zu faults: vma_lock_success +%ld, vma_lock_abort +%ld", n - 1,
	       success, abort_);
	ASSERT_LE((long)(n - 1), success);
	ASSERT_GT((long)(n / 8), abort_);
	ASSERT_PATTERN(p + PG, size - PG, 60);
	ASSERT_OK(munmap(p, A));
}

/* ---- KSM ---------------------------------------------------------------- */

TEST_F(mm, ksm_madvise_mergeable)
{
	const size_t size = MIB;
	char *p;

	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size, 60);
	ASSERT_FAILS(EINVAL, madvise(p, size, MADV_MERGEABLE));
	ASSERT_FAILS(EINVAL, madvise(p, size, MADV_UNMERGEABLE));
	ASSERT_PATTERN(p, size, 60);
	ASSERT_OK(munmap(p, A));
}

/*
 * KSM merging everything a process has (PR_SET_MEMORY_MERGE) leaves its
 * attachment alone: ksmd runs (full_scans advances) and merges the
 * process's private anonymous pages (pages_sharing rises, smaps shows
 * them as KSM), while the region's pages, identical to them, keep their
 * own frames and the data every sharer writes and reads.
 */
TEST_F_TIMEOUT(mm, ksm_prctl_merge_any, 90)
{
	const size_t size = 2 * MIB, n = size / PG;
	long scans, sharing, shared, merged = 0, seen = 0;
	uint64_t *pfn, kpfn;
	struct sharer s;
	double t0;
	size_t k;
	char *p, *priv;

	pfn = calloc(n + 1, sizeof(*pfn));
	ASSERT_NE(NULL, pfn);
	ASSERT_OK(set_knob(self, KSM_SCAN, "10000\n"));
	ASSERT_OK(set_knob(self, KSM_SLEEP, "10\n"));
	ASSERT_OK(set_knob(self, KSM_RUN, "1\n"));
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_MAPS(priv, mmap(NULL, size, RW, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0));
	ASSERT_OK(madvise(priv, size, MADV_NOHUGEPAGE));
	memset(p, 0x5a, size);
	memset(priv, 0x5a, size);
	scans = read_long(KSM_DIR "full_scans");
	sharing = read_long(KSM_DIR "pages_sharing");
	shared = read_long(KSM_DIR "pages_shared");
	ASSERT_LE(0, scans);
	ASSERT_LE(0, sharing);
	ASSERT_LE(0, shared);

	ASSERT_OK(prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0));
	/* Two full scans at least: a page is merged on its second. */
	t0 = now();
	while (now() < t0 + 60) {
		usleep(100000);
		seen = read_long(KSM_DIR "full_scans") - scans;
		merged = smaps_kb(priv, "KSM");
		if (seen >= 3 && merged == (long)(size / KIB))
			break;
	}
	sharing = read_long(KSM_DIR "pages_sharing") - sharing;
	TH_LOG("after %.1f s: full_scans +%ld, pages_shared +%ld, pages_sharing +%ld, KSM: %ld kB private, %ld kB region",
	       now() - t0, seen, read_long(KSM_DIR "pages_shared") - shared,
	       sharing, merged, smaps_kb(p, "KSM"));
	ASSERT_LE(3, seen);
	ASSERT_EQ((long)(size / KIB), merged);
	/* A KSM page may have a sibling in the stable tree: not n - 1. */
	ASSERT_LE((long)n / 2, sharing);

	/* The region: no KSM page, a frame of its own for each page. */
	ASSERT_EQ(0, smaps_kb(p, "KSM"));
	ASSERT_EQ((long)(size / KIB), smaps_kb(p, "Rss"));
	ASSERT_OK(pfns(priv, 1, &kpfn));
	ASSERT_OK(pfns(p, n, pfn));
	qsort(pfn, n, sizeof(*pfn), cmp_u64);
	pfn[n] = kpfn;
	for (k = 0; k < n; k++) {
		ASSERT_NE(0ULL, (unsigned long long)pfn[k]);
		ASSERT_NE(pfn[k], pfn[k + 1]) TH_LOG("frame %#llx shared",
						    (unsigned long long)pfn[k]);
		ASSERT_NE(kpfn, pfn[k]);
	}
	for (k = 0; k < size; k++) {
		ASSERT_EQ(0x5a, p[k]) TH_LOG("byte %#zx", k);
	}

	/* Writes after the scans land in the region, for every sharer. */
	fill(p, size, 61);
	s = (struct sharer){ self->fd, 0, size, 61, NULL };
	ASSERT_EQ(0, run_child(sharer_sees, &s));
	ASSERT_EQ(0, smaps_kb(p, "KSM"));
	ASSERT_OK(munmap(priv, size));
	ASSERT_OK(munmap(p, A));
	free(pfn);
}

/* ---- userfaultfd ------------------------------------------------------ */

/*
 * A writer registers its attachment; the registration goes with the
 * userfaultfd, and the region's data, there all along, stays.
 */
TEST_F(mm, uffd_register)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	const size_t size = MIB;
	char *p, *anon;
	int ufd;

	ufd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_OK(ioctl(ufd, UFFDIO_API, &api));
	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size, 70);

	reg.range.start = (unsigned long)p;
	reg.range.len = size;
	ASSERT_OK(ioctl(ufd, UFFDIO_REGISTER, &reg));
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	ASSERT_OK(ioctl(ufd, UFFDIO_REGISTER, &reg));

	/* The same file descriptor still registers ordinary memory. */
	ASSERT_MAPS(anon, mmap(NULL, size, RW, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0));
	reg.range.start = (unsigned long)anon;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_OK(ioctl(ufd, UFFDIO_REGISTER, &reg));
	/* Pages that are there never fault to it, nor writes to pages that
	 * were never write-protected. */
	ASSERT_PATTERN(p, size, 70);
	fill(p, size, 71);
	close(ufd);
	munmap(anon, size);

	ASSERT_PATTERN(p, size, 71);
	ASSERT_OK(madvise(p, size, MADV_DONTNEED));
	ASSERT_PATTERN(p, size, 71);
	ASSERT_OK(munmap(p, A));
}

/* ---- core dumps ------------------------------------------------------- */

#define OBJ1		MIB
#define OBJ2_OFF	(2 * MIB)
#define OBJ2		(64 * KIB)

struct dumper {
	const char *filter;
	char *p;
};

static int dump_core(void *arg)
{
	struct dumper *d = arg;
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };

	if (FAILED(!setrlimit(RLIMIT_CORE, &unlimited)) ||
	    FAILED(!write_str("/proc/self/coredump_filter", d->filter)))
		return 1;
	/* Make sure the region is linked in this process too. */
	if (FAILED(d->p[0] == pat(80, 0)))
		return 2;
	abort();
}

/*
 * Dump a child attached at @p with @filter; the PT_LOAD of the attachment
 * goes to *@ph, the core's fd is returned (-1 on error), the seconds the
 * dump took go to *@secs.
 */
static int core_of(char *p, const char *filter, Elf64_Phdr *ph, long *secs)
{
	struct dumper d = { filter, p };
	struct timespec t0, t1;
	Elf64_Ehdr eh;
	char path[64];
	int fd, st, i;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork_run(dump_core, &d);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs = t1.tv_sec - t0.tv_sec;
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT || !WCOREDUMP(st)) {
		ksft_print_msg("dumper status %#x\n", st);
		return -1;
	}
	snprintf(path, sizeof(path), "/tmp/core.%d", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	unlink(path);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, ph, sizeof(*ph), eh.e_phoff + i * sizeof(*ph)) !=
		    sizeof(*ph))
			break;
		if (ph->p_type == PT_LOAD && ph->p_vaddr == (unsigned long)p)
			return fd;
	}
	close(fd);
	return -1;
}


static void make_dump_region(struct __test_metadata *_metadata,
			     FIXTURE_DATA(mm) *self, char **p)
{
	ASSERT_OK(set_knob(self, CORE_PATTERN, "/tmp/core.%p\n"));
	ASSERT_OK(create_anon(self->fd, 0, OBJ1));
	ASSERT_OK(create_anon(self->fd, OBJ2_OFF, OBJ2));
	ASSERT_MAPS(*p, mshare_attach(self->fd, NULL, RW, 0));
	fill(*p, OBJ1, 80);
	fill(*p + OBJ2_OFF, OBJ2, 81);
}

/*
 * coredump_filter bit 3 (shared file mappings): the attachment is dumped
 * up to the end of the last object, holes as zeros, in seconds.
 */
TEST_F_TIMEOUT(mm, coredump_filter_bit3, 90)
{
	Elf64_Phdr ph;
	char zero[PG], buf[PG];
	long secs;
	char *p;
	int cfd;

	make_dump_region(_metadata, self, &p);
	cfd = core_of(p, "0x3f\n", &ph, &secs);
	ASSERT_LE(0, cfd);
	TH_LOG("p_filesz %#lx p_memsz %#lx in %ld s", (long)ph.p_filesz,
	       (long)ph.p_memsz, secs);
	ASSERT_EQ(OBJ2_OFF + OBJ2, ph.p_filesz);
	ASSERT_EQ(A, ph.p_memsz);
	ASSERT_GE(20, secs);
	ASSERT_EQ(-1, file_mismatch(cfd, ph.p_offset, OBJ1, 80));
	ASSERT_EQ(-1, file_mismatch(cfd, ph.p_offset + OBJ2_OFF, OBJ2, 81));
	memset(zero, 0, sizeof(zero));
	ASSERT_EQ((ssize_t)PG, pread(cfd, buf, PG, ph.p_offset + OBJ1));
	ASSERT_EQ(0, memcmp(buf, zero, PG));
	close(cfd);
	ASSERT_OK(munmap(p, A));
}

/*
 * Bit 3 clear: a linked region is not dumped. Once unlinked it is dumped
 * as anonymous shared memory would be: bit 1.
 */
TEST_F_TIMEOUT(mm, coredump_filter_bit3_clear, 90)
{
	Elf64_Phdr ph;
	long secs;
	char *p;
	int cfd;

	make_dump_region(_metadata, self, &p);
	cfd = core_of(p, "0x37\n", &ph, &secs);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0UL, ph.p_filesz);
	ASSERT_EQ(A, ph.p_memsz);
	close(cfd);

	ASSERT_OK(unlink(self->path));
	cfd = core_of(p, "0x37\n", &ph, &secs);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(OBJ2_OFF + OBJ2, ph.p_filesz);
	ASSERT_EQ(-1, file_mismatch(cfd, ph.p_offset + OBJ2_OFF, OBJ2, 81));
	close(cfd);
	cfd = core_of(p, "0x3d\n", &ph, &secs);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0UL, ph.p_filesz);
	close(cfd);
	ASSERT_PATTERN(p, OBJ1, 80);
	ASSERT_OK(munmap(p, A));
}

/* ---- /proc and mincore ------------------------------------------------ */

/* maps, smaps, smaps_rollup and status of a process attached twice. */
TEST_F(mm, proc_smaps)
{
	const size_t size = 4 * MIB;
	long rss, pss, rollup0, rollup1, mpte, pte;
	char line[1024];
	char *p, *q;

	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size, 90);

	ASSERT_OK(proc_line("maps", p, line, sizeof(line)));
	TH_LOG("maps: %s", line);
	ASSERT_NE(NULL, strstr(line, self->path));
	ASSERT_EQ((long)(size / KIB), smaps_kb(p, "Rss"));
	ASSERT_EQ((long)(size / KIB), smaps_kb(p, "Pss"));
	ASSERT_EQ((long)(size / KIB), smaps_kb(p, "Private_Dirty"));
	ASSERT_LT(0, smaps_kb(p, "MsharePTE"));
	rollup0 = mshare_proc_value("/proc/self/smaps_rollup", "Rss");

	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_PATTERN(q, size, 90);
	rss = smaps_kb(p, "Rss");
	pss = smaps_kb(p, "Pss");
	TH_LOG("two attachments: Rss %ld Pss %ld Shared_Dirty %ld", rss, pss,
	       smaps_kb(p, "Shared_Dirty"));
	ASSERT_EQ((long)(size / KIB), rss);
	ASSERT_EQ(rss / 2, pss);
	ASSERT_EQ(rss / 2, smaps_kb(q, "Pss"));
	ASSERT_EQ((long)(size / KIB), smaps_kb(p, "Shared_Dirty"));
	ASSERT_EQ(0, smaps_kb(p, "Private_Dirty"));
	ASSERT_LT(0, smaps_kb(q, "MsharePTE"));

	rollup1 = mshare_proc_value("/proc/self/smaps_rollup", "Rss");
	TH_LOG("smaps_rollup Rss %ld -> %ld kB", rollup0, rollup1);
	ASSERT_LE(rollup0 + (long)(size / KIB) - 64, rollup1);

	mpte = mshare_proc_value("/proc/self/status", "VmMsharePTE");
	pte = mshare_proc_value("/proc/self/status", "VmPTE");
	TH_LOG("VmMsharePTE %ld kB, VmPTE %ld kB", mpte, pte);
	ASSERT_LT(0, mpte);
	ASSERT_GT(200, pte);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	ASSERT_EQ(0, mshare_proc_value("/proc/self/status", "VmMsharePTE"));
}

#define PM_SOFT_DIRTY	(1ULL << 55)

/* Which of the @n (<= 64) pages from @p are soft-dirty, as a bitmask. */
static long soft_dirty_mask(const char *p, size_t n)
{
	uint64_t ent[64];
	long mask = 0;
	ssize_t got;
	size_t i;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || n > 64)
		return -1;
	got = pread(fd, ent, n * sizeof(*ent),
		    (unsigned long)p / PG * sizeof(*ent));
	close(fd);
	if (got != (ssize_t)(n * sizeof(*ent)))
		return -1;
	for (i = 0; i < n; i++)
		if (ent[i] & PM_SOFT_DIRTY)
			mask |= 1L << i;
	return mask;
}

/* Write the byte at @p with what it holds: a write all the same. */
static void rewrite(char *p)
{
	*(volatile char *)p = *(volatile char *)p;
}

/* Clear this process's soft-dirty bits: "4" to clear_refs. */
static int clear_soft_dirty(void)
{
	return write_str("/proc/self/clear_refs", "4");
}

/* A sharer of the soft-dirty tests, at an address of its own. */
struct sd_sharer {
	int fd;			/* the region, opened for reading or writing */
	int prot;
	size_t n;		/* pages of the object at offset 0 */
	bool clear;		/* clear its soft-dirty bits first */
	long want;		/* the region's soft-dirty pages it must see */
	int write;		/* the page it then writes, or -1 */
	char *inherited;	/* the parent's attachment, to detach first */
};

static int sd_sharer(void *arg)
{
	struct sd_sharer *sd = arg;
	char *q = mshare_attach(sd->fd, NULL, sd->prot, 0);
	long mask;

	if (FAILED(q != MAP_FAILED))
		return 1;
	/* A reader must not clear through the writer's attachment fork gave. */
	if (sd->inherited && FAILED(munmap(sd->inherited, A) == 0))
		return 2;
	if (sd->clear && FAILED(clear_soft_dirty() == 0))
		return 2;
	mask = soft_dirty_mask(q, sd->n);
	if (mask != sd->want)
		fprintf(stderr, "# soft-dirty at %p: %#lx, want %#lx\n", q,
			mask, sd->want);
	if (FAILED(mask == sd->want))
		return 3;
	if (sd->write >= 0)
		rewrite(q + sd->write * PG);
	return munmap(q, A) ? 4 : 0;
}

/*
 * Soft-dirty through attachments is the region's, as it is the process's
 * for threads: the bits live in the page tables everyone uses. A writer's
 * clear_refs clears them for every sharer (its own memory too, as ever);
 * a write by any sharer sets them for all; a reader's clear_refs leaves
 * the region alone, since clearing write-protects everyone's pages.
 */
TEST_F(mm, soft_dirty_region)
{
	struct sd_sharer sd = { .fd = self->fd, .prot = RW, .n = 16,
				.write = 5 };
	char *p, *own;

	SKIP_UNLESS_X86("soft-dirty bits");
	ASSERT_OK(create_anon(self->fd, 0, sd.n * PG));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, sd.n * PG, 45);
	ASSERT_MAPS(own, mmap(NULL, PG, RW, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0));
	own[0] = 1;
	ASSERT_EQ(0xffffL, soft_dirty_mask(p, sd.n));

	ASSERT_OK(clear_soft_dirty());
	ASSERT_EQ(0L, soft_dirty_mask(p, sd.n));
	ASSERT_EQ(0L, soft_dirty_mask(own, 1));
	ASSERT_EQ(0, run_child(sd_sharer, &sd));
	ASSERT_EQ(1L << 5, soft_dirty_mask(p, sd.n));

	sd.fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, sd.fd);
	sd.prot = PROT_READ;
	sd.clear = true;
	sd.want = 1L << 5;
	sd.write = -1;
	sd.inherited = p;
	ASSERT_EQ(0, run_child(sd_sharer, &sd));
	close(sd.fd);
	ASSERT_EQ(1L << 5, soft_dirty_mask(p, sd.n));
	ASSERT_PATTERN(p, sd.n * PG, 45);
	ASSERT_OK(munmap(own, PG));
	ASSERT_OK(munmap(p, A));
}

/* PAGEMAP_SCAN of [@start, @end) for soft-dirty pages, into @r. */
static long scan_soft_dirty(int pm, struct pm_scan_arg *arg, char *start,
			    char *end, struct page_region *r, size_t nr,
			    unsigned long flags)
{
	memset(arg, 0, sizeof(*arg));
	arg->size = sizeof(*arg);
	arg->flags = flags;
	arg->start = (unsigned long)start;
	arg->end = (unsigned long)end;
	arg->vec = (unsigned long)r;
	arg->vec_len = nr;
	arg->category_mask = PAGE_IS_SOFT_DIRTY;
	arg->return_mask = PAGE_IS_SOFT_DIRTY | PAGE_IS_PRESENT;
	return ioctl(pm, PAGEMAP_SCAN, arg);
}

/*
 * PAGEMAP_SCAN reports the region's pages through an attachment, at this
 * process's addresses, as it would those of a shared mapping of the
 * object: a hole of the region has none; a full buffer stops the scan
 * at this process's address of the next range. Write-protecting needs
 * userfaultfd, which attachments do not take: PM_SCAN_WP_MATCHING skips
 * them, PM_SCAN_CHECK_WPASYNC refuses them.
 */
TEST_F(mm, pagemap_scan_region)
{
	const size_t n = 16;
	struct page_region r[4];
	struct pm_scan_arg arg;
	char *p;
	int pm;

	SKIP_UNLESS_X86("soft-dirty bits");
	ASSERT_OK(create_anon(self->fd, 0, n * PG));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, n * PG, 46);
	ASSERT_OK(clear_soft_dirty());
	rewrite(p + 5 * PG);
	rewrite(p + 9 * PG);
	rewrite(p + 10 * PG);
	ASSERT_EQ((1L << 5) | (3L << 9), soft_dirty_mask(p, n));
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, pm);

	ASSERT_EQ(2, scan_soft_dirty(pm, &arg, p, p + 2 * n * PG, r, 4, 0))
		TH_LOG("PAGEMAP_SCAN: %s", strerror(errno));
	ASSERT_EQ((unsigned long)p + 5 * PG, r[0].start);
	ASSERT_EQ((unsigned long)p + 6 * PG, r[0].end);
	ASSERT_EQ((unsigned long)(PAGE_IS_SOFT_DIRTY | PAGE_IS_PRESENT),
		  r[0].categories);
	ASSERT_EQ((unsigned long)p + 9 * PG, r[1].start);
	ASSERT_EQ((unsigned long)p + 11 * PG, r[1].end);

	ASSERT_EQ(1, scan_soft_dirty(pm, &arg, p, p + n * PG, r, 1, 0));
	ASSERT_EQ((unsigned long)p + 5 * PG, r[0].start);
	ASSERT_EQ((unsigned long)p + 9 * PG, arg.walk_end);

	ASSERT_EQ(0, scan_soft_dirty(pm, &arg, p, p + n * PG, r, 4,
				     PM_SCAN_WP_MATCHING));
	ASSERT_FAILS(EPERM, scan_soft_dirty(pm, &arg, p, p + n * PG, r, 4,
					    PM_SCAN_CHECK_WPASYNC));
	ASSERT_EQ((1L << 5) | (3L << 9), soft_dirty_mask(p, n));
	close(pm);
	ASSERT_PATTERN(p, n * PG, 46);
	ASSERT_OK(munmap(p, A));
}

/* pagemap, numa_maps and mincore see the region's pages. */
TEST_F(mm, proc_pagemap_numa_maps_mincore)
{
	const size_t size = 2 * MIB, pages = size / PG;
	uint64_t ent[512];
	unsigned char vec[512];
	char line[1024];
	size_t i;
	char *p;
	int fd;

	ASSERT_OK(create_anon(self->fd, 0, size));
	ASSERT_MAPS(p, mshare_attach(self->fd, NULL, RW, 0));
	fill(p, size / 2, 91);

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(ent),
		  pread(fd, ent, sizeof(ent), (unsigned long)p / PG * 8));
	close(fd);
	for (i = 0; i < pages; i++)
		if ((i < pages / 2) != !!(ent[i] >> 63))
			break;
	ASSERT_EQ(pages, i) TH_LOG("pagemap of page %zu wrong", i);

	ASSERT_OK(mincore(p, size, vec));
	for (i = 0; i < pages; i++)
		if ((i < pages / 2) != (vec[i] & 1))
			break;
	ASSERT_EQ(pages, i) TH_LOG("mincore of page %zu wrong", i);

	ASSERT_OK(proc_line("numa_maps", p, line, sizeof(line)));
	TH_LOG("numa_maps: %s", line);
	ASSERT_TRUE(strstr(line, "dirty=") || strstr(line, "N0=") ||
		    strstr(line, "N1="));
	ASSERT_NE(NULL, strstr(line, "dirty=256"));
	ASSERT_PATTERN(p, size / 2, 91);
	ASSERT_OK(munmap(p, A));
}

__attribute__((constructor)) static void setup_globals(void)
{
	A = read_align();
}

TEST_HARNESS_MAIN
