// SPDX-License-Identifier: GPL-2.0
/*
 * What msharefs attachments share, and that nothing else can break that:
 *
 *  - page tables: 64 processes reading a populated 1 GiB object through
 *    their own attachments cost no more page-table memory than 64 empty
 *    processes, take at most two faults each, and their VmPTE does not
 *    grow; the same with a plain MAP_SHARED memfd is measured for
 *    comparison (and must be much more expensive);
 *  - TLB coherence: readers pinned to every CPU spin on an object while a
 *    writer replaces it (whole or in part) hundreds of times; after
 *    MSHAREFS_UNMAP returns, nobody may read the old memory any more;
 *  - every other memory system call on an attachment (m*, madvise, GUP
 *    users, ptrace, /proc files, userfaultfd, futexes, NUMA calls,
 *    O_DIRECT, vmsplice) acts on the region with the result
 *    msharefs.rst gives it, or fails with the errno it gives, and leaves
 *    the data and the attachment (one VMA) as they were; the detailed
 *    region-wide checks are in mshare_ops_test, mshare_gup_test and
 *    mshare_mm_test;
 *  - leaks: creating, populating, sharing and destroying a region gives
 *    back its page tables, shmem, slab and free memory, cycle after cycle.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y and msharefs mounted on
 * /sys/fs/mshare. The kernel log must stay clean (checked by the runner).
 *
 * Build: make -C tests, or
 *   gcc -static -O2 -Wall -Wextra -I<linux>/tools/testing/selftests \
 *       -I<uapi headers> -o mshare_share_test mshare_share_test.c -lpthread
 * Run:   ./mshare_share_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <inttypes.h>
#include <setjmp.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <linux/futex.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>

#include "mshare_test.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif

#define PAGE			4096UL
#define KIB			1024L
#define MIB			(1024L * KIB)

/* ------------------------------------------------------------------ */
/* Helpers: regions, objects, /proc                                    */
/* ------------------------------------------------------------------ */

/* A unique region path for this process: @tag and a counter. */
static void region_path(char *buf, size_t len, const char *tag)
{
	static int seq;

	snprintf(buf, len, MSHARE_DIR "/share-%s-%d-%d", tag, getpid(),
		 seq++);
}

/* Place an object: anonymous if @backing is -1, else that file. */
static int place(int fd, unsigned long off, unsigned long size, int prot,
		 int backing)
{
	return mshare_map(fd, off, size, prot, 0, backing, 0);
}

/*
 * Read a whole file into a malloc()ed, NUL-terminated buffer; NULL and
 * errno on error. Reads in small chunks, like any tool would.
 */
static char *read_all(const char *path, size_t *lenp)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, *nbuf;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - len < 1025) {
			cap = cap ? cap * 2 : 8192;
			nbuf = realloc(buf, cap);
			if (!nbuf)
				goto fail;
			buf = nbuf;
		}
		n = read(fd, buf + len, 1024);
		if (n < 0)
			goto fail;
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	n = errno;
	free(buf);
	close(fd);
	errno = n;
	return NULL;
}

static long vmpte_kb(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return mshare_proc_value(path, "VmPTE");
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read or write exactly @len bytes of a pipe; 0 or -1. */
static int read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = read(fd, buf, len);
		if (n <= 0)
			return -1;
		buf = (char *)buf + n;
		len -= n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n <= 0)
			return -1;
		buf = (const char *)buf + n;
		len -= n;
	}
	return 0;
}

