// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what to a region, and who pays (SPEC.md, "Who may do what,
 * and who pays"):
 *
 *  - a reader (attached from a descriptor opened read-only) may load,
 *    mincore(), MADV_WILLNEED, MADV_POPULATE_READ and read through GUP,
 *    and change nothing: stores are SIGSEGV, MADV_POPULATE_WRITE is
 *    EINVAL, mprotect() is EACCES, every other madvise() and mlock(),
 *    mlock2(), munlock() are EPERM, mlockall() locks nothing of the region
 *    and munlockall() does not unlock what a writer locked; after each
 *    refusal the data, the residency, the objects and the locked memory
 *    are what they were, and the owner can still place objects;
 *  - a writer (attached from a descriptor opened for writing, even with
 *    PROT_READ) may do all of that;
 *  - pkey_mprotect() with a key other than 0 is EINVAL for both, and
 *    applies nothing;
 *  - locked region pages are charged to the RLIMIT_MEMLOCK of the user who
 *    locked them, across that user's processes, until they are unlocked
 *    or the region is freed; CAP_IPC_LOCK is not limited;
 *  - sizing a region to the largest size costs no page table, and an
 *    object costs only the tables of its own 512 GiB unit;
 *  - an msharefs mount has an inode limit like tmpfs (nr_inodes=);
 *  - a region's memory is charged to the memory cgroup the region was
 *    sized in, whoever touches it, and that cgroup's limit holds;
 *  - a region is never the object of a region, neither directly nor
 *    through an overlayfs file leading to it, in a user namespace too, and
 *    no reference leaks to keep the mounts busy;
 *  - the OOM score of an attached process counts the region all the time,
 *    however busy the process keeps its mmap_lock (or its VMA locks,
 *    by forking), and /proc/PID/status
 *    stays readable;
 *  - /proc/PID/pagemap reads every kind of hole in and around an
 *    attachment.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y, msharefs on /sys/fs/mshare,
 * cgroup2 with the memory controller (mounted here if /sys/fs/cgroup is
 * not cgroup2), overlayfs, user namespaces and a tmpfs /tmp. The
 * protection-key test is skipped on a CPU without PKU.
 *
 * Build: make -C tests
 * Run:   ./mshare_trust_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <pthread.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#include "mshare_test.h"

#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED	24
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC	0x794c7630
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif

#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define TIB		(1024 * GIB)

/* What run_child() returns for a child killed by SIGSEGV. */
#define SEGV		(128 + SIGSEGV)

/*
 * The layout of the region the reader and writer tests share: an object
 * filled by the owner at 0, an object nobody touched, and room for one
 * more, which the owner places after the readers are done.
 */
#define OBJ		(8 * MIB)
#define OBJ_KB		((long)(OBJ / KIB))
#define SPARE_OFF	(16 * MIB)
#define SPARE		(64 * KIB)
#define NEW_OFF		(32 * MIB)
#define SEED		5

/* How far Mlocked may move (kB) when no region page was (un)locked. */
#define MLOCK_SLACK	128L

/* The user the RLIMIT_MEMLOCK test locks as: nobody else uses it. */
#define LOCK_UID	4242U

#define CGROOT		"/sys/fs/cgroup"
#define TMP_TEMPLATE	"/tmp/mshare-trust-XXXXXX"

/* The alignment (and size of most regions here), from mshare_info. */
static unsigned long A;

__attribute__((constructor)) static void setup_globals(void)
{
	A = read_align();
}

/* ---- data --------------------------------------------------------------- */

/* One byte at each end of every page: cheap for megabytes. */
static char page_tag(int seed, size_t pgno)
{
	return (char)(seed * 13 + pgno * 7 + 1);
}

static void tag_pages(char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len / PG; i++) {
		p[i * PG] = page_tag(seed, i);
		p[i * PG + PG - 1] = (char)~page_tag(seed, i);
	}
}

/* The first page of @p whose tags are not those of @seed, or -1. */
static long tag_mismatch(const char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len / PG; i++)
		if (p[i * PG] != page_tag(seed, i) ||
		    p[i * PG + PG - 1] != (char)~page_tag(seed, i))
			return i;
	return -1;
}

/* ---- /proc and sysfs ---------------------------------------------------- */

static long read_long(const char *path)
{
	char buf[64];

	if (read_small(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 0);
}

/*
 * Field @key (kB) of the /proc/self/smaps entry that starts at @addr; -1
 * if there is none.
 */
static long smaps_kb(void *addr, const char *key)
{
	return smaps_field("smaps", addr, key);
}

/* Mlocked (kB) once it is at most @below, polling for 5 s. */
static long mlocked_settle(long below)
{
	long v = -1;
	int i;

	for (i = 0; i < 50; i++) {
		v = meminfo_exact_kb("Mlocked");
		if (v <= below)
			break;
		usleep(100000);
	}
	return v;
}

static bool failed_with(long ret, int err)
{
	return ret == -1 && errno == err;
}

/* ---- children ----------------------------------------------------------- */

/* Messages of children: stderr, which _exit() does not lose. */
#define CHILD_LOG(fmt, ...)						\
	fprintf(stderr, "# child %d, uid %d: " fmt "\n", getpid(),	\
		getuid(), ##__VA_ARGS__)

static int do_load(void *arg)
{
	(void)*(volatile char *)arg;
	return 0;
}

static int do_store(void *arg)
{
	*(volatile char *)arg = 'w';
	return 0;
}

/* Store the byte that is there: a write that changes no data. */
static int store_same(void *arg)
{
	volatile char *p = arg;

	*p = *p;
	return 0;
}

/* Fork @fn(@arg) without core dumps; its pid, or -1. */
static pid_t spawn(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_CORE, &none);
		/* Never outlive the test process. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(arg));
	}
	return pid;
}

/*
 * A child that asks the test process questions while it runs: what
 * Mlocked is now (only root can fold the per-CPU counts into it: 'm'), or
 * to run something for it and say how it went ('h').
 */
struct peer {
	int req[2];		/* child -> test process */
	int rep[2];		/* test process -> child */
	pid_t pid;
	long (*hold)(void *);	/* what 'h' runs in the test process */
	void *hold_arg;
};

static int peer_start(struct peer *pr, int (*fn)(void *), void *arg)
{
	if (pipe(pr->req) || pipe(pr->rep))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pr->pid = fork();
	if (pr->pid < 0)
		return -1;
	if (!pr->pid) {
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_CORE, &none);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pr->req[0]);
		close(pr->rep[1]);
		_exit(fn(arg));
	}
	close(pr->req[1]);
	close(pr->rep[0]);
	return 0;
}

/* Answer the child until it exits; its exit status as wait_exit(). */
static int peer_serve(struct peer *pr)
{
	long v;
	char c;

	while (read(pr->req[0], &c, 1) == 1) {
		if (c == 'm')
			v = meminfo_exact_kb("Mlocked");
		else if (c == 'h' && pr->hold)
			v = pr->hold(pr->hold_arg);
		else
			v = LONG_MIN;
		if (write(pr->rep[1], &v, sizeof(v)) != sizeof(v))
			break;
	}
	close(pr->req[0]);
	close(pr->rep[1]);
	return wait_exit(pr->pid);
}

/* In the child: ask @c; the answer, or LONG_MIN. */
static long peer_ask(struct peer *pr, char c)
{
	long v;

	if (write(pr->req[1], &c, 1) != 1 ||
	    read(pr->rep[0], &v, sizeof(v)) != sizeof(v))
		return LONG_MIN;
	return v;
}

/* ---- fixture ------------------------------------------------------------ */

#define NDIRS	3

/*
 * Every test has a region "trust-PID-r" in /sys/fs/mshare, 0644, owned by
 * root, sized to one unit, with no object; other names it makes there
 * start with "trust-PID-" too. Whatever a test mounts lives in a mount
 * namespace of its own and dies with it; the teardown, in the parent,
 * removes the temporary directories, the cgroups (after killing what a
 * failed test left in them) and the regions.
 */
FIXTURE(trust) {
	pid_t pid;
	char path[64];
	int fd;			/* O_RDWR */
	char *w;		/* the test process's writer attachment */
	pid_t child;		/* a child to kill in the teardown */
	char cgroot[64];	/* where cgroup2 is mounted */
	bool cg_mounted;	/* by this test, on a temporary directory */
	char cg[2][128];	/* cgroups A and B, or "" */
	char dirs[NDIRS][64];	/* temporary directories, or "" */
};

FIXTURE_SETUP(trust)
{
	self->pid = getpid();
	self->fd = -1;
	self->w = NULL;
	self->child = 0;
	self->cg_mounted = false;
	if (!A)
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	ASSERT_EQ(0U, geteuid());
	snprintf(self->path, sizeof(self->path), MSHARE_DIR "/trust-%d-r",
		 self->pid);
	self->fd = mshare_region_create(AT_FDCWD, self->path, 0644, A);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
	/* Whatever the umask: others may open it read-only, and only that. */
	ASSERT_OK(fchmod(self->fd, 0644));
}

/* Kill what is left in cgroup @cg (the test's children), then remove it. */
static int cgroup_remove(const char *cg)
{
	char path[192], buf[4096], *s, *end;
	int i;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	for (i = 0; i < 50; i++) {
		if (read_small(AT_FDCWD, path, buf, sizeof(buf)) < 0 || !buf[0])
			break;
		for (s = buf; *s; s = end) {
			long pid = strtol(s, &end, 10);

			if (end == s)
				break;
			if (pid > 0)
				kill(pid, SIGKILL);
		}
		usleep(100000);
	}
	return rmdir(cg);
}

