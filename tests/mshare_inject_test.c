// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures in msharefs. failslab and fail_page_alloc, limited to
 * this task (task-filter and /proc/self/make-it-fail), fail a share of the
 * kernel allocations made by one call at a time, sleeping ones included:
 *
 *  - creating a region or a directory, and sizing a region: ENOMEM and
 *    nothing half made (a region whose sizing failed is still unsized and
 *    can be sized again);
 *  - MSHAREFS_CREATE_MAPPING of every kind of object, and MSHAREFS_UNMAP:
 *    ENOMEM and the region holds the objects it held;
 *  - attaching and detaching: ENOMEM and the attachment count unchanged;
 *  - fork() of a process with an attachment: ENOMEM, or a child that sees
 *    the region's data;
 *  - faults through an attachment: served after retries (VM_FAULT_OOM
 *    retries the access) or SIGBUS; never wrong data.
 *
 * Each test ends with everything unlinked and unmapped, and page tables
 * and shmem back at their baseline; the guest's kmemleak scan at the end
 * of the run (debug kernel) finds any object leaked on an error path.
 * Every test prints how many allocations the injection failed.
 *
 * Needs root, CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FAULT_INJECTION_DEBUG_FS (both kernels of this project have them),
 * debugfs on /sys/kernel/debug and msharefs on /sys/fs/mshare.
 *
 * Build: make -C tests
 * Run:   ./mshare_inject_test [-v VARIANT] [-t TEST]   (prints KTAP)
 */
#include "mshare_test.h"

#include <sys/rseq.h>
#include <sys/syscall.h>

#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAILPAGE	"/sys/kernel/debug/fail_page_alloc"
/* The budget of failures; what is left of it tells how many were made. */
#define TIMES		1000000L
#define ITERS		60
#define OBJ		(64 * PG)
#define STEP		HPAGE
#define PT_SLACK_KB	64
#define SHMEM_SLACK_KB	256

FIXTURE(inject) {
	int mif;		/* /proc/self/make-it-fail */
	int dirfd;		/* the msharefs root */
	unsigned long align;
	long pt_kb, shmem_kb;	/* baseline */
	unsigned long calls, failed;
	volatile unsigned long *done;	/* progress of a filling child */
	char name[64];
};

/* Which allocations fail, and how often. */
FIXTURE_VARIANT(inject) {
	bool slab;
	bool page;
	int percent;
};

FIXTURE_VARIANT_ADD(inject, slab10) { .slab = true, .percent = 10 };
FIXTURE_VARIANT_ADD(inject, slab50) { .slab = true, .percent = 50 };
FIXTURE_VARIANT_ADD(inject, page10) { .page = true, .percent = 10 };
FIXTURE_VARIANT_ADD(inject, page50) { .page = true, .percent = 50 };
FIXTURE_VARIANT_ADD(inject, both25) {
	.slab = true, .page = true, .percent = 25
};

static int attr_set(const char *dir, const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	return write_str(path, val);
}

static long attr_get(const char *dir, const char *attr)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	if (read_small(AT_FDCWD, path, val, sizeof(val)) <= 0)
		return -1;
	return strtol(val, NULL, 10);
}

/*
 * The text of alloc_vmap_area() from /proc/kallsyms: [*@start, *@end).
 * It splits free vmap areas with a GFP_NOWAIT allocation that it assumes
 * never fails, and warns when it does (va_clip()): under injection that
 * is a warning about the injection, not about msharefs, so no allocation
 * made from it is failed (reject-start, reject-end).
 */
static int vmap_area_text(unsigned long *start, unsigned long *end)
{
	char line[256], name[128], type;
	unsigned long addr;
	FILE *f = fopen("/proc/kallsyms", "r");

	*start = *end = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %127s", &addr, &type, name) != 3)
			continue;
		if (*start && addr > *start) {
			*end = addr;
			break;
		}
		if (!strcmp(name, "alloc_vmap_area") && addr)
			*start = addr;
	}
	fclose(f);
	return *start && *end ? 0 : -1;
}

/*
 * Fail allocations of tasks that ask for it only, sleeping ones too, of
 * any order, quietly, @percent of the time (0: off), up to TIMES failures,
 * except those of alloc_vmap_area() (above).
 */