/* Every child dies with the test process, whatever happens to it. */
static void child_init(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* The value test 1 and the leak test write at the start of page @i. */
static inline uint64_t page_value(unsigned long i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

/* Write page_value() into the first word of every page of [p, p+size). */
static void fill_pages(char *p, unsigned long size)
{
	unsigned long i;

	for (i = 0; i < size / PAGE; i++)
		*(volatile uint64_t *)(p + i * PAGE) = page_value(i);
}

/* How many pages of [p, p+size) do not start with page_value()? */
static unsigned long check_pages(const char *p, unsigned long size)
{
	unsigned long i, bad = 0;

	for (i = 0; i < size / PAGE; i++)
		if (*(volatile const uint64_t *)(p + i * PAGE) !=
		    page_value(i))
			bad++;
	return bad;
}

/*
 * Touch 32 KiB of stack, so that a forked child copies it on write now
 * and its later calls take no fault of their own there.
 */
static void __attribute__((noinline)) warm_stack(void)
{
	volatile char buf[32 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 512)
		buf[i] = 1;
}

/* A fixture with one sized region, for tests that need just that. */
FIXTURE(region) {
	char path[128];
	unsigned long align;
	int fd;
};

FIXTURE_SETUP(region)
{
	self->fd = -1;
	if (geteuid())
		SKIP(return, "needs root");
	if (!is_msharefs(MSHARE_DIR))
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	self->align = read_align();
	ASSERT_NE(0UL, self->align);
	region_path(self->path, sizeof(self->path), "r");
	self->fd = mshare_region_create(AT_FDCWD, self->path, 0600,
					self->align);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
}

FIXTURE_TEARDOWN(region)
{
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
}

/* ------------------------------------------------------------------ */
/* 1. Page tables are shared                                           */
/* ------------------------------------------------------------------ */

#define PT_OBJECT		(1UL << 30)
#define PT_CHILDREN		64
#define PT_MEMFD_CHILDREN	16
#define PT_SLACK_KB		8	/* per child */
#define PT_FAULTS_MAX		2

/* What each child of a pt_run() tells its parent. */
struct pt_report {
	pid_t pid;
	int err;		/* errno of a failed setup step, or 0 */
	long minflt;		/* minor faults, mmap to end of the loop */
	unsigned long bad;	/* pages with a wrong value */
};

/* What a child of pt_run() does before it reports and waits. */
struct pt_job {
	enum { PT_IDLE, PT_MSHARE, PT_MEMFD } kind;
	const char *path;	/* PT_MSHARE: the region */
	unsigned long size;	/* PT_MSHARE: the region size */
	int memfd;		/* PT_MEMFD */
};

/* What pt_run() measured while all its children were alive. */
struct pt_result {
	int n;
	long pt_rise_kb;	/* /proc/meminfo PageTables */
	long vmpte_min_kb, vmpte_max_kb;
	long flt_min, flt_max;
	unsigned long bad;
	int errs, exits;	/* children that failed setup / exit badly */
};

static void pt_child(const struct pt_job *job, struct pt_report *r)
{
	struct rusage ru0, ru1;
	const char *p;
	int fd = -1;

	warm_stack();
	if (job->kind == PT_IDLE)
		return;
	if (job->kind == PT_MSHARE) {
		fd = open(job->path, O_RDONLY);
		if (fd < 0) {
			r->err = errno;
			return;
		}
	}
	getrusage(RUSAGE_SELF, &ru0);
	getrusage(RUSAGE_SELF, &ru0);
	if (job->kind == PT_MSHARE)
		p = mmap(NULL, job->size, PROT_READ, MAP_SHARED, fd, 0);
	else
		p = mmap(NULL, PT_OBJECT, PROT_READ, MAP_SHARED, job->memfd, 0);
	if (p == MAP_FAILED) {
		r->err = errno;
		return;
	}
	r->bad = check_pages(p, PT_OBJECT);
	getrusage(RUSAGE_SELF, &ru1);
	r->minflt = ru1.ru_minflt - ru0.ru_minflt;
}

/*
 * Fork @n children that each do @job, report and then wait until the
 * parent lets them go. Measure the rise of PageTables, every child's
 * VmPTE and faults while all of them are alive.
 */
static int pt_run(const struct pt_job *job, int n, struct pt_result *res)
{
	int ready[2], release[2], i, rc = -1;
	long pt_before, pt_after;
	struct pt_report r;
	pid_t *pids;
	char c;

	memset(res, 0, sizeof(*res));
	res->vmpte_min_kb = res->flt_min = LONG_MAX;
	pids = calloc(n, sizeof(*pids));
	if (!pids || pipe(ready) || pipe(release))
		return -1;
	fflush(NULL);

	pt_before = meminfo_exact_kb("PageTables");
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			break;
		if (!pids[i]) {
			child_init();
			close(ready[0]);
			close(release[1]);
			memset(&r, 0, sizeof(r));
			r.pid = getpid();
			pt_child(job, &r);
			write_full(ready[1], &r, sizeof(r));
			while (read(release[0], &c, 1) > 0)
				;
			_exit(0);
		}
	}
	res->n = i;
	close(ready[1]);
	close(release[0]);
	for (i = 0; i < res->n; i++) {
		if (read_full(ready[0], &r, sizeof(r)))
			goto release;
		if (r.err) {
			res->errs++;
			ksft_print_msg("child %d: setup failed: %s\n", r.pid,
				       strerror(r.err));
			continue;
		}
		res->bad += r.bad;
		if (r.minflt < res->flt_min)
			res->flt_min = r.minflt;
		if (r.minflt > res->flt_max)
			res->flt_max = r.minflt;
	}
	pt_after = meminfo_exact_kb("PageTables");
	res->pt_rise_kb = pt_after - pt_before;
	for (i = 0; i < res->n; i++) {
		long kb = vmpte_kb(pids[i]);

		if (kb < res->vmpte_min_kb)
			res->vmpte_min_kb = kb;
		if (kb > res->vmpte_max_kb)
			res->vmpte_max_kb = kb;
	}
	rc = 0;
release:
	close(release[1]);
	close(ready[0]);
	for (i = 0; i < res->n; i++)
		if (wait_exit(pids[i]))
			res->exits++;
	free(pids);
	return rc;
}

static void pt_print(const char *what, const struct pt_result *res)
{
	ksft_print_msg("%-26s %2d children: PageTables +%ld kB (%ld kB each), VmPTE %ld..%ld kB, minor faults %ld..%ld\n",
		       what, res->n, res->pt_rise_kb,
		       res->n ? res->pt_rise_kb / res->n : 0,
		       res->vmpte_min_kb, res->vmpte_max_kb,
		       res->flt_min == LONG_MAX ? 0 : res->flt_min,
		       res->flt_max);
}

TEST_F_TIMEOUT(region, page_tables_are_shared, 900)
{
	struct pt_job idle = { .kind = PT_IDLE };
	struct pt_job ms = {
		.kind = PT_MSHARE, .path = self->path, .size = self->align,
	};
	struct pt_job mf = { .kind = PT_MEMFD };
	struct pt_result base, share, plain;
	long base_each_kb, plain_extra_kb;
	double t;
	char *p;

	/* One 1 GiB object, populated through our own attachment. */
	ASSERT_EQ(0, place(self->fd, 0, PT_OBJECT, PROT_READ | PROT_WRITE, -1))
		TH_LOG("create: %s", strerror(errno));
	p = mshare_attach(self->fd, NULL, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("attach: %s", strerror(errno));
	t = now_sec();
	fill_pages(p, PT_OBJECT);
	ksft_print_msg("populated 1 GiB in %.1f s\n", now_sec() - t);

	/* What 64 processes cost that attach nothing. */
	ASSERT_EQ(0, pt_run(&idle, PT_CHILDREN, &base));
	pt_print("baseline (idle)", &base);
	ASSERT_EQ(PT_CHILDREN, base.n);
	ASSERT_EQ(0, base.errs + base.exits);

	/* 64 processes that attach and read all of it. */
	t = now_sec();
	ASSERT_EQ(0, pt_run(&ms, PT_CHILDREN, &share));
	pt_print("msharefs 1 GiB", &share);
	ksft_print_msg("msharefs run took %.1f s\n", now_sec() - t);
	ASSERT_EQ(PT_CHILDREN, share.n);
	ASSERT_EQ(0, share.errs + share.exits);
	EXPECT_EQ(0UL, share.bad);
	EXPECT_LE(share.flt_max, PT_FAULTS_MAX);
	EXPECT_LE(share.pt_rise_kb, base.pt_rise_kb + PT_CHILDREN * PT_SLACK_KB)
		TH_LOG("PageTables rose %ld kB with msharefs, %ld kB idle",
		       share.pt_rise_kb, base.pt_rise_kb);
	EXPECT_LE(share.vmpte_max_kb, base.vmpte_max_kb + PT_SLACK_KB)
		TH_LOG("VmPTE %ld kB with msharefs, %ld kB idle",
		       share.vmpte_max_kb, base.vmpte_max_kb);

	/* Free the region's gigabyte before the memfd takes one. */
	ASSERT_EQ(0, munmap(p, self->align));
	ASSERT_EQ(0, mshare_unmap(self->fd, 0, PT_OBJECT));

	/* The same with a plain MAP_SHARED memfd, for comparison. */
	mf.memfd = memfd_sized("pt", MFD_CLOEXEC, PT_OBJECT);
	ASSERT_LE(0, mf.memfd);
	p = mmap(NULL, PT_OBJECT, PROT_READ | PROT_WRITE, MAP_SHARED,
		 mf.memfd, 0);
	ASSERT_NE(MAP_FAILED, p);
	fill_pages(p, PT_OBJECT);
	ASSERT_EQ(0, munmap(p, PT_OBJECT));
	t = now_sec();
	ASSERT_EQ(0, pt_run(&mf, PT_MEMFD_CHILDREN, &plain));
	close(mf.memfd);
	pt_print("plain memfd 1 GiB", &plain);
	ksft_print_msg("memfd run took %.1f s\n", now_sec() - t);
	ASSERT_EQ(PT_MEMFD_CHILDREN, plain.n);
	ASSERT_EQ(0, plain.errs + plain.exits);
	EXPECT_EQ(0UL, plain.bad);

	/* About 2 MiB and thousands of faults each: much more. */
	base_each_kb = base.pt_rise_kb / PT_CHILDREN;
	plain_extra_kb = plain.pt_rise_kb / PT_MEMFD_CHILDREN - base_each_kb;
	ksft_print_msg("page tables beyond an idle process: msharefs %ld kB, memfd %ld kB per child\n",
		       (share.pt_rise_kb - base.pt_rise_kb) / PT_CHILDREN,
		       plain_extra_kb);
	EXPECT_GE(plain_extra_kb, 1024);
	EXPECT_GE(plain.vmpte_min_kb, base.vmpte_max_kb + 1024);
	EXPECT_GE(plain.flt_min, 100 * PT_FAULTS_MAX);
}

/* ------------------------------------------------------------------ */
/* 2. TLB coherence                                                    */
/* ------------------------------------------------------------------ */

#define TLB_READERS	4
#define TLB_ROUNDS	300
#define TLB_OBJ_PAGES	4
#define TLB_WAIT_SEC	60
#define TLB_MARK	0x6d61726b6d61726bULL	/* never a generation */

/*
 * The writer's phases for generation N: the old object (N - 1) is being
 * unmapped, it is gone (a hole that stays until every reader has seen
 * it), the new object holds N. The state is N * TLB_PHASES + phase, so
 * it only grows.
 */
enum { PH_UNMAPPING, PH_UNMAPPED, PH_READY, TLB_PHASES };
#define TLB_STATE(gen, ph)	((uint64_t)(gen) * TLB_PHASES + (ph))
#define TLB_DONE		UINT64_MAX

struct tlb_stats {
	uint64_t reads, segvs;
	uint64_t stale;		/* old generation read after the unmap */
	uint64_t bad;		/* any other wrong outcome */
	uint64_t fixed_bad;	/* a page that stays mapped went wrong */
	uint64_t bad_state, bad_value, bad_segv;	/* the first bad one */
};

struct tlb_ctl {
	uint64_t state;
	uint64_t ack[TLB_READERS];	/* last state each reader confirmed */
	struct tlb_stats st[TLB_READERS];
};

/* Which part of the object the writer replaces every round. */
struct tlb_cfg {
	unsigned long hole_off, hole_pages;
};

static inline uint64_t load_acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_rel(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static sigjmp_buf tlb_jmp;

static void tlb_on_segv(int sig)
{
	siglongjmp(tlb_jmp, 1);
}

/* Read the word at @p into *@v; false if that raised SIGSEGV. */
static bool __attribute__((noinline)) tlb_read(const char *p, uint64_t *v)
{
	if (sigsetjmp(tlb_jmp, 0))
		return false;
	*v = *(volatile const uint64_t *)p;
	return true;
}

static bool in_hole(const struct tlb_cfg *cfg, unsigned long pg)
{
	return pg >= cfg->hole_off / PAGE &&
	       pg < cfg->hole_off / PAGE + cfg->hole_pages;
}

/*
 * Judge one read of a replaced page made in state @s1 (seen before it)
 * and @s2 (after). @acked: this reader had confirmed @s1 before reading.
 * Returns true if the reader may now confirm @s1.
 */
static bool tlb_judge(struct tlb_stats *st, uint64_t s1, uint64_t s2,
		      bool acked, bool ok, uint64_t v)
{
	uint64_t gen = s1 / TLB_PHASES;
	bool good, stale = false, confirm = false;

	switch (s1 % TLB_PHASES) {
	case PH_UNMAPPING:
		/* The old object until MSHAREFS_UNMAP is done, then none. */
		good = !ok || v == gen - 1;
		break;
	case PH_UNMAPPED:
		/*
		 * A hole, which the writer fills only once every reader has
		 * confirmed it: before our confirmation, only SIGSEGV; after
		 * it, the new object (0 until written, then gen) may be in.
		 */
		stale = ok && v && v < gen;
		good = !ok || (acked && (v == 0 || v == gen));
		confirm = !ok;
		break;
	default:
		/* The new object, unless the next round already began. */
		stale = ok && v && v < gen;
		good = ok ? v == gen : s2 != s1;
		confirm = ok && v == gen;
		break;
	}
	st->reads++;
	st->segvs += !ok;
	if (stale)
		st->stale++;
	else if (!good)
		st->bad++;
	if ((stale || !good) && !st->bad_state) {
		st->bad_state = s1;
		st->bad_value = v;
		st->bad_segv = !ok;
	}
	return confirm && !acked;
}

/* A reader: spin on the object at @base until the writer is done. */
static void tlb_reader(struct tlb_ctl *ctl, int id, const char *base,
		       const struct tlb_cfg *cfg)
{
	struct tlb_stats *st = &ctl->st[id];
	unsigned long n, pg, fixed = TLB_OBJ_PAGES - cfg->hole_pages;
	uint64_t s1, s2, v;
	bool ok, acked;

	for (n = 0;; n++) {
		s1 = load_acq(&ctl->state);
		if (s1 == TLB_DONE)
			break;
		acked = __atomic_load_n(&ctl->ack[id], __ATOMIC_RELAXED) == s1;
		pg = cfg->hole_off / PAGE + n % cfg->hole_pages;
		v = 0;
		ok = tlb_read(base + pg * PAGE, &v);
		s2 = load_acq(&ctl->state);
		if (tlb_judge(st, s1, s2, acked, ok, v))
			store_rel(&ctl->ack[id], s1);

		/* A page outside the replaced part never changes. */
		if (!fixed)
			continue;
		for (pg = n % TLB_OBJ_PAGES; in_hole(cfg, pg);
		     pg = (pg + 1) % TLB_OBJ_PAGES)
			;
		v = 0;
		ok = tlb_read(base + pg * PAGE, &v);
		if (!ok || v != TLB_MARK)
			st->fixed_bad++;
	}
}

/* Wait until every reader confirmed state @s; false on timeout. */
static bool tlb_wait_acks(struct tlb_ctl *ctl, uint64_t s)
{
	double end = now_sec() + TLB_WAIT_SEC;
	int i;

	for (i = 0; i < TLB_READERS; i++) {
		while (load_acq(&ctl->ack[i]) != s) {
			if (now_sec() > end)
				return false;
			sched_yield();
		}
	}
	return true;
}

/*
 * Fork a reader pinned to CPU @id % ncpus. Readers 0 and 1 use the
 * writer's attachment (inherited); 2 attaches read-only and 3 read-write
 * at addresses of their own.
 */
static pid_t tlb_fork_reader(struct tlb_ctl *ctl, int id, const char *path,
			     unsigned long size, char *inherited,
			     const struct tlb_cfg *cfg)
{
	struct sigaction sa = { .sa_handler = tlb_on_segv,
				.sa_flags = SA_NODEFER };
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	char *base = inherited;
	cpu_set_t cpus;
	pid_t pid;
	int fd;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	child_init();
	CPU_ZERO(&cpus);
	CPU_SET(id % (ncpus > 0 ? ncpus : 1), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		_exit(10);
	if (sigaction(SIGSEGV, &sa, NULL))
		_exit(11);
	if (id >= 2) {
		fd = open(path, id == 2 ? O_RDONLY : O_RDWR);
		if (fd < 0)
			_exit(12);
		base = mshare_attach(fd, NULL, id == 2 ? PROT_READ :
				     PROT_READ | PROT_WRITE, 0);
		if (base == MAP_FAILED || base == inherited)
			_exit(13);
		close(fd);
	}
	tlb_reader(ctl, id, base, cfg);
	_exit(0);
}

/*
 * Replace part @cfg of a TLB_OBJ_PAGES object TLB_ROUNDS times under four
 * spinning readers and check that none of them ever reads memory that
 * MSHAREFS_UNMAP removed.
 */
static void tlb_run(struct __test_metadata *_metadata, int rfd,
		    const char *path, unsigned long size,
		    const struct tlb_cfg *cfg)
{
	struct tlb_stats sum = { 0 };
	pid_t pids[TLB_READERS];
	unsigned long gen, pg, rounds = 0;
	struct tlb_ctl *ctl;
	bool timed_out = false;
	double t;
	char *w;
	int i, mfd, rc, failed_exits = 0;

	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	memset(ctl, 0, sizeof(*ctl));

	/* Generation 1 in the replaced pages, a mark in the others. */
	ASSERT_EQ(0, place(rfd, 0, TLB_OBJ_PAGES * PAGE,
			   PROT_READ | PROT_WRITE, -1));
	w = mshare_attach(rfd, NULL, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, w);
	for (pg = 0; pg < TLB_OBJ_PAGES; pg++)
		*(volatile uint64_t *)(w + pg * PAGE) =
			in_hole(cfg, pg) ? 1 : TLB_MARK;
	ctl->state = TLB_STATE(1, PH_READY);

	for (i = 0; i < TLB_READERS; i++) {
		pids[i] = tlb_fork_reader(ctl, i, path, size, w, cfg);
		ASSERT_LT(0, pids[i]);
	}
	timed_out = !tlb_wait_acks(ctl, TLB_STATE(1, PH_READY));

	t = now_sec();
	for (gen = 2; !timed_out && gen < TLB_ROUNDS + 2; gen++) {
		store_rel(&ctl->state, TLB_STATE(gen, PH_UNMAPPING));
		rc = mshare_unmap(rfd, cfg->hole_off, cfg->hole_pages * PAGE);
		if (rc) {
			TH_LOG("round %lu: MSHAREFS_UNMAP: %s", gen,
			       strerror(errno));
			break;
		}
		store_rel(&ctl->state, TLB_STATE(gen, PH_UNMAPPED));
		if (!tlb_wait_acks(ctl, TLB_STATE(gen, PH_UNMAPPED))) {
			timed_out = true;
			break;
		}

		/* Alternate anonymous memory and memfd as the backing. */
		mfd = -1;
		if (gen % 2) {
			mfd = memfd_sized("tlb", MFD_CLOEXEC,
					  cfg->hole_pages * PAGE);
			if (mfd < 0)
				break;
		}
		rc = place(rfd, cfg->hole_off, cfg->hole_pages * PAGE,
			   PROT_READ | PROT_WRITE, mfd);
		if (mfd >= 0)
			close(mfd);
		if (rc) {
			TH_LOG("round %lu: create: %s", gen, strerror(errno));
			break;
		}
		for (pg = 0; pg < cfg->hole_pages; pg++)
			*(volatile uint64_t *)(w + cfg->hole_off +
					       pg * PAGE) = gen;
		store_rel(&ctl->state, TLB_STATE(gen, PH_READY));
		if (!tlb_wait_acks(ctl, TLB_STATE(gen, PH_READY))) {
			timed_out = true;
			break;
		}
		rounds++;
	}
	t = now_sec() - t;

	store_rel(&ctl->state, TLB_DONE);
	for (i = 0; i < TLB_READERS; i++) {
		rc = wait_exit(pids[i]);
		if (rc) {
			TH_LOG("reader %d exited with %d", i, rc);
			failed_exits++;
		}
	}
	for (i = 0; i < TLB_READERS; i++) {
		struct tlb_stats *st = &ctl->st[i];

		ksft_print_msg("reader %d: %" PRIu64 " reads, %" PRIu64
			       " SIGSEGV, %" PRIu64 " stale, %" PRIu64
			       " bad, %" PRIu64 " bad on kept pages\n",
			       i, st->reads, st->segvs, st->stale, st->bad,
			       st->fixed_bad);
		if (st->bad_state)
			ksft_print_msg("reader %d: first bad read in generation %" PRIu64
				       " phase %" PRIu64 ": %s %#" PRIx64 "\n",
				       i, st->bad_state / TLB_PHASES,
				       st->bad_state % TLB_PHASES,
				       st->bad_segv ? "SIGSEGV" : "read",
				       st->bad_value);
		sum.reads += st->reads;
		sum.segvs += st->segvs;
		sum.stale += st->stale;
		sum.bad += st->bad;
		sum.fixed_bad += st->fixed_bad;
	}
	ksft_print_msg("%lu rounds in %.1f s: %" PRIu64 " reads, %" PRIu64
		       " SIGSEGV, %" PRIu64 " stale, %" PRIu64 " bad\n",
		       rounds, t, sum.reads, sum.segvs, sum.stale, sum.bad);

	EXPECT_FALSE(timed_out) TH_LOG("a reader stopped confirming");
	EXPECT_EQ(0, failed_exits);
	EXPECT_EQ((unsigned long)TLB_ROUNDS, rounds);
	EXPECT_EQ(0ULL, sum.stale);
	EXPECT_EQ(0ULL, sum.bad);
	EXPECT_EQ(0ULL, sum.fixed_bad);
	/* Every reader met the hole of every round. */
	EXPECT_LE((uint64_t)rounds * TLB_READERS, sum.segvs);
	munmap(w, size);
	munmap(ctl, sizeof(*ctl));
}

/* Replace the whole 16 KiB object every round. */
TEST_F_TIMEOUT(region, tlb_replace_whole_object, 600)
{
	static const struct tlb_cfg cfg = {
		.hole_off = 0, .hole_pages = TLB_OBJ_PAGES,
	};

	tlb_run(_metadata, self->fd, self->path, self->align, &cfg);
}

/* Replace only the second page of the 16 KiB object every round. */
TEST_F_TIMEOUT(region, tlb_replace_middle_page, 600)
{
	static const struct tlb_cfg cfg = { .hole_off = PAGE, .hole_pages = 1 };

	tlb_run(_metadata, self->fd, self->path, self->align, &cfg);
}

#define OWN_PAGES	64
#define OWN_ROUNDS	60

/*
 * A sharer that changes the region while it runs on its CPU alone flushes
 * only the changed range of its own attachment, at its own address, which
 * is not the region's (msharefs.rst). Unmap 1, 3 and 40 pages (40 is past
 * the kernel's single-page flush ceiling) of an object placed at an odd
 * region offset, right after writing them, and read them back through the
 * same attachment: a flush at a wrong address would leave the entries just
 * used, and the read would return the old page instead of SIGSEGV.
 */
TEST_F(region, tlb_own_attachment_range)
{
	static const unsigned long holes[] = { 1, 3, 40 };
	struct sigaction sa = { .sa_handler = tlb_on_segv,
				.sa_flags = SA_NODEFER };
	unsigned long obj = 2 * MIB + 5 * PAGE, r, i, k, n;
	unsigned long stale = 0, bad = 0, segvs = 0, want_segvs = 0;
	int cpu = sched_getcpu();
	cpu_set_t cpus;
	uint64_t v;
	char *w;
	bool ok;

	ASSERT_LE(0, cpu);
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));
	ASSERT_EQ(0, place(self->fd, obj, OWN_PAGES * PAGE,
			   PROT_READ | PROT_WRITE, -1));
	w = mshare_attach(self->fd, NULL, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, w);
	w += obj;

	for (r = 1; r <= OWN_ROUNDS; r++) {
		n = holes[r % 3];
		k = (r * 7) % (OWN_PAGES - n + 1);
		for (i = 0; i < OWN_PAGES; i++)
			*(volatile uint64_t *)(w + i * PAGE) = r;
		ASSERT_EQ(0, mshare_unmap(self->fd, obj + k * PAGE, n * PAGE));
		for (i = 0; i < OWN_PAGES; i++) {
			v = 0;
			ok = tlb_read(w + i * PAGE, &v);
			if (i < k || i >= k + n)
				bad += !ok || v != r;
			else if (ok)
				stale++;
			else
				segvs++;
		}
		want_segvs += n;
		ASSERT_EQ(0, place(self->fd, obj + k * PAGE, n * PAGE,
				   PROT_READ | PROT_WRITE, -1));
		for (i = k; i < k + n; i++) {
			v = 1;
			ok = tlb_read(w + i * PAGE, &v);
			bad += !ok || v != 0;
		}
	}
	ksft_print_msg("%d rounds on CPU %d: %lu SIGSEGV, %lu stale, %lu bad\n",
		       OWN_ROUNDS, cpu, segvs, stale, bad);
	EXPECT_EQ(0UL, stale);
	EXPECT_EQ(0UL, bad);
	EXPECT_EQ(want_segvs, segvs);
	munmap(w - obj, self->align);
}

#define SLEEPERS	3
#define SLEEP_ROUNDS	150

/* A sleeper's report of one round: what it read, and whether it could. */
struct sleep_report {
	uint64_t value;
	uint64_t ok;
};

/*
 * Sleeper @id: block until the parent sends a round, read the first page
 * of the object through the attachment at @base and report what it read;
 * round 0 ends it (each sleeper holds the others' pipes, so none would
 * see an end of file).
 */
static void sleeper(int id, const char *base, int go, int done)
{
	struct sigaction sa = { .sa_handler = tlb_on_segv,
				.sa_flags = SA_NODEFER };
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct sleep_report rep;
	uint64_t round;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET((id + 1) % (ncpus > 0 ? ncpus : 1), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) ||
	    sigaction(SIGSEGV, &sa, NULL))
		_exit(10);
	while (read(go, &round, sizeof(round)) == sizeof(round) && round) {
		rep.value = 0;
		rep.ok = tlb_read(base, &rep.value);
		if (write(done, &rep, sizeof(rep)) != sizeof(rep))
			_exit(11);
	}
	_exit(0);
}

/*
 * Sharers that sleep are not interrupted for a change; they catch up when
 * their CPU loads them again (msharefs.rst). Each of three sleepers, on a
 * CPU of its own, reads the object's page, which caches its entry, and
 * blocks: its CPU idles with the sleeper's address space still loaded
 * (lazy TLB). The parent then replaces the page by one holding the next
 * round's value and wakes them; each must read that value, where a stale
 * entry would still show the last round's. Under QEMU, loading CR3 empties
 * the whole TLB, so only a CPU that stayed lazy can keep a stale entry for
 * this test to see.
 */
TEST_F_TIMEOUT(region, tlb_sleeping_sharers, 300)
{
	int go[SLEEPERS][2], done[SLEEPERS][2], mfd[2] = { -1, -1 };
	unsigned long stale = 0, bad = 0, r;
	struct sleep_report rep;
	pid_t pids[SLEEPERS];
	cpu_set_t cpus;
	uint64_t round;
	char *w;
	int i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < SLEEPERS + 1)
		SKIP(return, "needs %d CPUs", SLEEPERS + 1);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, place(self->fd, 0, PAGE, PROT_READ | PROT_WRITE, -1));
	w = mshare_attach(self->fd, NULL, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, w);
	*(volatile uint64_t *)w = 1;

	for (i = 0; i < SLEEPERS; i++) {
		ASSERT_EQ(0, pipe(go[i]));
		ASSERT_EQ(0, pipe(done[i]));
		fflush(NULL);
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			child_init();
			sleeper(i, w, go[i][0], done[i][1]);
		}
		close(go[i][0]);
		close(done[i][1]);
	}

	for (r = 1; r <= SLEEP_ROUNDS; r++) {
		round = r;
		for (i = 0; i < SLEEPERS; i++)
			ASSERT_EQ((ssize_t)sizeof(round),
				  write(go[i][1], &round, sizeof(round)));
		for (i = 0; i < SLEEPERS; i++) {
			ASSERT_EQ((ssize_t)sizeof(rep),
				  read(done[i][0], &rep, sizeof(rep)));
			if (rep.ok && rep.value == r - 1)
				stale++;
			else if (!rep.ok || rep.value != r)
				bad++;
		}
		/*
		 * The sleepers block again, their CPUs idle: replace the page.
		 * The old one stays in its memfd until the next round is read,
		 * so that a stale entry reads its old value, not a page that
		 * was reused meanwhile.
		 */
		usleep(2000);
		if (mfd[r % 2] >= 0)
			close(mfd[r % 2]);
		mfd[r % 2] = memfd_sized("sleep", MFD_CLOEXEC, PAGE);
		ASSERT_LE(0, mfd[r % 2]);
		ASSERT_EQ(0, mshare_unmap(self->fd, 0, PAGE));
		ASSERT_EQ(0, place(self->fd, 0, PAGE,
				   PROT_READ | PROT_WRITE, mfd[r % 2]));
		*(volatile uint64_t *)w = r + 1;
	}
	for (i = 0; i < 2; i++)
		if (mfd[i] >= 0)
			close(mfd[i]);
	round = 0;
	for (i = 0; i < SLEEPERS; i++) {
		EXPECT_EQ((ssize_t)sizeof(round),
			  write(go[i][1], &round, sizeof(round)));
		close(go[i][1]);
		EXPECT_EQ(0, wait_exit(pids[i]));
		close(done[i][0]);
	}
	ksft_print_msg("%d sleepers, %d rounds: %lu stale, %lu bad\n",
		       SLEEPERS, SLEEP_ROUNDS, stale, bad);
	EXPECT_EQ(0UL, stale);
	EXPECT_EQ(0UL, bad);
	munmap(w, self->align);
}