FIXTURE_TEARDOWN_PARENT(trust)
{
	int i;

	if (self->child > 0)
		kill(self->child, SIGKILL);
	for (i = 0; i < 2; i++)
		if (self->cg[i][0])
			cgroup_remove(self->cg[i]);
	if (self->cg_mounted) {
		umount2(self->cgroot, MNT_DETACH);
		rmdir(self->cgroot);
	}
	for (i = 0; i < NDIRS; i++)
		if (self->dirs[i][0])
			rmdir(self->dirs[i]);
	if (self->pid)
		unlink_tagged(MSHARE_DIR, "trust", self->pid);
}

/* A mount namespace of the test's own, where nothing propagates. */
static void private_mounts(struct __test_metadata *_metadata)
{
	ASSERT_OK(unshare(CLONE_NEWNS));
	ASSERT_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
}

/* A new temporary directory, removed by the teardown. */
static char *temp_dir(struct __test_metadata *_metadata,
		      FIXTURE_DATA(trust) *self, int i)
{
	char *d = self->dirs[i];

	snprintf(d, sizeof(self->dirs[i]), "%s", TMP_TEMPLATE);
	if (!mkdtemp(d)) {
		d[0] = '\0';
		ASSERT_TRUE(false) TH_LOG("mkdtemp: %s", strerror(errno));
	}
	return d;
}

/* ---- readers and writers ------------------------------------------------ */

/* What a reader child needs, and what it sees. */
struct rctx {
	const char *path;
	char *w;		/* the test process's attachment: not ours */
	int wfd;		/* the test process's O_RDWR descriptor */
	long base;		/* Mlocked (kB) the region's lock state gives */
	long rss;		/* region bytes resident */
	long objects;
	struct peer pr;
	/* the reader's own */
	int fd;
	char *p;
};

/*
 * The test process attaches as a writer, fills the object and notes what
 * the region holds.
 */
static void reader_setup(struct __test_metadata *_metadata,
			 FIXTURE_DATA(trust) *self, struct rctx *c)
{
	ASSERT_OK(create_mapping(self->fd, 0, OBJ, 0, RW, ANON, -1));
	ASSERT_OK(create_mapping(self->fd, SPARE_OFF, SPARE, 0, RW, ANON, -1));
	ASSERT_MAPS(self->w, mmap(NULL, A, RW, MAP_SHARED, self->fd, 0));
	tag_pages(self->w, OBJ, SEED);
	memset(c, 0, sizeof(*c));
	c->path = self->path;
	c->w = self->w;
	c->wfd = self->fd;
	c->rss = mshare_fdinfo_value(self->fd, "rss");
	c->objects = mshare_fdinfo_value(self->fd, "objects");
	ASSERT_EQ(2L, c->objects);
	ASSERT_LE((long)OBJ, c->rss);
	c->base = meminfo_exact_kb("Mlocked");
	ASSERT_LE(0L, c->base);
}

/*
 * Become a reader: drop the test process's writer attachment and
 * descriptor (fork() gave us both), become nobody, open the 0644 region
 * read-only and attach it PROT_READ. RLIMIT_MEMLOCK is unlimited first, so
 * that a refusal cannot be the limit's: mlock() checks it before anything
 * else, and mlockall() checks the whole address space against it.
 */
static int become_reader(struct rctx *c)
{
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };

	if (c->w && munmap(c->w, A))
		return -1;
	close(c->wfd);
	if (setrlimit(RLIMIT_MEMLOCK, &inf) || become_nobody() ||
	    prctl(PR_SET_DUMPABLE, 1))
		return -1;
	c->fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return -1;
	c->p = mmap(NULL, A, PROT_READ, MAP_SHARED, c->fd, 0);
	return c->p == MAP_FAILED ? -1 : 0;
}

/*
 * In a reader: after @what, the data is intact, every page of the object
 * still resident, and the region holds the same resident bytes and
 * objects.
 */
static bool reader_unchanged(struct rctx *c, const char *what)
{
	static unsigned char vec[OBJ / PG];
	long at, v;
	size_t i;

	at = tag_mismatch(c->p, OBJ, SEED);
	if (at != -1) {
		CHILD_LOG("after %s: the data of page %ld changed", what, at);
		return false;
	}
	if (mincore(c->p, OBJ, vec)) {
		CHILD_LOG("after %s: mincore: %s", what, strerror(errno));
		return false;
	}
	for (i = 0; i < OBJ / PG; i++)
		if (!(vec[i] & 1)) {
			CHILD_LOG("after %s: page %zu is no longer resident",
				  what, i);
			return false;
		}
	v = mshare_fdinfo_value(c->fd, "rss");
	if (v != c->rss) {
		CHILD_LOG("after %s: mshare-rss %ld, was %ld", what, v, c->rss);
		return false;
	}
	v = mshare_fdinfo_value(c->fd, "objects");
	if (v != c->objects) {
		CHILD_LOG("after %s: mshare-objects %ld, was %ld", what, v,
			  c->objects);
		return false;
	}
	return true;
}

/* Is no page of [@p, @p + @len) resident (@want 0), or every one (1)? */
static bool residency_is(const char *p, size_t len, int want)
{
	static unsigned char vec[SPARE / PG];
	size_t i;

	if (len > sizeof(vec) * PG || mincore((void *)p, len, vec))
		return false;
	for (i = 0; i < len / PG; i++)
		if ((vec[i] & 1) != want)
			return false;
	return true;
}

/*
 * Back in the test process, after the readers: the data, the objects and
 * Mlocked (@mlocked, kB) are as they were; the writer can still store
 * (nobody changed the protection) and the owner can still place and
 * remove an object (nothing is wedged).
 */
static void owner_unchanged(struct __test_metadata *_metadata,
			    FIXTURE_DATA(trust) *self, struct rctx *c,
			    long mlocked)
{
	long m;

	ASSERT_EQ(-1L, tag_mismatch(self->w, OBJ, SEED));
	ASSERT_EQ(c->objects, mshare_fdinfo_value(self->fd, "objects"));
	/* The test process's own attachment, no reader's left. */
	ASSERT_EQ(1L, mshare_fdinfo_value(self->fd, "attachments"));
	m = meminfo_exact_kb("Mlocked");
	ASSERT_TRUE(m >= mlocked - MLOCK_SLACK && m <= mlocked + MLOCK_SLACK)
		TH_LOG("Mlocked %ld kB, was %ld kB", m, mlocked);
	ASSERT_EQ(0, run_child(store_same, self->w + PG));
	ASSERT_EQ(0, run_child(store_same, self->w + OBJ - 1));
	ASSERT_OK(create_mapping(self->fd, NEW_OFF, PG, 0, RW, ANON, -1));
	ASSERT_EQ(c->objects + 1, mshare_fdinfo_value(self->fd, "objects"));
	self->w[NEW_OFF] = 'n';
	ASSERT_EQ('n', self->w[NEW_OFF]);
	ASSERT_OK(mshare_unmap(self->fd, NEW_OFF, PG));
	ASSERT_EQ(c->objects, mshare_fdinfo_value(self->fd, "objects"));
	ASSERT_EQ(-1L, tag_mismatch(self->w, OBJ, SEED));
}

/* What a reader may do: read, in every way, and nothing more. */
static int reader_reads(void *arg)
{
	struct rctx *c = arg;
	char buf[PG];
	int pfd[2];

	if (FAILED(become_reader(c) == 0))
		return 1;
	/*
	 * Loads. mincore() shows a reader every page resident, even of the
	 * untouched object: as for any file mapping of a process that may
	 * not write the file, residency is not its to probe. mshare-rss
	 * (in reader_unchanged()) tells what is really resident.
	 */
	if (!reader_unchanged(c, "attaching") ||
	    FAILED(residency_is(c->p + SPARE_OFF, SPARE, 1)))
		return 1;

	/* MADV_POPULATE_WRITE: refused, and nothing was brought in. */
	if (FAILED(failed_with(madvise(c->p + SPARE_OFF, SPARE,
				       MADV_POPULATE_WRITE), EINVAL)) ||
	    FAILED(failed_with(madvise(c->p, OBJ, MADV_POPULATE_WRITE),
			       EINVAL)) ||
	    !reader_unchanged(c, "MADV_POPULATE_WRITE") ||
	    FAILED(residency_is(c->p + SPARE_OFF, SPARE, 1)))
		return 1;

	/* Stores, in a resident and in an untouched object. */
	if (FAILED(run_child(do_store, c->p) == SEGV) ||
	    FAILED(run_child(do_store, c->p + OBJ - 1) == SEGV) ||
	    FAILED(run_child(do_store, c->p + SPARE_OFF) == SEGV) ||
	    !reader_unchanged(c, "stores") ||
	    FAILED(residency_is(c->p + SPARE_OFF, SPARE, 1)))
		return 1;

	/* MADV_WILLNEED is anyone's. */
	if (FAILED(madvise(c->p, OBJ, MADV_WILLNEED) == 0) ||
	    !reader_unchanged(c, "MADV_WILLNEED"))
		return 1;

	/* GUP reads: write(2) from the attachment into a pipe. */
	if (FAILED(pipe(pfd) == 0) ||
	    FAILED(write(pfd[1], c->p + PG, PG) == (ssize_t)PG) ||
	    FAILED(read(pfd[0], buf, PG) == (ssize_t)PG) ||
	    FAILED(!memcmp(buf, c->p + PG, PG)))
		return 1;
	close(pfd[0]);
	close(pfd[1]);

	/* MADV_POPULATE_READ brings the untouched object in, as zeros. */
	if (FAILED(madvise(c->p + SPARE_OFF, SPARE, MADV_POPULATE_READ) == 0) ||
	    FAILED(residency_is(c->p + SPARE_OFF, SPARE, 1)) ||
	    FAILED(mshare_fdinfo_value(c->fd, "rss") >= c->rss + (long)SPARE) ||
	    FAILED(mismatch(c->p + SPARE_OFF, SPARE, ZERO) == -1))
		return 1;
	return 0;
}