static int attr_arm(const char *dir, int percent)
{
	unsigned long vstart, vend;
	char p[32];

	snprintf(p, sizeof(p), "%d", percent);
	if (attr_set(dir, "probability", "0") ||
	    attr_set(dir, "verbose", "0") ||
	    attr_set(dir, "task-filter", "Y") ||
	    attr_set(dir, "interval", "1") ||
	    attr_set(dir, "space", "0") ||
	    attr_set(dir, "ignore-gfp-wait", "N"))
		return -1;
	if (!strcmp(dir, FAILPAGE) &&
	    (attr_set(dir, "ignore-gfp-highmem", "N") ||
	     attr_set(dir, "min-order", "0")))
		return -1;
	if (vmap_area_text(&vstart, &vend))
		return -1;
	snprintf(p, sizeof(p), "%lu", vstart);
	if (attr_set(dir, "reject-start", p))
		return -1;
	snprintf(p, sizeof(p), "%lu", vend);
	if (attr_set(dir, "reject-end", p))
		return -1;
	snprintf(p, sizeof(p), "%ld", TIMES);
	if (attr_set(dir, "times", p))
		return -1;
	snprintf(p, sizeof(p), "%d", percent);
	return attr_set(dir, "probability", p);
}

/* Allocations failed so far by the armed attributes; -1 if unreadable. */
static long injected(const FIXTURE_VARIANT(inject) *v)
{
	long slab = v->slab ? attr_get(FAILSLAB, "times") : TIMES;
	long page = v->page ? attr_get(FAILPAGE, "times") : TIMES;

	if (slab < 0 || page < 0)
		return -1;
	return 2 * TIMES - slab - page;
}

/*
 * Put an attribute directory back as the kernel boots it (see
 * Documentation/fault-injection/fault-injection.rst): nothing fails.
 */
static void attr_reset(const char *dir)
{
	attr_set(dir, "probability", "0");
	attr_set(dir, "times", "1");
	attr_set(dir, "verbose", "2");
	attr_set(dir, "task-filter", "N");
	attr_set(dir, "ignore-gfp-wait", "Y");
	attr_set(dir, "reject-start", "0");
	attr_set(dir, "reject-end", "0");
	if (!strcmp(dir, FAILPAGE)) {
		attr_set(dir, "ignore-gfp-highmem", "Y");
		attr_set(dir, "min-order", "1");
	}
}

static void fail_set(int mif, bool on)
{
	if (pwrite(mif, on ? "1" : "0", 1, 0) != 1)
		ksft_print_msg("make-it-fail: %s\n", strerror(errno));
}

/*
 * Evaluate @call with this task's allocations failing, keeping its errno.
 * A child forked inside inherits make-it-fail set, and the fixture's file
 * is its parent's: it must turn its own off first (child_fail_off()).
 */
#define INJECT(call) ({							\
	long __r;							\
	int __e;							\
	fail_set(self->mif, true);					\
	__r = (long)(call);						\
	__e = errno;							\
	fail_set(self->mif, false);					\
	self->calls++;							\
	errno = __e;							\
	__r;								\
})

/*
 * In a child forked with make-it-fail set: turn it off. Opening the file
 * allocates, so it may fail a few times first.
 */
static void child_fail_off(void)
{
	int mif = -1, i;

	for (i = 0; i < 1000 && mif < 0; i++)
		mif = open("/proc/self/make-it-fail", O_WRONLY);
	if (mif < 0 || pwrite(mif, "0", 1, 0) != 1)
		_exit(3);
	close(mif);
}

/* Count a failed call, which must have failed with ENOMEM. */
#define ASSERT_NOMEM(what) do {						\
	self->failed++;							\
	if (errno != ENOMEM)						\
		TH_LOG("%s: errno %d (%s), want ENOMEM", what, errno,	\
		       strerror(errno));				\
	ASSERT_EQ(ENOMEM, errno);					\
} while (0)