/* ------------------------------------------------------------------ */
/* 3. Every other system call on an attachment acts on the region      */
/* ------------------------------------------------------------------ */

#define OBJ_SIZE	(2 * MIB)
#define OBJ_WORDS	(OBJ_SIZE / sizeof(uint64_t))

static inline uint64_t word_value(unsigned long i)
{
	return (i ^ 0x5eed) * 0xff51afd7ed558ccdULL + 7;
}

/* A region with a 2 MiB anonymous object full of word_value(), attached. */
FIXTURE(attached) {
	char path[128];
	unsigned long align;
	int fd;
	char *p;
};

FIXTURE_SETUP(attached)
{
	uint64_t *w;
	unsigned long i;

	self->fd = -1;
	self->p = MAP_FAILED;
	if (geteuid())
		SKIP(return, "needs root");
	if (!is_msharefs(MSHARE_DIR))
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	self->align = read_align();
	ASSERT_NE(0UL, self->align);
	region_path(self->path, sizeof(self->path), "a");
	self->fd = mshare_region_create(AT_FDCWD, self->path, 0600,
					self->align);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
	ASSERT_EQ(0, place(self->fd, 0, OBJ_SIZE, PROT_READ | PROT_WRITE, -1));
	self->p = mshare_attach(self->fd, NULL, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, self->p);
	w = (uint64_t *)self->p;
	for (i = 0; i < OBJ_WORDS; i++)
		w[i] = word_value(i);
}