TEST_F_TIMEOUT(trust, reader_may_read, 90)
{
	struct rctx c;

	reader_setup(_metadata, self, &c);
	ASSERT_EQ(0, run_child(reader_reads, &c));
	/* Still zeros: no write got through. */
	ASSERT_EQ(-1L, mismatch(self->w + SPARE_OFF, SPARE, ZERO));
	owner_unchanged(_metadata, self, &c, c.base);
}

/* mprotect() of a reader: EACCES, whatever the protection and range. */
static int reader_mprotects(void *arg)
{
	static const int prots[] = {
		PROT_NONE, PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_EXEC,
	};
	struct rctx *c = arg;
	unsigned int i, j;
	char what[64];

	if (FAILED(become_reader(c) == 0))
		return 1;
	for (i = 0; i < ARRAY_SIZE(prots); i++) {
		const struct { size_t off, len; } ranges[] = {
			{ PG, PG }, { 0, OBJ }, { OBJ / 2, 3 * PG },
		};

		for (j = 0; j < ARRAY_SIZE(ranges); j++) {
			snprintf(what, sizeof(what),
				 "mprotect(+%#zx, %#zx, %#x)", ranges[j].off,
				 ranges[j].len, prots[i]);
			if (!failed_with(mprotect(c->p + ranges[j].off,
						  ranges[j].len, prots[i]),
					 EACCES)) {
				CHILD_LOG("%s: not EACCES but %s", what,
					  strerror(errno));
				return 1;
			}
			if (!reader_unchanged(c, what))
				return 1;
			/* PROT_NONE was not applied: loads work. */
			if (FAILED(run_child(do_load, c->p + PG) == 0) ||
			    FAILED(run_child(do_load,
					     c->p + OBJ / 2 + PG) == 0))
				return 1;
		}
	}
	return 0;
}

TEST_F_TIMEOUT(trust, reader_cannot_mprotect, 90)
{
	struct rctx c;

	reader_setup(_metadata, self, &c);
	ASSERT_EQ(0, run_child(reader_mprotects, &c));
	owner_unchanged(_metadata, self, &c, c.base);
}