/*
 * The kernel writes a thread's rseq area on its way back to user space and
 * answers a failed write with SIGSEGV (rseq_handle_notify_resume()). After
 * fork() the area is in a copy-on-write page, and a child inherits
 * make-it-fail: its first return to user space (rseq_migrate() in
 * wake_up_new_task()) can fail to copy that page and kill it, an injected
 * failure of its own memory, not of msharefs (seen: a child of the fork
 * test killed by SIGSEGV in 1 of 25 runs). Unregister glibc's area, for
 * the children too: 0, or -1 with errno. glibc registers the original 32
 * bytes of the ABI whenever its __rseq_size (the features it knows, 20 in
 * Debian's) is smaller, and unregistering must give the registered length.
 */
static int rseq_off(void)
{
	char *area = (char *)__builtin_thread_pointer() + __rseq_offset;
	unsigned int len = __rseq_size < 32 ? 32 : __rseq_size;

	if (!__rseq_size)
		return 0;	/* glibc did not register one */
	return syscall(__NR_rseq, area, len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
}

FIXTURE_SETUP(inject)
{
	ASSERT_EQ(0, rseq_off()) {
		TH_LOG("rseq unregister: %s", strerror(errno));
	}
	ASSERT_EQ(0, access(FAILSLAB "/probability", W_OK)) {
		TH_LOG("no failslab in debugfs: CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS are needed");
	}
	ASSERT_EQ(0, access(FAILPAGE "/probability", W_OK));
	self->dirfd = open(MSHARE_DIR, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, self->dirfd);
	self->align = read_align();
	ASSERT_NE(0UL, self->align);
	self->mif = open("/proc/self/make-it-fail", O_WRONLY);
	ASSERT_LE(0, self->mif);
	snprintf(self->name, sizeof(self->name), "inject-%d", getpid());
	self->done = mmap(NULL, PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_MAPS(self->done, self->done);
	self->pt_kb = meminfo_exact_kb("PageTables");
	self->shmem_kb = meminfo_exact_kb("Shmem");
	ASSERT_EQ(0, attr_arm(FAILSLAB, variant->slab ? variant->percent : 0));
	ASSERT_EQ(0, attr_arm(FAILPAGE, variant->page ? variant->percent : 0));
}

FIXTURE_TEARDOWN(inject)
{
	char path[96];

	fail_set(self->mif, false);
	attr_reset(FAILSLAB);
	attr_reset(FAILPAGE);
	unlinkat(self->dirfd, self->name, 0);
	snprintf(path, sizeof(path), "%s.d/r", self->name);
	unlinkat(self->dirfd, path, 0);
	snprintf(path, sizeof(path), "%s.d", self->name);
	unlinkat(self->dirfd, path, AT_REMOVEDIR);
	munmap((void *)self->done, PG);
	close(self->mif);
	close(self->dirfd);
}

/* Report the injections and check that nothing was left behind. */
static void finish(struct __test_metadata *_metadata,
		   FIXTURE_DATA(inject) *self,
		   const FIXTURE_VARIANT(inject) *variant)
{
	long pt, shmem, n = injected(variant);

	ksft_print_msg("%s: %lu calls, %lu failed, %ld allocations failed by injection\n",
		       _metadata->name, self->calls, self->failed, n);
	attr_set(FAILSLAB, "probability", "0");
	attr_set(FAILPAGE, "probability", "0");
	pt = meminfo_exact_kb("PageTables");
	shmem = meminfo_exact_kb("Shmem");
	TH_LOG("PageTables %ld -> %ld kB, Shmem %ld -> %ld kB", self->pt_kb,
	       pt, self->shmem_kb, shmem);
	ASSERT_GE(self->pt_kb + PT_SLACK_KB, pt);
	ASSERT_GE(self->shmem_kb + SHMEM_SLACK_KB, shmem);
	/* Allocations did fail, or the test proved nothing. */
	ASSERT_LT(0, n);
}

/*
 * Write bytes @from..@from+@len of pattern @seed at @p in a child whose
 * allocations fail: new pages, page-cache pages and the region's page
 * tables. Faults that get VM_FAULT_OOM are retried, so the child finishes,
 * or it dies of SIGBUS; self->done says how far it got. The parent checks
 * what was written, then writes the rest itself. 0, or -1 (and a message)
 * if the child failed otherwise or the data is wrong.
 */
struct fill_arg {
	FIXTURE_DATA(inject) *self;
	char *p;
	unsigned long len, from;
	int seed;
};

static int fill_child(void *a)
{
	struct fill_arg *arg = a;
	/* The fixture's make-it-fail is the parent's: /proc/self was it. */
	int mif = open("/proc/self/make-it-fail", O_WRONLY);
	unsigned long off;

	if (mif < 0)
		return 2;
	fail_set(mif, true);
	for (off = 0; off < arg->len; off += PG) {
		fill_from(arg->p + off, PG, arg->seed, arg->from + off);
		*arg->self->done = off + PG;
	}
	fail_set(mif, false);
	return 0;
}

static int fill_injected(FIXTURE_DATA(inject) *self, char *p,
			 unsigned long len, int seed, unsigned long from)
{
	struct fill_arg arg = { self, p, len, from, seed };
	unsigned long done;
	int status;

	*self->done = 0;
	status = run_child(fill_child, &arg);
	done = *self->done;
	self->calls++;
	if (status == 128 + SIGBUS) {
		self->failed++;
		ksft_print_msg("SIGBUS after %lu of %lu bytes\n", done, len);
	} else if (status || done != len) {
		ksft_print_msg("filling child: status %d after %lu of %lu bytes\n",
			       status, done, len);
		return -1;
	}
	if (mismatch_from(p, done, seed, from) != -1) {
		ksft_print_msg("wrong data at +%#lx of what the child wrote\n",
			       mismatch_from(p, done, seed, from));
		return -1;
	}
	fill_from(p + done, len - done, seed, from + done);
	return 0;
}

/* An existing name after a failed create is an unsized, usable region. */
static int check_leftover(int dirfd, const char *name)
{
	struct mshare_info info;
	int fd = openat(dirfd, name, O_RDWR);

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (mshare_region_info(fd, &info) || info.size != 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return unlinkat(dirfd, name, 0);
}

TEST_F_TIMEOUT(inject, region_create, 600)
{
	unsigned long size = 3 * self->align;
	struct mshare_info info;
	char dir[80], sub[96];
	int i, fd;

	snprintf(dir, sizeof(dir), "%s.d", self->name);
	for (i = 0; i < ITERS; i++) {
		fd = INJECT(openat(self->dirfd, self->name,
				   O_RDWR | O_CREAT | O_EXCL, 0600));
		if (fd < 0) {
			ASSERT_NOMEM("open(O_CREAT)");
			ASSERT_EQ(0, check_leftover(self->dirfd, self->name));
			continue;
		}
		/* Sizing allocates the region's upper tables: 3 units. */
		if (INJECT(ftruncate(fd, size))) {
			ASSERT_NOMEM("ftruncate");
			ASSERT_EQ(0, mshare_region_info(fd, &info));
			ASSERT_EQ(0ULL, info.size);
			ASSERT_EQ(0, ftruncate(fd, size));
		}
		ASSERT_EQ(0, mshare_region_info(fd, &info));
		ASSERT_EQ(size, info.size);
		if (INJECT(unlinkat(self->dirfd, self->name, 0))) {
			ASSERT_NOMEM("unlink");
			ASSERT_EQ(0, unlinkat(self->dirfd, self->name, 0));
		}
		close(fd);

		if (INJECT(mkdirat(self->dirfd, dir, 0700))) {
			ASSERT_NOMEM("mkdir");
			/* mkdir makes the name only once it cannot fail. */
			ASSERT_FAILS(ENOENT, unlinkat(self->dirfd, dir,
						      AT_REMOVEDIR));
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/r", dir);
		fd = INJECT(openat(self->dirfd, sub, O_RDWR | O_CREAT, 0600));
		if (fd < 0) {
			ASSERT_NOMEM("open(O_CREAT) in a directory");
			ASSERT_EQ(0, check_leftover(self->dirfd, sub));
		} else {
			close(fd);
			ASSERT_EQ(0, unlinkat(self->dirfd, sub, 0));
		}
		ASSERT_EQ(0, unlinkat(self->dirfd, dir, AT_REMOVEDIR));
	}
	finish(_metadata, self, variant);
}

/* The kinds of object, in turn. */
enum kind { K_ANON, K_MEMFD, K_TMPFILE, K_HUGETLB, K_DISK, NR_KINDS };

static const char * const kind_name[NR_KINDS] = {
	"anon", "memfd", "tmpfs file", "anon hugetlb", "disk file"
};

TEST_F_TIMEOUT(inject, create_mapping, 600)
{
	int fd, backing[NR_KINDS] = { -1, -1, -1, -1, -1 };
	unsigned long present = 0;
	long objs;
	char tmp[] = "/tmp/mshare-inject-XXXXXX";
	char disk[] = DISK_DIR "/mshare-inject-XXXXXX";
	char *p;
	int i;

	fd = mshare_region_create(self->dirfd, self->name, 0600, self->align);
	ASSERT_LE(0, fd);
	/* Each object maps its own part of its file. */
	backing[K_MEMFD] = memfd_sized("inject", 0, ITERS * OBJ);
	ASSERT_LE(0, backing[K_MEMFD]);
	backing[K_TMPFILE] = mkstemp(tmp);
	ASSERT_LE(0, backing[K_TMPFILE]);
	unlink(tmp);
	ASSERT_EQ(0, ftruncate(backing[K_TMPFILE], ITERS * OBJ));
	backing[K_DISK] = mkstemp(disk);
	ASSERT_LE(0, backing[K_DISK]);
	unlink(disk);
	ASSERT_EQ(0, ftruncate(backing[K_DISK], ITERS * OBJ));

	for (i = 0; i < ITERS; i++) {
		enum kind k = i % NR_KINDS;
		bool huge = k == K_HUGETLB;
		unsigned long size = huge ? HPAGE : OBJ;
		int flags = (backing[k] < 0 ? ANON : FILEMAP) |
			    (huge ? MAP_HUGETLB : 0);
		long ret;

		objs = mshare_fdinfo_value(fd, "objects");
		ret = INJECT(create_mapping(fd, i * STEP, size,
					    backing[k] < 0 ? 0 : i * OBJ, RW,
					    flags, backing[k]));
		if (ret) {
			ASSERT_NOMEM(kind_name[k]);
			ASSERT_EQ(objs, mshare_fdinfo_value(fd, "objects"));
			continue;
		}
		ASSERT_EQ(objs + 1, mshare_fdinfo_value(fd, "objects"));
		present |= 1UL << i;
	}

	/* Every object that was made works, and its data is its own. */
	p = mmap(NULL, self->align, RW, MAP_SHARED, fd, 0);
	ASSERT_MAPS(p, p);
	for (i = 0; i < ITERS; i++)
		if (present & (1UL << i))
			ASSERT_EQ(0, fill_injected(self, p + i * STEP, PG, i, 0));
	for (i = 0; i < ITERS; i++)
		if (present & (1UL << i))
			ASSERT_PATTERN(p + i * STEP, PG, i);
	ASSERT_EQ(0, munmap(p, self->align));

	/* Removing them under injection: all or nothing too. */
	for (i = 0; i < ITERS; i++) {
		if (!(present & (1UL << i)))
			continue;
		objs = mshare_fdinfo_value(fd, "objects");
		if (INJECT(mshare_unmap(fd, i * STEP, STEP))) {
			ASSERT_NOMEM("MSHAREFS_UNMAP");
			ASSERT_EQ(objs, mshare_fdinfo_value(fd, "objects"));
			ASSERT_EQ(0, mshare_unmap(fd, i * STEP, STEP));
		}
		ASSERT_EQ(objs - 1, mshare_fdinfo_value(fd, "objects"));
	}
	for (i = 0; i < NR_KINDS; i++)
		if (backing[i] >= 0)
			close(backing[i]);
	close(fd);
	ASSERT_EQ(0, unlinkat(self->dirfd, self->name, 0));
	finish(_metadata, self, variant);
}

/*
 * A region with an anonymous object of OBJ bytes at offset 0, its first
 * page filled.
 */
static int filled_region(FIXTURE_DATA(inject) *self)
{
	int fd = mshare_region_create(self->dirfd, self->name, 0600, self->align);
	char *p;

	if (fd < 0)
		return -1;
	if (create_mapping(fd, 0, OBJ, 0, RW, ANON, -1))
		goto fail;
	p = mmap(NULL, self->align, RW, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	fill(p, PG, 7);
	munmap(p, self->align);
	return fd;
fail:
	close(fd);
	unlinkat(self->dirfd, self->name, 0);
	return -1;
}

TEST_F_TIMEOUT(inject, attach, 600)
{
	unsigned long off;
	long att;
	char *p;
	int i, fd;

	fd = filled_region(self);
	ASSERT_LE(0, fd);
	for (i = 0; i < ITERS; i++) {
		att = mshare_fdinfo_value(fd, "attachments");
		p = (char *)INJECT(mmap(NULL, self->align, RW, MAP_SHARED,
					fd, 0));
		if (p == MAP_FAILED) {
			ASSERT_NOMEM("attach");
			ASSERT_EQ(att, mshare_fdinfo_value(fd, "attachments"));
			continue;
		}
		ASSERT_EQ(att + 1, mshare_fdinfo_value(fd, "attachments"));
		/* A fault that links the tables, one that allocates a page. */
		off = PG * (1 + i % (OBJ / PG - 1));
		ASSERT_EQ(0, fill_injected(self, p + off, PG, 7, off));
		ASSERT_PATTERN(p, PG, 7);
		if (INJECT(munmap(p, self->align))) {
			ASSERT_NOMEM("detach");
			ASSERT_EQ(att + 1, mshare_fdinfo_value(fd, "attachments"));
			ASSERT_EQ(0, munmap(p, self->align));
		}
		ASSERT_EQ(att, mshare_fdinfo_value(fd, "attachments"));
	}
	close(fd);
	ASSERT_EQ(0, unlinkat(self->dirfd, self->name, 0));
	finish(_metadata, self, variant);
}

TEST_F_TIMEOUT(inject, fork, 600)
{
	pid_t pid;
	char *p;
	int i, fd;

	fd = filled_region(self);
	ASSERT_LE(0, fd);
	p = mmap(NULL, self->align, RW, MAP_SHARED, fd, 0);
	ASSERT_MAPS(p, p);
	for (i = 0; i < ITERS; i++) {
		fflush(stdout);
		fflush(stderr);
		pid = INJECT(fork());
		if (pid == 0) {
			child_fail_off();
			_exit(mismatch(p, PG, 7) == -1 ? 0 : 1);
		}
		if (pid < 0) {
			ASSERT_NOMEM("fork");
			continue;
		}
		ASSERT_EQ(0, wait_exit(pid));
		ASSERT_EQ(1, mshare_fdinfo_value(fd, "attachments"));
	}
	ASSERT_EQ(1, mshare_fdinfo_value(fd, "attachments"));
	ASSERT_EQ(0, munmap(p, self->align));
	close(fd);
	ASSERT_EQ(0, unlinkat(self->dirfd, self->name, 0));
	finish(_metadata, self, variant);
}

/* Objects of each kind of memory, filled and emptied again and again. */
TEST_F_TIMEOUT(inject, fault, 600)
{
	static const unsigned long len = 4 * HPAGE;
	int i, fd, memfd;
	char *p, *buf;

	fd = mshare_region_create(self->dirfd, self->name, 0600, self->align);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_mapping(fd, 0, len, 0, RW, ANON, -1));
	memfd = memfd_sized("inject-fault", 0, len);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, create_mapping(fd, len, len, 0, RW, FILEMAP, memfd));
	p = mmap(NULL, self->align, RW, MAP_SHARED, fd, 0);
	ASSERT_MAPS(p, p);
	buf = malloc(len);
	ASSERT_NE(NULL, buf);

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, fill_injected(self, p, 2 * len, 11 + i, 0));
		ASSERT_PATTERN(p, 2 * len, 11 + i);
		/* The memfd holds what was written through the region. */
		ASSERT_EQ(len, pread(memfd, buf, len, 0));
		ASSERT_EQ(-1, mismatch_from(buf, len, 11 + i, len));
		/* Start over from empty objects and empty tables. */
		ASSERT_EQ(0, madvise(p, 2 * len, MADV_REMOVE));
		ASSERT_EQ(-1, mismatch(p, 2 * len, ZERO));
	}
	free(buf);
	ASSERT_EQ(0, munmap(p, self->align));
	close(memfd);
	close(fd);
	ASSERT_EQ(0, unlinkat(self->dirfd, self->name, 0));
	finish(_metadata, self, variant);
}

TEST_HARNESS_MAIN