FIXTURE_TEARDOWN(attached)
{
	if (self->p != MAP_FAILED)
		munmap(self->p, self->align);
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
}

/* Words of [p, p + OBJ_SIZE) that do not hold word_value(). */
static unsigned long obj_bad_words(const char *p)
{
	const volatile uint64_t *w = (const volatile uint64_t *)p;
	unsigned long i, bad = 0;

	for (i = 0; i < OBJ_WORDS; i++)
		bad += w[i] != word_value(i);
	return bad;
}

/*
 * The object is intact through our attachment, through the one a forked
 * child inherits, and through a second, read-only attachment the child
 * makes; and our attachment is still writable.
 */
static void assert_intact(struct __test_metadata *_metadata,
			  FIXTURE_DATA(attached) *self)
{
	volatile uint64_t *w = (volatile uint64_t *)self->p;
	pid_t pid;
	char *q;
	int fd;

	ASSERT_EQ(0UL, obj_bad_words(self->p));
	w[OBJ_WORDS - 1] = word_value(OBJ_WORDS - 1);

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		child_init();
		if (obj_bad_words(self->p))
			_exit(1);
		fd = open(self->path, O_RDONLY);
		if (fd < 0)
			_exit(2);
		q = mshare_attach(fd, NULL, PROT_READ, 0);
		if (q == MAP_FAILED || q == self->p)
			_exit(3);
		_exit(obj_bad_words(q) ? 4 : 0);
	}
	ASSERT_EQ(0, wait_exit(pid))
		TH_LOG("child: 1 inherited attachment corrupt, 2 open, 3 attach, 4 second attachment corrupt");
}

static int do_load(void *arg)
{
	(void)*(volatile char *)arg;
	return 0;
}

/* Store what is there already: the data stays as it was. */
static int do_store(void *arg)
{
	volatile char *c = arg;

	*c = *c;
	return 0;
}

/* Load (store) a byte at @p in a child: 0, or 128 + the signal. */
static int child_load(char *p)
{
	return run_child(do_load, p);
}

static int child_store(char *p)
{
	return run_child(do_store, p);
}

/*
 * Run @call, print what it did and check that it succeeded (0 in the list
 * of outcomes) or failed with one of the listed errnos.
 */