/* Every advice that acts on the region for everyone. */
static const struct {
	int advice;
	const char *name;
} refused_advice[] = {
	{ MADV_DONTNEED, "MADV_DONTNEED" },
	{ MADV_REMOVE, "MADV_REMOVE" },
	{ MADV_FREE, "MADV_FREE" },
	{ MADV_COLD, "MADV_COLD" },
	{ MADV_PAGEOUT, "MADV_PAGEOUT" },
	{ MADV_HUGEPAGE, "MADV_HUGEPAGE" },
	{ MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE" },
	{ MADV_RANDOM, "MADV_RANDOM" },
	{ MADV_SEQUENTIAL, "MADV_SEQUENTIAL" },
	{ MADV_NORMAL, "MADV_NORMAL" },
	{ MADV_COLLAPSE, "MADV_COLLAPSE" },
	{ MADV_DONTNEED_LOCKED, "MADV_DONTNEED_LOCKED" },
};

/* madvise() of a reader: EPERM, and nothing changes. */
static int reader_advises(void *arg)
{
	struct rctx *c = arg;
	unsigned int i, j;
	char what[64];

	if (FAILED(become_reader(c) == 0))
		return 1;
	for (i = 0; i < ARRAY_SIZE(refused_advice); i++) {
		/* The whole object, and a part that would split it. */
		const struct { size_t off, len; } ranges[] = {
			{ 0, OBJ }, { PG, 2 * PG },
		};

		for (j = 0; j < ARRAY_SIZE(ranges); j++) {
			snprintf(what, sizeof(what), "%s of +%#zx, %#zx",
				 refused_advice[i].name, ranges[j].off,
				 ranges[j].len);
			if (!failed_with(madvise(c->p + ranges[j].off,
						 ranges[j].len,
						 refused_advice[i].advice),
					 EPERM)) {
				CHILD_LOG("%s: not EPERM but %s", what,
					  strerror(errno));
				return 1;
			}
			if (!reader_unchanged(c, what))
				return 1;
		}
	}
	/* Advice on every other page would cut the object in pieces. */
	for (i = 0; i < 64; i += 2)
		if (!failed_with(madvise(c->p + i * PG, PG, MADV_RANDOM),
				 EPERM)) {
			CHILD_LOG("MADV_RANDOM of page %u: not EPERM but %s",
				  i, strerror(errno));
			return 1;
		}
	if (!reader_unchanged(c, "MADV_RANDOM of every other page") ||
	    FAILED(mshare_fdinfo_value(c->fd, "objects") == 2))
		return 1;
	return 0;
}

TEST_F_TIMEOUT(trust, reader_cannot_advise, 90)
{
	struct rctx c;

	reader_setup(_metadata, self, &c);
	ASSERT_EQ(0, run_child(reader_advises, &c));
	owner_unchanged(_metadata, self, &c, c.base);
}

/* mlock() and friends of a reader: refused; mlockall() locks nothing. */
static int reader_locks(void *arg)
{
	struct rctx *c = arg;
	long m, locked;

	if (FAILED(become_reader(c) == 0))
		return 1;
	if (FAILED(failed_with(mlock(c->p, OBJ), EPERM)) ||
	    FAILED(failed_with(mlock(c->p + PG, PG), EPERM)) ||
	    FAILED(failed_with(mlock2(c->p, OBJ, MLOCK_ONFAULT), EPERM)) ||
	    FAILED(failed_with(mlock2(c->p + PG, PG, 0), EPERM)) ||
	    FAILED(failed_with(munlock(c->p, OBJ), EPERM)) ||
	    FAILED(failed_with(munlock(c->p + PG, PG), EPERM)) ||
	    !reader_unchanged(c, "mlock"))
		return 1;
	m = peer_ask(&c->pr, 'm');
	if (FAILED(m >= c->base - MLOCK_SLACK && m <= c->base + MLOCK_SLACK)) {
		CHILD_LOG("Mlocked %ld kB after refused mlock(), was %ld kB",
			  m, c->base);
		return 1;
	}

	/* mlockall() locks this process's memory, none of the region's. */
	if (FAILED(mlockall(MCL_CURRENT) == 0))
		return 1;
	if (FAILED(smaps_kb(c->p, "Locked") == 0))
		return 1;
	/* If fdinfo tells what the region has locked: nothing. */
	locked = mshare_fdinfo_value(c->fd, "locked");
	if (FAILED(locked == -1 || locked == 0))
		return 1;
	m = peer_ask(&c->pr, 'm');
	/* This process's own pages count: a megabyte or two, not OBJ. */
	if (FAILED(m >= c->base - MLOCK_SLACK && m < c->base + OBJ_KB / 2)) {
		CHILD_LOG("Mlocked %ld kB after mlockall(), was %ld kB", m,
			  c->base);
		return 1;
	}
	if (FAILED(munlockall() == 0) || !reader_unchanged(c, "mlockall"))
		return 1;
	return 0;
}

TEST_F_TIMEOUT(trust, reader_cannot_lock, 90)
{
	struct rctx c;
	long rss;

	reader_setup(_metadata, self, &c);
	ASSERT_OK(peer_start(&c.pr, reader_locks, &c));
	ASSERT_EQ(0, peer_serve(&c.pr));
	owner_unchanged(_metadata, self, &c, c.base);
	/* Nothing of the region is locked: the writer can drop it. */
	ASSERT_OK(madvise(self->w, OBJ, MADV_DONTNEED));
	rss = mshare_fdinfo_value(self->fd, "rss");
	ASSERT_GE((long)(64 * KIB), rss) TH_LOG("mshare-rss %ld", rss);
	ASSERT_EQ(-1L, tag_mismatch(self->w, OBJ, SEED));
}

/* A reader's munlockall() and munlock() leave the writer's lock alone. */
static int reader_unlocks(void *arg)
{
	struct rctx *c = arg;
	long m;

	if (FAILED(become_reader(c) == 0))
		return 1;
	if (FAILED(mlockall(MCL_CURRENT) == 0) ||
	    FAILED(munlockall() == 0) ||
	    FAILED(mlockall(MCL_CURRENT | MCL_ONFAULT) == 0) ||
	    FAILED(munlockall() == 0) ||
	    FAILED(failed_with(munlock(c->p, OBJ), EPERM)) ||
	    FAILED(failed_with(munlock(c->p + PG, PG), EPERM)) ||
	    !reader_unchanged(c, "munlockall"))
		return 1;
	m = peer_ask(&c->pr, 'm');
	if (FAILED(m >= c->base - MLOCK_SLACK)) {
		CHILD_LOG("Mlocked %ld kB after munlockall(), was %ld kB", m,
			  c->base);
		return 1;
	}
	return 0;
}

TEST_F_TIMEOUT(trust, reader_munlockall_keeps_writer_lock, 90)
{
	struct rctx c;
	long base, m;

	reader_setup(_metadata, self, &c);
	base = c.base;
	ASSERT_OK(mlock(self->w, OBJ));
	m = meminfo_exact_kb("Mlocked");
	TH_LOG("Mlocked %ld kB, %ld kB after the writer's mlock()", base, m);
	ASSERT_LE(base + OBJ_KB - MLOCK_SLACK, m);
	c.base = m;

	ASSERT_OK(peer_start(&c.pr, reader_unlocks, &c));
	ASSERT_EQ(0, peer_serve(&c.pr));
	owner_unchanged(_metadata, self, &c, c.base);

	/* The writer unlocks: now it goes. */
	ASSERT_OK(munlock(self->w, OBJ));
	m = mlocked_settle(base + MLOCK_SLACK);
	ASSERT_GE(base + MLOCK_SLACK, m);
}

/* A writer, even attached PROT_READ, may change the region for everyone. */
TEST_F_TIMEOUT(trust, writer_may_change, 90)
{
	long base, m, rss;
	char *w, *q;

	ASSERT_OK(create_mapping(self->fd, 0, OBJ, 0, RW, ANON, -1));
	ASSERT_MAPS(self->w, mmap(NULL, A, RW, MAP_SHARED, self->fd, 0));
	w = self->w;
	tag_pages(w, OBJ, SEED);
	base = meminfo_exact_kb("Mlocked");

	/* mprotect(): read-only for everyone, then writable again. */
	ASSERT_OK(mprotect(w, OBJ, PROT_READ));
	ASSERT_EQ(SEGV, run_child(store_same, w + PG));
	ASSERT_OK(mprotect(w, OBJ, RW));
	ASSERT_EQ(0, run_child(store_same, w + PG));

	/* Advice. */
	ASSERT_OK(madvise(w, OBJ, MADV_RANDOM));
	ASSERT_OK(madvise(w, OBJ, MADV_NORMAL));
	ASSERT_EQ(1L, mshare_fdinfo_value(self->fd, "objects"));

	/* mlock() locks the object; munlock() unlocks it. */
	ASSERT_OK(mlock(w, OBJ));
	m = meminfo_exact_kb("Mlocked");
	TH_LOG("Mlocked %ld kB, %ld kB after mlock()", base, m);
	ASSERT_LE(base + OBJ_KB - MLOCK_SLACK, m);
	ASSERT_GE(base + OBJ_KB + MLOCK_SLACK, m);
	ASSERT_OK(munlock(w, OBJ));
	m = mlocked_settle(base + MLOCK_SLACK);
	ASSERT_GE(base + MLOCK_SLACK, m);

	/* MADV_DONTNEED drops what the region maps; the data stays. */
	ASSERT_LE((long)OBJ, mshare_fdinfo_value(self->fd, "rss"));
	ASSERT_OK(madvise(w, OBJ, MADV_DONTNEED));
	rss = mshare_fdinfo_value(self->fd, "rss");
	ASSERT_GE((long)(64 * KIB), rss) TH_LOG("mshare-rss %ld", rss);
	ASSERT_EQ(-1L, tag_mismatch(w, OBJ, SEED));

	/* Attached PROT_READ from the O_RDWR descriptor: still a writer. */
	ASSERT_MAPS(q, mmap(NULL, A, PROT_READ, MAP_SHARED, self->fd, 0));
	ASSERT_OK(madvise(q, OBJ, MADV_COLD));
	ASSERT_OK(madvise(q, OBJ, MADV_SEQUENTIAL));
	ASSERT_OK(madvise(q, OBJ, MADV_NORMAL));
	ASSERT_OK(mlock(q, OBJ));
	m = meminfo_exact_kb("Mlocked");
	ASSERT_LE(base + OBJ_KB - MLOCK_SLACK, m);
	ASSERT_OK(munlock(q, OBJ));
	m = mlocked_settle(base + MLOCK_SLACK);
	ASSERT_GE(base + MLOCK_SLACK, m);
	ASSERT_OK(mprotect(q, OBJ, PROT_READ));
	ASSERT_EQ(SEGV, run_child(store_same, w + PG));
	ASSERT_OK(mprotect(w, OBJ, RW));
	ASSERT_EQ(0, run_child(store_same, w + PG));
	ASSERT_OK(madvise(q, OBJ, MADV_DONTNEED));
	ASSERT_EQ(-1L, tag_mismatch(q, OBJ, SEED));
	ASSERT_OK(munmap(q, A));
	ASSERT_EQ(1L, mshare_fdinfo_value(self->fd, "objects"));
}

/* ---- protection keys ---------------------------------------------------- */

/* A reader's pkey_mprotect() with a key of its own: EINVAL, not applied. */
static int reader_pkey(void *arg)
{
	struct rctx *c = arg;
	int key;

	if (FAILED(become_reader(c) == 0))
		return 1;
	key = pkey_alloc(0, 0);
	if (FAILED(key > 0))
		return 1;
	if (FAILED(failed_with(pkey_mprotect(c->p, OBJ, PROT_READ, key),
			       EINVAL)) ||
	    FAILED(failed_with(pkey_mprotect(c->p + PG, PG, PROT_NONE, key),
			       EINVAL)) ||
	    !reader_unchanged(c, "pkey_mprotect"))
		return 1;
	/* Were the key on the pages, loads would fault now. */
	if (FAILED(pkey_set(key, PKEY_DISABLE_ACCESS) == 0) ||
	    FAILED(run_child(do_load, c->p + PG) == 0) ||
	    !reader_unchanged(c, "pkey_set"))
		return 1;
	return 0;
}

TEST_F_TIMEOUT(trust, pkey_mprotect_refused, 60)
{
	struct rctx c;
	int key;

	SKIP_UNLESS_X86("protection keys");
	key = pkey_alloc(0, 0);
	if (key < 0 && (errno == ENOSPC || errno == EINVAL ||
			errno == ENOSYS))
		SKIP(return, "no protection keys here (pkey_alloc: %s)",
		     strerror(errno));
	ASSERT_LT(0, key) TH_LOG("pkey_alloc: %s", strerror(errno));
	reader_setup(_metadata, self, &c);

	/* The tables are everyone's, keys are per process: EINVAL. */
	ASSERT_FAILS(EINVAL, pkey_mprotect(self->w, OBJ, RW, key));
	ASSERT_FAILS(EINVAL, pkey_mprotect(self->w + PG, PG, PROT_READ, key));
	ASSERT_FAILS(EINVAL, pkey_mprotect(self->w, OBJ, PROT_NONE, key));
	/* Nothing was applied: with the key's access disabled, all works. */
	ASSERT_OK(pkey_set(key, PKEY_DISABLE_ACCESS));
	ASSERT_EQ(0, run_child(do_load, self->w + PG));
	ASSERT_EQ(0, run_child(store_same, self->w + PG));
	ASSERT_EQ(0, run_child(store_same, self->w + OBJ - 1));
	ASSERT_OK(pkey_set(key, 0));
	/* The default key is plain mprotect(). */
	ASSERT_OK(pkey_mprotect(self->w, OBJ, RW, 0));

	ASSERT_EQ(0, run_child(reader_pkey, &c));
	ASSERT_OK(pkey_free(key));
	owner_unchanged(_metadata, self, &c, c.base);
}

/* ---- RLIMIT_MEMLOCK ----------------------------------------------------- */

struct lock_ctx {
	const char *path;
	uid_t uid;		/* 0: stay root */
	rlim_t limit;		/* RLIMIT_MEMLOCK, soft and hard */
	struct peer pr;		/* the first process's questions */
};

/* Set the limit, become the user, attach the region read-write. */
static int lock_prepare(struct lock_ctx *l, char **p)
{
	struct rlimit r = { l->limit, l->limit };
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &r))
		return -1;
	if (l->uid && become_user(l->uid, l->uid))
		return -1;
	fd = open(l->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	*p = mmap(NULL, A, RW, MAP_SHARED, fd, 0);
	close(fd);
	return *p == MAP_FAILED ? -1 : 0;
}

static bool near_kb(long got, long want, const char *what)
{
	if (got >= want - MLOCK_SLACK && got <= want + MLOCK_SLACK)
		return true;
	CHILD_LOG("%s: Mlocked %ld kB, wanted %ld kB", what, got, want);
	return false;
}

/* The second process of the user, while the first's charge stands. */
static int second_locker(void *arg)
{
	struct lock_ctx *l = arg;
	char *p;

	if (FAILED(lock_prepare(l, &p) == 0))
		return 1;
	if (FAILED(failed_with(mlock(p + 2 * MIB, MIB), ENOMEM)) ||
	    FAILED(failed_with(mlock(p + 2 * MIB, PG), ENOMEM)) ||
	    FAILED(failed_with(mlock2(p + 3 * MIB, PG, MLOCK_ONFAULT),
			       ENOMEM)))
		return 1;
	/* Locking what is locked already costs nothing. */
	if (FAILED(mlock(p + MIB, MIB) == 0))
		return 1;
	return 0;
}

static long hold_second(void *arg)
{
	return run_child(second_locker, arg);
}

static int first_locker(void *arg)
{
	struct lock_ctx *l = arg;
	long m0, m;
	char *p;

	if (FAILED(lock_prepare(l, &p) == 0))
		return 1;
	m0 = peer_ask(&l->pr, 'm');
	if (FAILED(m0 >= 0))
		return 1;

	/* The limit's worth. */
	if (FAILED(mlock(p, MIB) == 0) ||
	    !near_kb(peer_ask(&l->pr, 'm'), m0 + 1024, "1 MiB locked"))
		return 1;
	/* More is refused and locks nothing, however it is asked. */
	if (FAILED(failed_with(mlock(p + MIB, MIB), ENOMEM)) ||
	    FAILED(failed_with(mlock2(p + MIB, MIB, MLOCK_ONFAULT), ENOMEM)) ||
	    FAILED(failed_with(mlock(p + MIB, PG), ENOMEM)) ||
	    !near_kb(peer_ask(&l->pr, 'm'), m0 + 1024, "refused mlock()"))
		return 1;
	/* Locking what is locked costs nothing more. */
	if (FAILED(mlock(p, MIB) == 0) || FAILED(mlock(p + PG, PG) == 0))
		return 1;
	/* Unlocking gives the charge back: the other MiB can be locked. */
	if (FAILED(munlock(p, MIB) == 0) ||
	    !near_kb(peer_ask(&l->pr, 'm'), m0, "munlock()"))
		return 1;
	if (FAILED(mlock(p + MIB, MIB) == 0) ||
	    !near_kb(peer_ask(&l->pr, 'm'), m0 + 1024, "the other MiB"))
		return 1;
	/* The charge is the user's, not this process's. */
	m = peer_ask(&l->pr, 'h');
	if (FAILED(m == 0))
		return 1;
	return 0;
}

/* After the region was freed: the user can lock again, up to the limit. */
static int third_locker(void *arg)
{
	struct lock_ctx *l = arg;
	int i;
	char *p;

	if (FAILED(lock_prepare(l, &p) == 0))
		return 1;
	/* The last reference may be dropped a moment late. */
	for (i = 0; i < 50; i++) {
		if (!mlock(p, MIB))
			break;
		if (FAILED(errno == ENOMEM))
			return 1;
		usleep(100000);
	}
	if (i == 50) {
		CHILD_LOG("the freed region's charge was never given back");
		return 1;
	}
	if (FAILED(failed_with(mlock(p + MIB, PG), ENOMEM)))
		return 1;
	return 0;
}

/* Root, with the same limit: CAP_IPC_LOCK is not limited. */
static int root_locker(void *arg)
{
	struct lock_ctx *l = arg;
	char *p;

	if (FAILED(lock_prepare(l, &p) == 0))
		return 1;
	if (FAILED(mlock(p, 4 * MIB) == 0))
		return 1;
	return 0;
}

TEST_F_TIMEOUT(trust, memlock_charged_to_user, 120)
{
	struct lock_ctx first = { .path = self->path, .uid = LOCK_UID,
				  .limit = MIB };
	struct lock_ctx second = first;
	long base, m;
	char path2[64];
	int fd2;
	char *p;

	ASSERT_OK(create_mapping(self->fd, 0, 4 * MIB, 0, RW, ANON, -1));
	ASSERT_OK(chown(self->path, LOCK_UID, LOCK_UID));
	base = meminfo_exact_kb("Mlocked");
	first.pr.hold = hold_second;
	first.pr.hold_arg = &second;
	ASSERT_OK(peer_start(&first.pr, first_locker, &first));
	ASSERT_EQ(0, peer_serve(&first.pr));

	/* The lock outlives the processes that made it. */
	m = meminfo_exact_kb("Mlocked");
	TH_LOG("Mlocked %ld kB, %ld kB after the user's processes", base, m);
	ASSERT_LE(base + 1024 - MLOCK_SLACK, m);
	ASSERT_GE(base + 1024 + MLOCK_SLACK, m);

	/* Destroying the region frees the pages and the charge. */
	ASSERT_OK(unlink(self->path));
	ASSERT_OK(close(self->fd));
	self->fd = -1;
	m = mlocked_settle(base + MLOCK_SLACK);
	ASSERT_GE(base + MLOCK_SLACK, m);

	snprintf(path2, sizeof(path2), MSHARE_DIR "/trust-%d-lock", self->pid);
	fd2 = mshare_region_create(AT_FDCWD, path2, 0600, A);
	ASSERT_LE(0, fd2) TH_LOG("%s: %s", path2, strerror(errno));
	ASSERT_OK(create_mapping(fd2, 0, 4 * MIB, 0, RW, ANON, -1));
	ASSERT_OK(chown(path2, LOCK_UID, LOCK_UID));
	first.path = path2;
	ASSERT_EQ(0, run_child(third_locker, &first));

	/* Root is not limited by its RLIMIT_MEMLOCK. */
	first.uid = 0;
	ASSERT_EQ(0, run_child(root_locker, &first));
	m = meminfo_exact_kb("Mlocked");
	ASSERT_LE(base + 4096 - MLOCK_SLACK, m);
	ASSERT_MAPS(p, mmap(NULL, A, RW, MAP_SHARED, fd2, 0));
	ASSERT_OK(munlock(p, 4 * MIB));
	ASSERT_OK(munmap(p, A));
	m = mlocked_settle(base + MLOCK_SLACK);
	ASSERT_GE(base + MLOCK_SLACK, m);
	ASSERT_OK(close(fd2));
	ASSERT_OK(unlink(path2));
}

/* ---- page tables -------------------------------------------------------- */

/* One PUD, one PMD and one PTE table, and a page of slack. */
#define UNIT_TABLES	(4 * (long)PG + (long)PG)

TEST_F_TIMEOUT(trust, largest_region_costs_no_tables, 90)
{
	unsigned long size = 128 * TIB - A, found = 0;
	long pt0, pt1, t0, t1;
	char path[64];
	struct stat st;
	int fd = -1, tries;
	char *p;

	snprintf(path, sizeof(path), MSHARE_DIR "/trust-%d-max", self->pid);
	pt0 = meminfo_exact_kb("PageTables");
	/* The largest size ftruncate() accepts; EINVAL above it. */
	for (tries = 0; tries < 16 && size >= A; tries++, size -= A) {
		fd = mshare_region_create(AT_FDCWD, path, 0600, size);
		if (fd >= 0) {
			found = size;
			break;
		}
		ASSERT_EQ(EINVAL, errno)
			TH_LOG("sizing to %#lx: %s", size, strerror(errno));
	}
	ASSERT_LE(0, fd) TH_LOG("no size from %lu TiB down was accepted",
				(128 * TIB - A) / TIB);
	pt1 = meminfo_exact_kb("PageTables");
	TH_LOG("largest region %lu GiB; PageTables %ld -> %ld kB",
	       found / GIB, pt0, pt1);
	ASSERT_OK(fstat(fd, &st));
	ASSERT_EQ((off_t)found, st.st_size);
	ASSERT_EQ(0L, mshare_fdinfo_value(fd, "pgtables"));
	ASSERT_GE(pt0 + 64, pt1);

	/* One small object: the tables of its unit, no more. */
	ASSERT_OK(create_mapping(fd, 0, 4 * PG, 0, RW, ANON, -1));
	t0 = mshare_fdinfo_value(fd, "pgtables");
	TH_LOG("mshare-pgtables %ld with one object", t0);
	ASSERT_LT(0L, t0);
	ASSERT_GE(UNIT_TABLES, t0);
	/* One in the last unit: that unit's tables too. */
	ASSERT_OK(create_mapping(fd, found - A, 4 * PG, 0, RW, ANON, -1));
	t1 = mshare_fdinfo_value(fd, "pgtables");
	TH_LOG("mshare-pgtables %ld with another in the last unit", t1);
	ASSERT_LT(t0, t1);
	ASSERT_GE(2 * UNIT_TABLES, t1);
	ASSERT_OK(close(fd));
	ASSERT_OK(unlink(path));

	/* Attached and touched, a 16-unit region costs one unit's tables. */
	snprintf(path, sizeof(path), MSHARE_DIR "/trust-%d-units", self->pid);
	pt0 = meminfo_exact_kb("PageTables");
	fd = mshare_region_create(AT_FDCWD, path, 0600, 16 * A);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0L, mshare_fdinfo_value(fd, "pgtables"));
	ASSERT_OK(create_mapping(fd, 15 * A, 4 * PG, 0, RW, ANON, -1));
	ASSERT_MAPS(p, mmap(NULL, 16 * A, RW, MAP_SHARED, fd, 0));
	memset(p + 15 * A, 'x', 4 * PG);
	t0 = mshare_fdinfo_value(fd, "pgtables");
	pt1 = meminfo_exact_kb("PageTables");
	TH_LOG("16 units, one touched: mshare-pgtables %ld, PageTables %ld -> %ld kB",
	       t0, pt0, pt1);
	ASSERT_LT(0L, t0);
	ASSERT_GE(UNIT_TABLES, t0);
	ASSERT_GE(pt0 + 64 + UNIT_TABLES / 1024, pt1);
	ASSERT_EQ('x', p[15 * A + 4 * PG - 1]);
	ASSERT_OK(munmap(p, 16 * A));
	ASSERT_OK(close(fd));
	ASSERT_OK(unlink(path));
}