static bool outcome_ok(const char *what, long ret, int err,
		       const int *ok, size_t n)
{
	int got = ret == -1 ? err : 0;
	size_t i;

	ksft_print_msg("%s -> %s\n", what, got ? strerror(got) : "success");
	for (i = 0; i < n; i++)
		if (ok[i] == got)
			return true;
	return false;
}

#define CHECK_RES(what, ret, err, ...) ({				\
	const int _ok[] = { __VA_ARGS__ };				\
	long _ret = (ret);						\
	int _err = (err);						\
									\
	EXPECT_TRUE(outcome_ok(what, _ret, _err, _ok, ARRAY_SIZE(_ok)))	\
		TH_LOG("%s: unexpected %s", what,			\
		       _ret == -1 ? strerror(_err) : "success");	\
	_ret;								\
})
#define __CHECK(what, call, ...) ({					\
	long _cret;							\
	int _cerr;							\
									\
	errno = 0;							\
	_cret = (long)(call);						\
	_cerr = errno;							\
	CHECK_RES(what, _cret, _cerr, __VA_ARGS__);			\
})
#define CHECK(call, ...)	__CHECK(#call, call, __VA_ARGS__)

/* The /proc/self/maps line of the attachment at @p; false if none. */
static bool maps_line(const char *p, char *line, size_t len)
{
	char *maps = read_all("/proc/self/maps", NULL), *s, *nl;
	char start[32];
	bool found = false;

	if (!maps)
		return false;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)p);
	for (s = maps; s && *s; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		if (!strncmp(s, start, strlen(start))) {
			snprintf(line, len, "%.*s",
				 (int)(nl ? nl - s : (long)strlen(s)), s);
			found = true;
			break;
		}
	}
	free(maps);
	return found;
}

/* The attachment is still one rw shared VMA covering the whole region. */
static void assert_vma_unchanged(struct __test_metadata *_metadata,
				 FIXTURE_DATA(attached) *self)
{
	char line[512], want[64];

	ASSERT_TRUE(maps_line(self->p, line, sizeof(line)));
	snprintf(want, sizeof(want), "%lx-%lx rw-s ",
		 (unsigned long)self->p,
		 (unsigned long)self->p + self->align);
	ASSERT_EQ(0, strncmp(line, want, strlen(want)))
		TH_LOG("maps: '%s', wanted '%s...'", line, want);
}

/*
 * mprotect() changes the protection of the objects, for every sharer,
 * never the attachment itself: it stays one rw-s VMA. Holes are ENOMEM,
 * PROT_EXEC is EACCES.
 */
TEST_F(attached, mprotect_keeps_the_vma)
{
	char *p = self->p;

	CHECK(mprotect(p + MIB, MIB, PROT_READ), 0);
	assert_vma_unchanged(_metadata, self);
	EXPECT_EQ(128 + SIGSEGV, child_store(p + MIB + PAGE));
	EXPECT_EQ(0, child_store(p + PAGE));
	if (HAVE_PKEYS)
		CHECK(syscall(__NR_pkey_mprotect, p + MIB, MIB,
			      PROT_READ | PROT_WRITE, -1), 0);
	else
		CHECK(mprotect(p + MIB, MIB, PROT_READ | PROT_WRITE), 0);
	EXPECT_EQ(0, child_store(p + MIB + PAGE));
	CHECK(mprotect(p, PAGE, PROT_NONE), 0);
	EXPECT_EQ(128 + SIGSEGV, child_load(p));
	CHECK(mprotect(p, PAGE, PROT_READ | PROT_WRITE), 0);
	/* Holes: the attachment, or a page past the object. */
	CHECK(mprotect(p + self->align - PAGE, PAGE, PROT_READ), ENOMEM);
	CHECK(mprotect(p + OBJ_SIZE, PAGE, PROT_READ), ENOMEM);
	CHECK(mprotect(p, self->align, PROT_READ | PROT_WRITE), ENOMEM);
	/* msharefs is noexec, objects hold no code. */
	CHECK(mprotect(p, OBJ_SIZE, PROT_READ | PROT_EXEC), EACCES);
	assert_vma_unchanged(_metadata, self);
	assert_intact(_metadata, self);
}

/* What madvise() of part of an object, of an object, of all gives. */
struct advice {
	int advice;
	int part, object, whole;	/* 0 or the errno */
};

/*
 * Every advice from MADV_NORMAL to MADV_COLLAPSE (but MADV_REMOVE, which
 * discards the data: see mshare_ops_test): advice for the region's pages
 * applies to the objects and reports the holes (ENOMEM); DONTFORK and
 * DOFORK act on the whole attachment only; the rest is refused.
 */
static const struct advice advices[] = {
	{ MADV_NORMAL, 0, 0, ENOMEM },
	{ MADV_RANDOM, 0, 0, ENOMEM },
	{ MADV_SEQUENTIAL, 0, 0, ENOMEM },
	{ MADV_WILLNEED, 0, 0, ENOMEM },
	{ MADV_DONTNEED, 0, 0, ENOMEM },
	{ 5, EINVAL, EINVAL, EINVAL },
	{ 6, EINVAL, EINVAL, EINVAL },
	{ 7, EINVAL, EINVAL, EINVAL },
	{ MADV_FREE, EINVAL, EINVAL, EINVAL },
	{ MADV_DONTFORK, EINVAL, EINVAL, 0 },
	{ MADV_DOFORK, EINVAL, EINVAL, 0 },
	{ MADV_MERGEABLE, EINVAL, EINVAL, EINVAL },
	{ MADV_UNMERGEABLE, EINVAL, EINVAL, EINVAL },
	{ MADV_HUGEPAGE, 0, 0, ENOMEM },
	{ MADV_NOHUGEPAGE, 0, 0, ENOMEM },
	{ MADV_DONTDUMP, EINVAL, EINVAL, EINVAL },
	{ MADV_DODUMP, EINVAL, EINVAL, EINVAL },
	{ MADV_WIPEONFORK, EINVAL, EINVAL, EINVAL },
	{ MADV_KEEPONFORK, EINVAL, EINVAL, EINVAL },
	{ MADV_COLD, 0, 0, ENOMEM },
	{ MADV_PAGEOUT, 0, 0, ENOMEM },
	{ MADV_POPULATE_READ, 0, 0, ENOMEM },
	{ MADV_POPULATE_WRITE, 0, 0, ENOMEM },
	{ MADV_DONTNEED_LOCKED, 0, 0, ENOMEM },
	{ MADV_COLLAPSE, EINVAL, EINVAL, EINVAL },
};

TEST_F(attached, madvise_each_advice)
{
	const struct advice *a;
	char what[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(advices); i++) {
		a = &advices[i];
		snprintf(what, sizeof(what), "madvise(page 1, %d)", a->advice);
		__CHECK(what, madvise(self->p + PAGE, PAGE, a->advice),
			a->part);
		snprintf(what, sizeof(what), "madvise(object, %d)", a->advice);
		__CHECK(what, madvise(self->p, OBJ_SIZE, a->advice),
			a->object);
		snprintf(what, sizeof(what), "madvise(whole, %d)", a->advice);
		__CHECK(what, madvise(self->p, self->align, a->advice),
			a->whole);
		EXPECT_EQ(0UL, obj_bad_words(self->p))
			TH_LOG("data changed by advice %d", a->advice);
	}
	/* The whole attachment is MADV_DOFORK again: a child inherits it. */
	assert_vma_unchanged(_metadata, self);
	assert_intact(_metadata, self);
}

/* process_madvise() takes the advice it allows, for the region. */
TEST_F(attached, process_madvise_acts_on_region)
{
	struct iovec iov = { .iov_base = self->p, .iov_len = OBJ_SIZE };
	static const struct {
		int advice, err;
	} advs[] = {
		{ MADV_COLD, 0 }, { MADV_PAGEOUT, 0 }, { MADV_WILLNEED, 0 },
		{ MADV_COLLAPSE, EINVAL },
	};
	char what[64];
	unsigned int i;
	long ret;
	int pidfd;

	pidfd = syscall(__NR_pidfd_open, getpid(), 0);
	ASSERT_LE(0, pidfd);
	for (i = 0; i < ARRAY_SIZE(advs); i++) {
		snprintf(what, sizeof(what), "process_madvise(%d)",
			 advs[i].advice);
		ret = __CHECK(what, syscall(__NR_process_madvise, pidfd, &iov,
					    1, advs[i].advice, 0),
			      advs[i].err);
		if (!advs[i].err)
			EXPECT_EQ((long)OBJ_SIZE, ret);
	}
	close(pidfd);
	assert_intact(_metadata, self);
}

/*
 * mlock() locks the objects for every sharer and faults them in; holes
 * are ENOMEM; mlockall() and munlockall() leave the attachment one VMA,
 * and none of it counts in this process's VmLck.
 */
TEST_F(attached, mlock_locks_region)
{
	char *p = self->p;

	CHECK(mlock(p, PAGE), 0);
	CHECK(mlock(p, OBJ_SIZE), 0);
	EXPECT_EQ(0, mshare_proc_value("/proc/self/status", "VmLck"));
	/* Locked pages cannot be dropped: MADV_DONTNEED refuses them. */
	CHECK(madvise(p, OBJ_SIZE, MADV_DONTNEED), EINVAL);
	CHECK(mlock(p, self->align), ENOMEM);
	CHECK(syscall(__NR_mlock2, p, OBJ_SIZE, MLOCK_ONFAULT), 0);
	CHECK(munlock(p, OBJ_SIZE), 0);
	CHECK(madvise(p, OBJ_SIZE, MADV_DONTNEED), 0);
	CHECK(munlock(p, self->align), ENOMEM);
	CHECK(mlockall(MCL_CURRENT), 0);
	assert_vma_unchanged(_metadata, self);
	CHECK(madvise(p, OBJ_SIZE, MADV_DONTNEED), EINVAL);
	CHECK(munlockall(), 0);
	assert_vma_unchanged(_metadata, self);
	CHECK(madvise(p, OBJ_SIZE, MADV_DONTNEED), 0);
	assert_intact(_metadata, self);
}