/* ---- the inode limit of a mount ----------------------------------------- */

static int make_region(const char *dir, const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int make_dir(const char *dir, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return mkdir(path, 0755);
}

TEST_F(trust, nr_inodes_limit)
{
	struct statfs sfs;
	char path[128];
	char *d;

	private_mounts(_metadata);
	d = temp_dir(_metadata, self, 0);
	ASSERT_EQ(0, mount("none", d, "msharefs", 0, "nr_inodes=5"))
		TH_LOG("mount -o nr_inodes=5: %s", strerror(errno));
	ASSERT_OK(statfs(d, &sfs));
	ASSERT_EQ((long)MSHARE_MAGIC, (long)sfs.f_type);
	ASSERT_EQ(5UL, (unsigned long)sfs.f_files);

	/* The root and mshare_info take two: three names are left. */
	ASSERT_OK(make_region(d, "a"));
	ASSERT_OK(make_dir(d, "dir"));
	ASSERT_OK(make_region(d, "b"));
	ASSERT_OK(statfs(d, &sfs));
	ASSERT_EQ(0UL, (unsigned long)sfs.f_ffree);
	ASSERT_FAILS(ENOSPC, make_region(d, "c"));
	ASSERT_FAILS(ENOSPC, make_dir(d, "e"));
	ASSERT_FAILS(ENOSPC, make_region(d, "dir/x"));

	/* Removing one gives its slot back, once. */
	snprintf(path, sizeof(path), "%s/a", d);
	ASSERT_OK(unlink(path));
	ASSERT_OK(make_region(d, "c"));
	ASSERT_FAILS(ENOSPC, make_dir(d, "e"));
	snprintf(path, sizeof(path), "%s/dir", d);
	ASSERT_OK(rmdir(path));
	ASSERT_OK(make_dir(d, "e"));
	ASSERT_FAILS(ENOSPC, make_region(d, "f"));

	ASSERT_OK(umount(d));
}

TEST_F(trust, default_and_unlimited_inodes)
{
	struct statfs sfs;
	char name[16];
	char *d;
	int i;

	/* The instance on /sys/fs/mshare and a new one: a finite limit. */
	ASSERT_OK(statfs(MSHARE_DIR, &sfs));
	TH_LOG(MSHARE_DIR ": f_files %lu", (unsigned long)sfs.f_files);
	ASSERT_LT(0UL, (unsigned long)sfs.f_files);
	ASSERT_NE(~0UL, (unsigned long)sfs.f_files);

	private_mounts(_metadata);
	d = temp_dir(_metadata, self, 0);
	ASSERT_OK(mount("none", d, "msharefs", 0, NULL));
	ASSERT_OK(statfs(d, &sfs));
	TH_LOG("a new mount: f_files %lu", (unsigned long)sfs.f_files);
	ASSERT_LT(0UL, (unsigned long)sfs.f_files);
	ASSERT_NE(~0UL, (unsigned long)sfs.f_files);
	ASSERT_OK(umount(d));

	/* nr_inodes=0: no limit, which statfs() tells as tmpfs does. */
	ASSERT_EQ(0, mount("none", d, "msharefs", 0, "nr_inodes=0"))
		TH_LOG("mount -o nr_inodes=0: %s", strerror(errno));
	ASSERT_OK(statfs(d, &sfs));
	ASSERT_EQ(0UL, (unsigned long)sfs.f_files);
	for (i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		ASSERT_OK(make_region(d, name));
	}
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		ASSERT_OK(make_dir(d, name));
	}
	ASSERT_OK(umount(d));
}

/* ---- memory cgroups ----------------------------------------------------- */

/* Find or mount cgroup2, enable the memory controller, make A and B. */
static void cgroups_make(struct __test_metadata *_metadata,
			 FIXTURE_DATA(trust) *self)
{
	char path[192], name[128];
	struct statfs sfs;
	int i;

	if (!statfs(CGROOT, &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC) {
		snprintf(self->cgroot, sizeof(self->cgroot), "%s", CGROOT);
	} else {
		snprintf(self->cgroot, sizeof(self->cgroot), "%s",
			 TMP_TEMPLATE);
		ASSERT_NE(NULL, mkdtemp(self->cgroot));
		ASSERT_EQ(0, mount("cgroup2", self->cgroot, "cgroup2", 0, NULL))
			TH_LOG("mount -t cgroup2: %s", strerror(errno));
		self->cg_mounted = true;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control",
		 self->cgroot);
	ASSERT_EQ(0, write_str(path, "+memory\n"))
		TH_LOG("+memory in %s: %s", path, strerror(errno));
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s/trust-%d-%c", self->cgroot,
			 self->pid, 'a' + i);
		ASSERT_EQ(0, mkdir(name, 0755)) TH_LOG("%s: %s", name,
						     strerror(errno));
		snprintf(self->cg[i], sizeof(self->cg[i]), "%s", name);
	}
}

static void cgroups_remove(struct __test_metadata *_metadata,
			   FIXTURE_DATA(trust) *self)
{
	int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, cgroup_remove(self->cg[i]))
			TH_LOG("rmdir %s: %s", self->cg[i], strerror(errno));
		self->cg[i][0] = '\0';
	}
}

static long cg_long(const char *cg, const char *file)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return read_long(path);
}

static int cg_write(const char *cg, const char *file, const char *val)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_str(path, val);
}

static int cg_join(const char *cg)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	return cg_write(cg, "cgroup.procs", pid);
}

struct cg_job {
	const char *cg;			/* the cgroup to run in */
	const char *path;		/* the region */
	unsigned long size;		/* of its object */
	volatile unsigned long *done;	/* pages touched (shared), or NULL */
	unsigned int timeout;		/* alarm(), or 0 */
};

/* In A: create the region, size it, place the object. */
static int cg_sizer(void *arg)
{
	struct cg_job *j = arg;
	int fd;

	if (FAILED(cg_join(j->cg) == 0))
		return 1;
	fd = mshare_region_create(AT_FDCWD, j->path, 0600, A);
	if (FAILED(fd >= 0) ||
	    FAILED(create_mapping(fd, 0, j->size, 0, RW, ANON, -1) == 0))
		return 1;
	return 0;
}

/* In B: attach and write every page of the object. */
static int cg_toucher(void *arg)
{
	struct cg_job *j = arg;
	size_t i;
	char *p;
	int fd;

	if (j->timeout)
		alarm(j->timeout);
	if (FAILED(cg_join(j->cg) == 0))
		return 1;
	fd = open(j->path, O_RDWR | O_CLOEXEC);
	if (FAILED(fd >= 0))
		return 1;
	p = mmap(NULL, A, RW, MAP_SHARED, fd, 0);
	if (FAILED(p != MAP_FAILED))
		return 1;
	for (i = 0; i < j->size / PG; i++) {
		p[i * PG] = page_tag(SEED, i);
		if (j->done)
			*j->done = i + 1;
	}
	for (i = 0; i < j->size / PG; i++)
		if (FAILED(p[i * PG] == page_tag(SEED, i)))
			return 1;
	return 0;
}

/* Touched from B, a region sized in A is A's. */
TEST_F_TIMEOUT(trust, memcg_charged_where_sized, 90)
{
	struct cg_job ja = { .size = 16 * MIB }, jb;
	long a0, b0, a1, b1;
	char path[64];

	cgroups_make(_metadata, self);
	snprintf(path, sizeof(path), MSHARE_DIR "/trust-%d-memcg", self->pid);
	ja.path = path;
	ja.cg = self->cg[0];
	jb = ja;
	jb.cg = self->cg[1];

	a0 = cg_long(self->cg[0], "memory.current");
	b0 = cg_long(self->cg[1], "memory.current");
	ASSERT_LE(0L, a0);
	ASSERT_LE(0L, b0);
	ASSERT_EQ(0, run_child(cg_sizer, &ja));
	ASSERT_EQ(0, run_child(cg_toucher, &jb));
	a1 = cg_long(self->cg[0], "memory.current");
	b1 = cg_long(self->cg[1], "memory.current");
	TH_LOG("memory.current: A %ld -> %ld, B %ld -> %ld", a0, a1, b0, b1);
	ASSERT_LE(a0 + (long)(14 * MIB), a1);
	ASSERT_GT(b0 + (long)(2 * MIB), b1);

	ASSERT_OK(unlink(path));
	cgroups_remove(_metadata, self);
}

/*
 * A writer in B touching 64 MiB of a region sized in A, whose limit is
 * 32 MiB without swap, cannot push A beyond its limit; it gets killed,
 * SIGBUS or stuck (and then its alarm) before it has touched everything.
 */