/* mincore() reports the region's pages: the object's are all resident. */
TEST_F(attached, mincore_reports_region)
{
	unsigned char vec[OBJ_SIZE / PAGE];
	unsigned long i, resident = 0;

	memset(vec, 0, sizeof(vec));
	CHECK(mincore(self->p, OBJ_SIZE, vec), 0);
	for (i = 0; i < ARRAY_SIZE(vec); i++)
		resident += vec[i] & 1;
	ksft_print_msg("mincore: %lu of %zu pages resident\n", resident,
		       ARRAY_SIZE(vec));
	EXPECT_EQ(ARRAY_SIZE(vec), resident);
	/* A page in the hole beyond the object. */
	vec[0] = 0xff;
	CHECK(mincore(self->p + OBJ_SIZE, PAGE, vec), 0);
	EXPECT_EQ(0, vec[0] & 1);
	assert_intact(_metadata, self);
}

/* msync() of anonymous objects has nothing to write back: it succeeds. */
TEST_F(attached, msync)
{
	CHECK(msync(self->p, OBJ_SIZE, MS_ASYNC), 0);
	CHECK(msync(self->p, self->align, MS_ASYNC), 0);
	CHECK(msync(self->p, OBJ_SIZE, MS_SYNC), 0);
	CHECK(msync(self->p, self->align, MS_SYNC), 0);
	CHECK(msync(self->p, OBJ_SIZE, MS_INVALIDATE), 0);
	CHECK(msync(self->p, OBJ_SIZE, MS_INVALIDATE | MS_ASYNC), 0);
	CHECK(msync(self->p, OBJ_SIZE, MS_SYNC | MS_ASYNC), EINVAL);
	CHECK(msync(self->p + 1, PAGE, MS_SYNC), EINVAL);
	assert_intact(_metadata, self);
}

/* An aligned, free range of @size bytes (reserved, then released). */
static char *free_aligned_range(unsigned long align, unsigned long size)
{
	char *r = mmap(NULL, size + align, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (r == MAP_FAILED)
		return NULL;
	a = (char *)(((unsigned long)r + align - 1) & ~(align - 1));
	munmap(r, size + align);
	return a;
}

/* Is anything mapped at @p? */
static bool mapped(const char *p)
{
	unsigned char v;

	return !mincore((void *)p, PAGE, &v) || errno != ENOMEM;
}

TEST_F(attached, mremap_refused)
{
	unsigned long a = self->align;
	char *p = self->p, *to;

	to = free_aligned_range(a, a);
	ASSERT_NE(NULL, to);
	CHECK(mremap(p, a, a, MREMAP_MAYMOVE | MREMAP_FIXED, to), EINVAL);
	CHECK(mremap(p, a, a, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, to), EINVAL);
	CHECK(mremap(p, a, 2 * a, MREMAP_MAYMOVE), EINVAL);
	CHECK(mremap(p, a, a + PAGE, 0), EINVAL);
	CHECK(mremap(p, a, a / 2, 0), EINVAL);
	CHECK(mremap(p, a, PAGE, MREMAP_MAYMOVE), EINVAL);
	CHECK(mremap(p, OBJ_SIZE, OBJ_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED,
		     to), EINVAL);
	CHECK(mremap(p + PAGE, PAGE, 2 * PAGE, MREMAP_MAYMOVE), EINVAL);
	EXPECT_FALSE(mapped(to));
	EXPECT_FALSE(mapped(to + OBJ_SIZE - PAGE));
	assert_vma_unchanged(_metadata, self);
	assert_intact(_metadata, self);
}

TEST_F(attached, partial_munmap_refused)
{
	unsigned long a = self->align;
	char *p = self->p;

	CHECK(munmap(p, PAGE), EINVAL);
	CHECK(munmap(p + PAGE, PAGE), EINVAL);
	CHECK(munmap(p, OBJ_SIZE), EINVAL);
	CHECK(munmap(p + a / 2, a / 2), EINVAL);
	CHECK(munmap(p + a - PAGE, PAGE), EINVAL);
	CHECK(munmap(p + a - PAGE, 2 * PAGE), EINVAL);
	CHECK(munmap(p - PAGE, 2 * PAGE), EINVAL);
	assert_vma_unchanged(_metadata, self);
	assert_intact(_metadata, self);
}

/*
 * process_vm_readv() and writev() of @pid's attachment: the results, and
 * the words read that do not hold word_value(). Page 1 of the object is
 * read, then written with word_value() ^ 1 and restored.
 */
struct pvm_result {
	long rret, wret, wret2;
	int rerr, werr, werr2;
	unsigned long bad;
};

static void pvm_try(pid_t pid, char *remote, struct pvm_result *r)
{
	static uint64_t buf[PAGE / sizeof(uint64_t)];
	const unsigned long w0 = PAGE / sizeof(uint64_t);
	struct iovec local = { .iov_base = buf, .iov_len = PAGE };
	struct iovec rem = { .iov_base = remote + PAGE, .iov_len = PAGE };
	unsigned long i;

	memset(buf, 0, sizeof(buf));
	errno = 0;
	r->rret = process_vm_readv(pid, &local, 1, &rem, 1, 0);
	r->rerr = errno;
	r->bad = 0;
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		r->bad += buf[i] != word_value(w0 + i);
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		buf[i] = word_value(w0 + i) ^ 1;
	errno = 0;
	r->wret = process_vm_writev(pid, &local, 1, &rem, 1, 0);
	r->werr = errno;
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		buf[i] = word_value(w0 + i);
	errno = 0;
	r->wret2 = process_vm_writev(pid, &local, 1, &rem, 1, 0);
	r->werr2 = errno;
}

/* Work on the region's pages, from this process and from a child. */
TEST_F(attached, process_vm_rw_works)
{
	volatile uint64_t *w = (volatile uint64_t *)(self->p + PAGE);
	const unsigned long w0 = PAGE / sizeof(uint64_t);
	struct pvm_result r;
	int fds[2];
	pid_t pid;

	pvm_try(getpid(), self->p, &r);
	CHECK_RES("process_vm_readv(self)", r.rret, r.rerr, 0);
	EXPECT_EQ((long)PAGE, r.rret);
	EXPECT_EQ(0UL, r.bad);
	CHECK_RES("process_vm_writev(self)", r.wret, r.werr, 0);
	EXPECT_EQ((long)PAGE, r.wret);
	CHECK_RES("process_vm_writev(self, again)", r.wret2, r.werr2, 0);
	EXPECT_EQ(word_value(w0 + 5), w[5]);

	/* In a hole: nothing to move. */
	CHECK(process_vm_readv(getpid(),
			       &(struct iovec){ .iov_base = &r, .iov_len = 8 },
			       1,
			       &(struct iovec){ .iov_base = self->p + OBJ_SIZE,
						.iov_len = 8 }, 1, 0), EFAULT);

	/* A child (which inherited the attachment) on its parent. */
	ASSERT_EQ(0, pipe(fds));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		child_init();
		(void)*(volatile char *)self->p;
		pvm_try(getppid(), self->p, &r);
		write_full(fds[1], &r, sizeof(r));
		_exit(0);
	}
	close(fds[1]);
	ASSERT_EQ(0, read_full(fds[0], &r, sizeof(r)));
	close(fds[0]);
	ASSERT_EQ(0, wait_exit(pid));
	CHECK_RES("process_vm_readv(child on parent)", r.rret, r.rerr, 0);
	EXPECT_EQ(0UL, r.bad);
	CHECK_RES("process_vm_writev(child on parent)", r.wret, r.werr, 0);
	CHECK_RES("process_vm_writev(child on parent, again)", r.wret2,
		  r.werr2, 0);
	assert_intact(_metadata, self);
}

/* /proc/self/mem reads and writes the region's pages; a hole is EIO. */
TEST_F(attached, proc_self_mem_works)
{
	volatile uint64_t *w = (volatile uint64_t *)self->p;
	uint64_t buf[PAGE / sizeof(uint64_t)], v;
	unsigned long i;
	int fd;

	fd = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, fd);
	memset(buf, 0, sizeof(buf));
	CHECK(pread(fd, buf, sizeof(buf), (off_t)self->p), 0);
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		EXPECT_EQ(word_value(i), buf[i]);
	CHECK(pread(fd, &v, 8, (off_t)(self->p + PAGE + 8)), 0);
	EXPECT_EQ(word_value(PAGE / 8 + 1), v);
	v = word_value(0) ^ 0xff;
	CHECK(pwrite(fd, &v, 8, (off_t)self->p), 0);
	EXPECT_EQ(v, w[0]);
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		buf[i] = word_value(i);
	CHECK(pwrite(fd, buf, sizeof(buf), (off_t)self->p), 0);
	EXPECT_EQ(word_value(0), w[0]);
	CHECK(pread(fd, buf, 8, (off_t)(self->p + OBJ_SIZE)), EIO);
	CHECK(pwrite(fd, buf, 8, (off_t)(self->p + OBJ_SIZE)), EIO);
	close(fd);
	assert_intact(_metadata, self);
}

static uint64_t ptrace_probe = 0x1234;