TEST_F_TIMEOUT(trust, memcg_limit_of_sizer_holds, 150)
{
	struct cg_job ja = { .size = 64 * MIB }, jb;
	volatile unsigned long *done;
	long peak, cur, seen = 0;
	int status, st = -1;
	char path[64];
	pid_t pid;

	cgroups_make(_metadata, self);
	ASSERT_OK(cg_write(self->cg[0], "memory.max", "33554432\n"));
	if (cg_write(self->cg[0], "memory.swap.max", "0\n"))
		TH_LOG("memory.swap.max: %s (no swap accounting)",
		       strerror(errno));
	snprintf(path, sizeof(path), MSHARE_DIR "/trust-%d-memcg", self->pid);
	ja.path = path;
	ja.cg = self->cg[0];
	ASSERT_EQ(0, run_child(cg_sizer, &ja));

	done = mmap(NULL, PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, done);
	*done = 0;
	jb = ja;
	jb.cg = self->cg[1];
	jb.done = done;
	jb.timeout = 30;
	pid = spawn(cg_toucher, &jb);
	ASSERT_LT(0, pid);
	self->child = pid;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		cur = cg_long(self->cg[0], "memory.current");
		if (cur > seen)
			seen = cur;
		if (r == pid)
			break;
		ASSERT_EQ(0, r) TH_LOG("waitpid: %s", strerror(errno));
		usleep(20000);
	}
	self->child = 0;
	if (WIFEXITED(status))
		st = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		st = 128 + WTERMSIG(status);
	peak = cg_long(self->cg[0], "memory.peak");
	TH_LOG("toucher status %d after %lu of %lu pages; A: memory.peak %ld, highest sampled %ld",
	       st, *done, jb.size / PG, peak, seen);
	if (peak < 0)
		peak = seen;
	ASSERT_NE(0, st);
	ASSERT_GT(jb.size / PG, *done);
	ASSERT_GE((long)(33 * MIB), peak);
	ASSERT_GE((long)(33 * MIB), seen);
	/* The pages did go to A: it filled up to its limit. */
	ASSERT_LE((long)(24 * MIB), peak);

	ASSERT_OK(unlink(path));
	cgroups_remove(_metadata, self);
}

/* ---- nesting: overlayfs ------------------------------------------------- */

/* @fd's objects and attachments in fdinfo are @objects and 0. */
static void assert_nothing_placed(struct __test_metadata *_metadata, int fd,
				  long objects)
{
	ASSERT_EQ(objects, mshare_fdinfo_value(fd, "objects"));
	ASSERT_EQ(0L, mshare_fdinfo_value(fd, "attachments"));
}

TEST_F_TIMEOUT(trust, overlay_is_no_backing, 60)
{
	char path[128], opts[160], *m, *o, *e;
	int r, r2, rro, ofd, ofd2;
	struct statfs sfs;
	unsigned int i, j;

	private_mounts(_metadata);
	m = temp_dir(_metadata, self, 0);
	o = temp_dir(_metadata, self, 1);
	e = temp_dir(_metadata, self, 2);
	ASSERT_OK(mount("none", m, "msharefs", 0, NULL));
	snprintf(path, sizeof(path), "%s/" INFO_NAME, m);
	ASSERT_EQ(A, read_align_at(AT_FDCWD, path));

	snprintf(path, sizeof(path), "%s/r", m);
	r = mshare_region_create(AT_FDCWD, path, 0600, A);
	ASSERT_LE(0, r) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_OK(create_mapping(r, 0, 4 * PG, 0, RW, ANON, -1));
	rro = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rro);
	snprintf(path, sizeof(path), "%s/r2", m);
	r2 = mshare_region_create(AT_FDCWD, path, 0600, A);
	ASSERT_LE(0, r2) TH_LOG("%s: %s", path, strerror(errno));
	assert_nothing_placed(_metadata, r, 1);
	assert_nothing_placed(_metadata, r2, 0);

	/* Without an upper layer overlayfs wants two lower ones. */
	snprintf(opts, sizeof(opts), "lowerdir=%s:%s", m, e);
	ASSERT_EQ(0, mount("overlay", o, "overlay", 0, opts))
		TH_LOG("mount -t overlay -o %s: %s", opts, strerror(errno));
	/* With no upper layer the overlay is read-only. */
	snprintf(path, sizeof(path), "%s/r", o);
	ASSERT_FAILS(EROFS, open(path, O_RDWR));
	ofd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ofd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_OK(fstatfs(ofd, &sfs));
	ASSERT_EQ((long)OVERLAYFS_SUPER_MAGIC, (long)sfs.f_type);
	snprintf(path, sizeof(path), "%s/r2", o);
	ofd2 = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ofd2) TH_LOG("%s: %s", path, strerror(errno));

	/*
	 * No region is the backing of an object: not itself, not another,
	 * not through the overlay, whatever descriptor leads to it.
	 */
	{
		const struct { int fd; const char *what; } backing[] = {
			{ ofd, "overlay file of r" },
			{ ofd2, "overlay file of r2" },
			{ r, "r" }, { rro, "r, read-only" }, { r2, "r2" },
		};
		const struct { int fd; long objects; const char *what; }
			target[] = { { r, 1, "r" }, { r2, 0, "r2" } };

		for (i = 0; i < ARRAY_SIZE(target); i++)
			for (j = 0; j < ARRAY_SIZE(backing); j++) {
				ASSERT_FAILS_MSG(EINVAL,
					create_mapping(target[i].fd, MIB, PG, 0,
						       PROT_READ, FILEMAP,
						       backing[j].fd),
					": %s as an object of %s",
					backing[j].what, target[i].what);
				assert_nothing_placed(_metadata, target[i].fd,
						      target[i].objects);
			}
	}

	/* Nothing holds either mount. */
	close(ofd);
	close(ofd2);
	ASSERT_EQ(0, umount(o)) TH_LOG("umount overlay: %s", strerror(errno));
	assert_nothing_placed(_metadata, r, 1);
	assert_nothing_placed(_metadata, r2, 0);
	close(rro);
	close(r);
	close(r2);
	ASSERT_EQ(0, umount(m)) TH_LOG("umount msharefs: %s", strerror(errno));
}

struct userns_ctx {
	char m[64];		/* the msharefs mount */
	char o[64];		/* where nobody mounts the overlay */
	char e[64];		/* an empty second lower layer */
};