/* ptrace PEEK/POKE of a tracee's attachment reach the region's pages. */
TEST_F(attached, ptrace_peek_poke_works)
{
	int status, err;
	long v;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		child_init();
		(void)*(volatile uint64_t *)self->p;
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));

	/* The tracee's ordinary memory can be peeked. */
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, &ptrace_probe, NULL);
	ASSERT_EQ(0, errno);
	ASSERT_EQ(0x1234, v);

	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, self->p, NULL);
	err = errno;
	CHECK_RES("PTRACE_PEEKDATA", err ? -1 : 0, err, 0);
	EXPECT_EQ((long)word_value(0), v);
	/* A POKE is seen by this process, through its own attachment. */
	CHECK(ptrace(PTRACE_POKEDATA, pid, self->p + 8,
		     (void *)(word_value(1) ^ 1)), 0);
	EXPECT_EQ(word_value(1) ^ 1, ((volatile uint64_t *)self->p)[1]);
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, self->p + 8, NULL);
	EXPECT_EQ(0, errno);
	EXPECT_EQ((long)(word_value(1) ^ 1), v);
	CHECK(ptrace(PTRACE_POKEDATA, pid, self->p + 8,
		     (void *)word_value(1)), 0);
	/* A hole. */
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, self->p + OBJ_SIZE, NULL);
	err = errno;
	CHECK_RES("PTRACE_PEEKDATA(hole)", err ? -1 : 0, err, EIO);
	CHECK(ptrace(PTRACE_POKEDATA, pid, self->p + OBJ_SIZE, (void *)1),
	      EIO);

	kill(pid, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, wait_exit(pid));
	assert_intact(_metadata, self);
}

/* The smaps entry of the attachment: its Rss and whether it has "pt". */
static bool smaps_entry(const char *smaps, const char *p, long *rss,
			bool *pt)
{
	char start[32];
	const char *s, *e, *f;

	snprintf(start, sizeof(start), "%lx-", (unsigned long)p);
	for (s = smaps; s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (!strncmp(s, start, strlen(start)))
			break;
	if (!s)
		return false;
	f = strstr(s, "\nRss:");
	e = strstr(s, "\nVmFlags:");
	if (!f || !e || f > e)
		return false;
	*rss = strtol(f + 5, NULL, 10);
	s = strchr(e + 1, '\n');
	if (!s)
		s = e + strlen(e);
	*pt = false;
	for (f = e + 9; f + 3 <= s; f++)
		if (!strncmp(f, " pt", 3) && (f[3] == ' ' || f[3] == '\n'))
			*pt = true;
	return true;
}

TEST_F(attached, proc_files_readable)
{
	static const char * const files[] = {
		"/proc/self/maps", "/proc/self/smaps",
		"/proc/self/smaps_rollup", "/proc/self/numa_maps",
		"/proc/self/status",
	};
	uint64_t pm[OBJ_SIZE / PAGE + 1];
	unsigned long i, present = 0;
	char *buf, line[512];
	size_t len;
	long rss, ret;
	bool pt;
	int fd;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		buf = read_all(files[i], &len);
		EXPECT_NE(NULL, buf) TH_LOG("%s: %s", files[i],
					    strerror(errno));
		ksft_print_msg("%s: %zu bytes\n", files[i], buf ? len : 0);
		if (buf && i == 1) {
			EXPECT_TRUE(smaps_entry(buf, self->p, &rss, &pt));
			ksft_print_msg("smaps of the attachment: Rss %ld kB, %s\n",
				       rss, pt ? "pt" : "no pt flag");
			/* The region's pages: all of the object. */
			EXPECT_EQ((long)(OBJ_SIZE / KIB), rss);
			EXPECT_TRUE(pt);
		}
		free(buf);
	}
	EXPECT_TRUE(maps_line(self->p, line, sizeof(line)));
	ksft_print_msg("maps: %s\n", line);
	EXPECT_NE(NULL, strstr(line, self->path));

	/* pagemap: the object's pages are present, the hole's is not. */
	fd = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, fd);
	ret = CHECK(pread(fd, pm, sizeof(pm),
			  (off_t)((unsigned long)self->p / PAGE * 8)), 0);
	EXPECT_EQ((long)sizeof(pm), ret);
	close(fd);
	for (i = 0; i < ARRAY_SIZE(pm) - 1; i++)
		present += (pm[i] >> 63) & 1;
	ksft_print_msg("pagemap: %lu of %zu object pages present\n", present,
		       ARRAY_SIZE(pm) - 1);
	EXPECT_EQ(ARRAY_SIZE(pm) - 1, present);
	EXPECT_EQ(0ULL, pm[ARRAY_SIZE(pm) - 1] >> 63);
	assert_intact(_metadata, self);
}

/*
 * userfaultfd registers a writer's attachment in every mode it takes for
 * shared memory (missing, write protection, minor); a range past the
 * attachment is EINVAL. Nothing of the data changes.
 */
TEST_F(attached, userfaultfd_register)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)self->p, .len = OBJ_SIZE },
	};
	struct uffdio_range all = { (unsigned long)self->p, OBJ_SIZE };
	static const struct { __u64 mode; const char *name; } modes[] = {
		{ UFFDIO_REGISTER_MODE_MISSING, "MISSING" },
		{ UFFDIO_REGISTER_MODE_WP, "WP" },
		{ UFFDIO_REGISTER_MODE_MINOR, "MINOR" },
	};
	char what[64];
	unsigned int i;
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 && errno == ENOSYS)
		SKIP(return, "no userfaultfd in this kernel");
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		reg.mode = modes[i].mode;
		snprintf(what, sizeof(what), "UFFDIO_REGISTER %s",
			 modes[i].name);
		__CHECK(what, ioctl(uffd, UFFDIO_REGISTER, &reg), 0);
		__CHECK("UFFDIO_UNREGISTER", ioctl(uffd, UFFDIO_UNREGISTER,
						   &all), 0);
	}
	reg.range.len = self->align + getpagesize();
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	__CHECK("UFFDIO_REGISTER MISSING, past the end",
		ioctl(uffd, UFFDIO_REGISTER, &reg), EINVAL);
	close(uffd);
	assert_intact(_metadata, self);
}

static long futex(void *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(__NR_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * Shared futexes are keyed by the region's page; private ones by the
 * address. In a hole there is no page to key a shared futex by: EFAULT.
 * (Waking across attachments is in mshare_gup_test.)
 */
TEST_F(attached, futex_works)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
	uint32_t *f = (uint32_t *)(self->p + PAGE);
	uint32_t val = *f;

	CHECK(futex(f, FUTEX_WAIT, val + 1, NULL), EAGAIN);
	CHECK(futex(f, FUTEX_WAIT, val, &ts), ETIMEDOUT);
	CHECK(futex(f, FUTEX_WAKE, 1, NULL), 0);
	CHECK(futex(f, FUTEX_WAIT_PRIVATE, val + 1, NULL), EAGAIN);
	CHECK(futex(f, FUTEX_WAIT_PRIVATE, val, &ts), ETIMEDOUT);
	CHECK(futex(f, FUTEX_WAKE_PRIVATE, 1, NULL), 0);
	/* In the hole: nothing to read. */
	CHECK(futex(self->p + OBJ_SIZE, FUTEX_WAIT, 0, NULL), EFAULT);
	CHECK(futex(self->p + OBJ_SIZE, FUTEX_WAKE, 1, NULL), EFAULT);
	assert_intact(_metadata, self);
}

/*
 * mbind() through the attachment sets the policy of the region's object
 * (mshare_mm_test checks where the pages go): of the whole attachment,
 * holes included, only the default; of the object or a part of it, any.
 * The attachment stays one VMA. move_pages() queries and moves the
 * region's pages; migrate_pages() skips them.
 */
TEST_F(attached, numa_calls)
{
	unsigned long mask = 1, node1 = 2;
	void *pages[4];
	int status[4], nodes[4], i;
	long ret;

	CHECK(syscall(__NR_mbind, self->p, self->align, MPOL_BIND, &mask,
		      8 * sizeof(mask), MPOL_MF_MOVE), EFAULT);
	CHECK(syscall(__NR_mbind, self->p, OBJ_SIZE, MPOL_BIND, &mask,
		      8 * sizeof(mask), MPOL_MF_MOVE), 0);
	CHECK(syscall(__NR_mbind, self->p + PAGE, PAGE, MPOL_DEFAULT, NULL,
		      0, 0), 0);
	CHECK(syscall(__NR_mbind, self->p, self->align, MPOL_DEFAULT, NULL,
		      0, 0), 0);
	CHECK(syscall(__NR_mbind, self->p, self->align + PAGE, MPOL_DEFAULT,
		      NULL, 0, 0), EINVAL);
	assert_vma_unchanged(_metadata, self);

	for (i = 0; i < 4; i++) {
		pages[i] = self->p + i * (OBJ_SIZE / 4);
		nodes[i] = 1;
		status[i] = INT_MIN;
	}
	/* Query: where are the region's pages? On a node. */
	ret = CHECK(syscall(__NR_move_pages, 0, 4, pages, NULL, status, 0), 0);
	for (i = 0; !ret && i < 4; i++) {
		ksft_print_msg("move_pages query status[%d] = %d\n", i,
			       status[i]);
		EXPECT_TRUE(status[i] == 0 || status[i] == 1);
	}
	/* Move them to node 1, as a writer may. */
	ret = CHECK(syscall(__NR_move_pages, 0, 4, pages, nodes, status,
			    MPOL_MF_MOVE), 0);
	for (i = 0; !ret && i < 4; i++) {
		ksft_print_msg("move_pages move status[%d] = %d\n", i,
			       status[i]);
		EXPECT_EQ(1, status[i]);
	}
	ret = syscall(__NR_migrate_pages, 0, 8 * sizeof(mask), &mask,
		      &node1);
	ksft_print_msg("migrate_pages -> %ld (%s)\n", ret,
		       ret < 0 ? strerror(errno) : "ok");
	EXPECT_LE(0, ret);
	assert_intact(_metadata, self);
}

#define DISK_FILE	"/mnt/disk/mshare-odirect"
#define DISK_FILL	0xab

/*
 * A file on the disk file system whose page 0 holds what the object's
 * first page holds and page 1 DISK_FILL bytes, opened with O_DIRECT; -1
 * (and errno) if there is no disk file system.
 */
static int disk_file(void)
{
	uint64_t buf[2 * PAGE / sizeof(uint64_t)];
	unsigned long i;
	int fd;

	fd = open(DISK_FILE, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < PAGE / sizeof(uint64_t); i++)
		buf[i] = word_value(i);
	memset((char *)buf + PAGE, DISK_FILL, PAGE);
	if (pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf) || fsync(fd)) {
		close(fd);
		return -1;
	}
	close(fd);
	return open(DISK_FILE, O_RDWR | O_DIRECT);
}