static int write_file(const char *path, const char *s)
{
	if (write_str(path, s)) {
		CHILD_LOG("writing %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* As nobody, in a user namespace of its own: the same, through overlayfs. */
static int userns_child(void *arg)
{
	struct userns_ctx *u = arg;
	char path[128], opts[160];
	int fd, ofd;

	/*
	 * Dumpable again after the setuid, so that /proc/self stays ours
	 * and the id maps can be written.
	 */
	if (FAILED(become_nobody() == 0) ||
	    FAILED(prctl(PR_SET_DUMPABLE, 1) == 0))
		return 1;
	snprintf(path, sizeof(path), "%s/u", u->m);
	fd = mshare_region_create(AT_FDCWD, path, 0600, A);
	if (FAILED(fd >= 0) ||
	    FAILED(create_mapping(fd, 0, 4 * PG, 0, RW, ANON, -1) == 0))
		return 1;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		CHILD_LOG("unshare(CLONE_NEWUSER | CLONE_NEWNS): %s: the kernel needs CONFIG_USER_NS",
			  strerror(errno));
		return 2;
	}
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", "0 65534 1") ||
	    write_file("/proc/self/gid_map", "0 65534 1"))
		return 3;
	if (FAILED(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0))
		return 4;
	snprintf(opts, sizeof(opts), "lowerdir=%s:%s", u->m, u->e);
	if (mount("overlay", u->o, "overlay", 0, opts)) {
		CHILD_LOG("mounting overlayfs (%s) over msharefs in a user namespace: %s",
			  opts, strerror(errno));
		return 5;
	}
	snprintf(path, sizeof(path), "%s/u", u->o);
	ofd = open(path, O_RDONLY | O_CLOEXEC);
	if (FAILED(ofd >= 0))
		return 6;
	if (FAILED(failed_with(create_mapping(fd, MIB, PG, 0, PROT_READ,
					      FILEMAP, ofd), EINVAL)) ||
	    FAILED(failed_with(create_mapping(fd, MIB, PG, 0, PROT_READ,
					      FILEMAP, fd), EINVAL)) ||
	    FAILED(mshare_fdinfo_value(fd, "objects") == 1) ||
	    FAILED(mshare_fdinfo_value(fd, "attachments") == 0))
		return 7;
	close(ofd);
	if (FAILED(umount(u->o) == 0))
		return 8;
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(trust, overlay_in_user_namespace, 60)
{
	struct userns_ctx u;
	char path[128];
	int fd;

	private_mounts(_metadata);
	snprintf(u.m, sizeof(u.m), "%s", temp_dir(_metadata, self, 0));
	snprintf(u.o, sizeof(u.o), "%s", temp_dir(_metadata, self, 1));
	snprintf(u.e, sizeof(u.e), "%s", temp_dir(_metadata, self, 2));
	ASSERT_OK(mount("none", u.m, "msharefs", 0, NULL));
	ASSERT_OK(chmod(u.m, 01777));
	ASSERT_OK(chown(u.o, NOBODY, NOBODY));

	ASSERT_EQ(0, run_child(userns_child, &u));

	/* nobody's region holds its object and nothing else. */
	snprintf(path, sizeof(path), "%s/u", u.m);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	assert_nothing_placed(_metadata, fd, 1);
	close(fd);
	ASSERT_EQ(0, umount(u.m)) TH_LOG("umount msharefs: %s", strerror(errno));
}

/* ---- the OOM score ------------------------------------------------------ */

#define OOM_OBJ		(256 * MIB)
#define HAMMERS		3

/* Keep this process's mmap_lock busy, for ever. */
static void *hammer(void *arg)
{
	int *running = arg;

	__atomic_add_fetch(running, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		char *q = mmap(NULL, 64 * KIB, RW,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (q == MAP_FAILED)
			continue;
		mprotect(q, 64 * KIB, PROT_READ);
		munmap(q, 64 * KIB);
	}
	return NULL;
}

/*
 * fork() write-locks every VMA of the process while it copies them, the
 * attachment too: a process that forks all the time must not hide its
 * regions either. Many VMAs make each fork long.
 */
static void *forker(void *arg)
{
	int *running = arg;
	pid_t pid;
	int i;

	for (i = 0; i < 256; i++) {
		char *q = mmap(NULL, PG, i & 1 ? PROT_READ : RW,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (q != MAP_FAILED)
			*(volatile char *)q;
	}
	__atomic_add_fetch(running, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

struct oom_ctx {
	int fd;			/* the region */
	int up[2];		/* child -> test process: steps */
	int down[2];		/* test process -> child: go on */
};

static int step(struct oom_ctx *o, char c)
{
	if (write(o->up[1], &c, 1) != 1 || read(o->down[0], &c, 1) != 1)
		return -1;
	return 0;
}

/* Say 'a'; attach, say 'b'; start the hammers, say 'c'; wait. */
static int oom_child(void *arg)
{
	static int running;
	struct oom_ctx *o = arg;
	pthread_t t;
	char *p;
	int i;

	alarm(120);
	if (FAILED(step(o, 'a') == 0))
		return 1;
	p = mmap(NULL, A, RW, MAP_SHARED, o->fd, 0);
	if (FAILED(p != MAP_FAILED))
		return 1;
	(void)*(volatile char *)p;
	if (FAILED(step(o, 'b') == 0))
		return 1;
	for (i = 0; i < HAMMERS; i++)
		if (FAILED(pthread_create(&t, NULL, hammer, &running) == 0))
			return 1;
	if (FAILED(pthread_create(&t, NULL, forker, &running) == 0))
		return 1;
	while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < HAMMERS + 1)
		sched_yield();
	usleep(10000);
	if (FAILED(step(o, 'c') == 0))
		return 1;
	for (;;)
		pause();
}

static long oom_score(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/oom_score", pid);
	return read_long(path);
}

/* Wait for step @c of the child, then let it go on. */
static int wait_step(struct oom_ctx *o, char c)
{
	char got;

	if (read(o->up[0], &got, 1) != 1 || got != c)
		return -1;
	return 0;
}

static int go_on(struct oom_ctx *o)
{
	return write(o->down[1], "g", 1) == 1 ? 0 : -1;
}

TEST_F_TIMEOUT(trust, oom_score_under_mmap_lock_load, 180)
{
	struct oom_ctx o = { .fd = self->fd };
	long s0, s1, s, low, want, total, least;
	static char status[8192];
	int i, bad = 0, bad_status = 0;
	char path[64];
	pid_t pid;

	ASSERT_OK(create_mapping(self->fd, 0, OOM_OBJ, 0, RW, ANON, -1));
	ASSERT_MAPS(self->w, mmap(NULL, A, RW, MAP_SHARED, self->fd, 0));
	ASSERT_OK(madvise(self->w, OOM_OBJ, MADV_POPULATE_WRITE));
	ASSERT_OK(munmap(self->w, A));
	self->w = NULL;
	ASSERT_LE((long)OOM_OBJ, mshare_fdinfo_value(self->fd, "rss"));

	ASSERT_OK(pipe(o.up));
	ASSERT_OK(pipe(o.down));
	pid = spawn(oom_child, &o);
	ASSERT_LT(0, pid);
	self->child = pid;

	ASSERT_OK(wait_step(&o, 'a'));
	s0 = oom_score(pid);
	ASSERT_OK(go_on(&o));
	ASSERT_OK(wait_step(&o, 'b'));
	s1 = oom_score(pid);
	ASSERT_OK(go_on(&o));
	ASSERT_OK(wait_step(&o, 'c'));

	/* oom_score is (1000 + badness in thousandths of RAM + swap) * 2/3. */
	total = meminfo_kb("MemTotal") + meminfo_kb("SwapTotal");
	want = (long)(OOM_OBJ / KIB) * 1000 / total * 2 / 3;
	TH_LOG("oom_score %ld before attaching, %ld attached; the object is worth %ld",
	       s0, s1, want);
	ASSERT_LE(s0 + want * 3 / 4, s1);

	/* However busy its mmap_lock, the region always counts. */
	least = s1 - (want / 2 > 1 ? want / 2 : 1);
	low = s1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	for (i = 0; i < 2000; i++) {
		s = oom_score(pid);
		if (s < low)
			low = s;
		if (s < least)
			bad++;
		if (i % 10 == 0 &&
		    (read_small(AT_FDCWD, path, status, sizeof(status)) <= 0 ||
		     !strstr(status, "\nVmPTE:")))
			bad_status++;
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, wait_exit(pid));
	self->child = 0;
	TH_LOG("2000 samples: lowest %ld, %d below %ld; %d bad status reads",
	       low, bad, least, bad_status);
	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, bad_status);
}

/* ---- pagemap ------------------------------------------------------------ */

#define PM_PRESENT	(1ULL << 63)
#define OBJ1_OFF	(16 * PG)
#define OBJ1		(16 * PG)
#define OBJ2_OFF	(GIB + 2 * MIB)
#define OBJ2		(4 * PG)
#define PM_MAX		(GIB / PG)	/* entries in one read */

/*
 * Read the pagemap entries of @n pages from @from: the full count, and,
 * inside attachment @p, present exactly in the two objects.
 */
static void pm_span(struct __test_metadata *_metadata, int pm, uint64_t *ent,
		    char *p, char *from, size_t n, const char *what)
{
	ssize_t got;
	size_t i;

	ASSERT_GE(PM_MAX, n);
	errno = 0;
	got = pread(pm, ent, n * 8, (uintptr_t)from / PG * 8);
	ASSERT_EQ((ssize_t)(n * 8), got)
		TH_LOG("pagemap of %s (%zu pages from %p): %zd, %s", what, n,
		       from, got, strerror(errno));
	for (i = 0; i < n; i++) {
		char *a = from + i * PG;
		bool want, present = ent[i] & PM_PRESENT;
		unsigned long off;

		if (a < p || a >= p + A)
			continue;
		off = a - p;
		want = (off >= OBJ1_OFF && off < OBJ1_OFF + OBJ1) ||
		       (off >= OBJ2_OFF && off < OBJ2_OFF + OBJ2);
		ASSERT_EQ(want, present)
			TH_LOG("pagemap of %s: region offset %#lx %s present",
			       what, off, present ? "is" : "is not");
	}
}

TEST_F_TIMEOUT(trust, pagemap_over_holes, 90)
{
	uint64_t *ent;
	char *p;
	int pm;

	ASSERT_OK(create_mapping(self->fd, OBJ1_OFF, OBJ1, 0, RW, ANON, -1));
	ASSERT_OK(create_mapping(self->fd, OBJ2_OFF, OBJ2, 0, RW, ANON, -1));
	ASSERT_MAPS(self->w, mmap(NULL, A, RW, MAP_SHARED, self->fd, 0));
	p = self->w;
	fill(p + OBJ1_OFF, OBJ1, 7);
	fill(p + OBJ2_OFF, OBJ2, 8);

	ent = malloc(PM_MAX * 8);
	ASSERT_NE(NULL, ent);
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, pm);

	/* Below the attachment, whatever is there. */
	pm_span(_metadata, pm, ent, p, p - PG, 1, "the page below");
	pm_span(_metadata, pm, ent, p, p - 16 * PG, 16, "the gap below");
	/* From below into the region's first hole and its first object. */
	pm_span(_metadata, pm, ent, p, p - 16 * PG, 48, "below into it");
	/* A hole of the region, where it starts. */
	pm_span(_metadata, pm, ent, p, p, OBJ1_OFF / PG, "the first hole");
	/* From a hole into an object and out again. */
	pm_span(_metadata, pm, ent, p, p + 8 * PG, 32, "hole, object, hole");
	pm_span(_metadata, pm, ent, p, p + OBJ1_OFF, OBJ1 / PG, "an object");
	/* A gigabyte: an object, then empty PTE, PMD and PUD ranges. */
	pm_span(_metadata, pm, ent, p, p, PM_MAX, "the first GiB");
	pm_span(_metadata, pm, ent, p, p + OBJ2_OFF - 2 * MIB,
		(4 * MIB + OBJ2) / PG, "around the last object");
	/* From the end of the last object to the end of the attachment. */
	pm_span(_metadata, pm, ent, p, p + OBJ2_OFF + OBJ2, PM_MAX,
		"the GiB after the last object");
	pm_span(_metadata, pm, ent, p, p + A / 2 - MIB, 2 * MIB / PG,
		"the middle");
	pm_span(_metadata, pm, ent, p, p + A - GIB, PM_MAX, "the last GiB");
	/* Across the end, and above it. */
	pm_span(_metadata, pm, ent, p, p + A - 16 * PG, 32, "across the end");
	pm_span(_metadata, pm, ent, p, p + A, 1, "the page above");

	close(pm);
	free(ent);
	ASSERT_EQ(-1L, mismatch(p + OBJ1_OFF, OBJ1, 7));
	ASSERT_EQ(-1L, mismatch(p + OBJ2_OFF, OBJ2, 8));
}

TEST_HARNESS_MAIN