/*
 * O_DIRECT and vmsplice pin the region's pages (GUP-fast falls back to
 * the slow path, which looks them up in the region): they move the right
 * bytes through a writable attachment.
 */
TEST_F(attached, odirect_and_vmsplice_work)
{
	uint64_t buf[PAGE / sizeof(uint64_t)];
	struct iovec iov = { .iov_base = self->p, .iov_len = PAGE };
	unsigned long i;
	int fd, pfd[2];
	long ret;

	ASSERT_EQ(0, pipe(pfd));
	ret = CHECK(vmsplice(pfd[1], &iov, 1, 0), 0);
	EXPECT_EQ((long)PAGE, ret);
	if (ret > 0) {
		EXPECT_EQ(ret, read(pfd[0], buf, ret));
		for (i = 0; i < (unsigned long)ret / 8; i++)
			EXPECT_EQ(word_value(i), buf[i]);
	}
	close(pfd[0]);
	close(pfd[1]);

	fd = disk_file();
	if (fd < 0)
		SKIP(goto out, DISK_FILE ": %s", strerror(errno));
	/*
	 * Page 1 of the file (DISK_FILL bytes) into page 2 of the object,
	 * and back from page 0 of the object to page 1 of the file.
	 */
	ret = CHECK(pread(fd, self->p + 2 * PAGE, PAGE, PAGE), 0);
	EXPECT_EQ((long)PAGE, ret);
	for (i = 0; i < PAGE; i++)
		if ((unsigned char)self->p[2 * PAGE + i] != DISK_FILL)
			break;
	EXPECT_EQ(PAGE, i) TH_LOG("O_DIRECT read: byte %lu differs", i);
	ret = CHECK(pwrite(fd, self->p, PAGE, PAGE), 0);
	EXPECT_EQ((long)PAGE, ret);
	close(fd);
	fd = open(DISK_FILE, O_RDONLY);
	ASSERT_LE(0, fd);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ((ssize_t)PAGE, pread(fd, buf, PAGE, PAGE));
	close(fd);
	for (i = 0; i < ARRAY_SIZE(buf); i++)
		ASSERT_EQ(word_value(i), buf[i]);
	/* Page 2 of the object as it was. */
	for (i = 0; i < PAGE / 8; i++)
		((volatile uint64_t *)self->p)[2 * PAGE / 8 + i] =
			word_value(2 * PAGE / 8 + i);
out:
	unlink(DISK_FILE);
	assert_intact(_metadata, self);
}

/*
 * But no pinning may write through a read-only attachment, or into an
 * object created PROT_READ: O_DIRECT reads into them fail with EFAULT.
 */
TEST_F(attached, odirect_cannot_write_read_only)
{
	const unsigned long ro_off = 2 * OBJ_SIZE;
	volatile uint64_t *ro;
	int fd, rofd;
	char *q;

	fd = disk_file();
	if (fd < 0)
		SKIP(goto out, DISK_FILE ": %s", strerror(errno));

	/* A second, read-only attachment of the same object. */
	rofd = open(self->path, O_RDONLY);
	ASSERT_LE(0, rofd);
	q = mshare_attach(rofd, NULL, PROT_READ, 0);
	ASSERT_NE(MAP_FAILED, q);
	close(rofd);
	ASSERT_EQ(0UL, obj_bad_words(q));
	CHECK(pread(fd, q, PAGE, PAGE), EFAULT);
	CHECK(pread(fd, q + PAGE, PAGE, PAGE), EFAULT);
	ASSERT_EQ(0, munmap(q, self->align));

	/* A PROT_READ object, populated, through our writable attachment. */
	ASSERT_EQ(0, place(self->fd, ro_off, OBJ_SIZE, PROT_READ, -1));
	ro = (volatile uint64_t *)(self->p + ro_off);
	ASSERT_EQ(0ULL, ro[0]);
	CHECK(pread(fd, (char *)ro, PAGE, PAGE), EFAULT);
	ASSERT_EQ(0ULL, ro[0]);
	ASSERT_EQ(0ULL, ro[PAGE / sizeof(*ro) - 1]);
	close(fd);
out:
	unlink(DISK_FILE);
	assert_intact(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* 4. Leaks                                                            */
/* ------------------------------------------------------------------ */

#define LEAK_OBJECT	(64 * MIB)
#define LEAK_CHILDREN	8
#define LEAK_CYCLES	3
#define LEAK_SETTLE_SEC	10

struct mem_snap {
	long free, pcp, shmem, pt, slab;
};

/*
 * Memory use once caches are dropped and slab caches shrunk. MemFree
 * counts the pages on per-CPU lists as used: add them.
 */
static void mem_snap(struct mem_snap *s)
{
	drop_caches();
	shrink_slabs();
	s->pcp = pcp_free_kb();
	s->free = meminfo_exact_kb("MemFree") + s->pcp;
	s->shmem = meminfo_exact_kb("Shmem");
	s->pt = meminfo_exact_kb("PageTables");
	s->slab = meminfo_exact_kb("Slab");
}

/* Has everything come back, within the allowed slack? */
static bool mem_back(const struct mem_snap *b, const struct mem_snap *a)
{
	return a->pt - b->pt <= 16 && a->shmem - b->shmem <= 1024 &&
	       b->free - a->free <= 8 * 1024 && a->slab - b->slab <= 512;
}

/* Child of a leak cycle: attach the region read-only and check it. */
static int leak_child(const char *path, unsigned long size)
{
	int fd = open(path, O_RDONLY);
	char *p;
	int bad;

	if (fd < 0)
		return 2;
	p = mshare_attach(fd, NULL, PROT_READ, 0);
	if (p == MAP_FAILED)
		return 3;
	bad = check_pages(p, LEAK_OBJECT) ? 4 : 0;
	if (munmap(p, size))
		return 5;
	close(fd);
	return bad;
}

static void leak_cycle(struct __test_metadata *_metadata, unsigned long align)
{
	pid_t pids[LEAK_CHILDREN];
	char path[128], *p;
	long shmem;
	int fd, i;

	shmem = meminfo_exact_kb("Shmem");
	region_path(path, sizeof(path), "leak");
	fd = mshare_region_create(AT_FDCWD, path, 0600, align);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, place(fd, 0, LEAK_OBJECT, PROT_READ | PROT_WRITE, -1));
	p = mshare_attach(fd, NULL, PROT_READ | PROT_WRITE, 0);
	ASSERT_NE(MAP_FAILED, p);
	fill_pages(p, LEAK_OBJECT);
	/* The measurements can see the region's memory. */
	shmem = meminfo_exact_kb("Shmem") - shmem;
	EXPECT_LE(LEAK_OBJECT / KIB - 1024, shmem);

	fflush(NULL);
	for (i = 0; i < LEAK_CHILDREN; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			child_init();
			_exit(leak_child(path, align));
		}
	}
	for (i = 0; i < LEAK_CHILDREN; i++)
		EXPECT_EQ(0, wait_exit(pids[i]));
	ASSERT_EQ(0, munmap(p, align));
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, close(fd));
}

TEST_F_TIMEOUT(region, no_leak_after_destroy, 300)
{
	struct mem_snap before, after;
	double end;
	int cycle;

	/* The fixture's own empty region is not part of the cycles. */
	mem_snap(&before);
	ksft_print_msg("before: MemFree %ld kB (%ld kB on per-CPU lists), Shmem %ld kB, PageTables %ld kB, Slab %ld kB\n",
		       before.free, before.pcp, before.shmem, before.pt,
		       before.slab);
	for (cycle = 1; cycle <= LEAK_CYCLES; cycle++) {
		leak_cycle(_metadata, self->align);
		/* Frees may lag behind (RCU, SRCU, per-CPU lists). */
		end = now_sec() + LEAK_SETTLE_SEC;
		do {
			mem_snap(&after);
			if (mem_back(&before, &after))
				break;
			usleep(200 * 1000);
		} while (now_sec() < end);
		ksft_print_msg("cycle %d: MemFree %+ld kB (%ld kB on per-CPU lists), Shmem %+ld kB, PageTables %+ld kB, Slab %+ld kB\n",
			       cycle, after.free - before.free, after.pcp,
			       after.shmem - before.shmem,
			       after.pt - before.pt, after.slab - before.slab);
		EXPECT_LE(after.pt - before.pt, 16);
		EXPECT_LE(after.shmem - before.shmem, 1024);
		EXPECT_LE(before.free - after.free, 8 * 1024);
		EXPECT_LE(after.slab - before.slab, 512);
	}
}

TEST_HARNESS_MAIN
