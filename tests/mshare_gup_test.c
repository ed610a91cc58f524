// SPDX-License-Identifier: GPL-2.0
/*
 * get_user_pages() on msharefs attachments. The pages of an attachment are
 * looked up in the region (through the region's mm, under its lock), so
 * every GUP user works on a writable attachment, also between processes
 * that attach the region at different addresses:
 *
 *  - process_vm_readv/writev, /proc/PID/mem, ptrace PEEK/POKE, O_DIRECT
 *    (into anonymous and hugetlb objects) and vmsplice move the right
 *    bytes, checked through a second attachment at another address;
 *  - shared futexes are keyed by the backing page: a waiter through one
 *    attachment is woken through another, and pthread mutexes and POSIX
 *    semaphores work between 32 processes attached at 32 addresses while
 *    another process reads a file into the region with O_DIRECT;
 *  - what may not write does not: a read-only attachment and a PROT_READ
 *    object refuse every GUP write with a clean errno and keep their data;
 *    holes give EFAULT, and a transfer that runs into one is short;
 *  - MSHAREFS_UNMAP under a futex waiter leaves it to be woken or to time
 *    out.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y, msharefs on /sys/fs/mshare, a
 * disk file system on /mnt/disk and free 2 MiB pages on /dev/hugepages.
 *
 * Build: make -C tests, or
 *   gcc -static -O2 -Wall -Wextra -I<linux>/tools/testing/selftests \
 *       -I<uapi headers> -o mshare_gup_test mshare_gup_test.c -lpthread
 * Run:   ./mshare_gup_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <linux/futex.h>

#include "mshare_test.h"


#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)

#define ANON_HUGE	(ANON | MAP_HUGETLB)

/*
 * Writes through ptrace and /proc/PID/mem go through access_remote_vm(),
 * which reports a refused page as "nothing copied": both give EIO, where
 * process_vm_writev() and O_DIRECT give the EFAULT of GUP.
 */
#define EMEM		EIO

/* The alignment (and size of every region here), from mshare_info. */
static unsigned long A;

/* A transfer @call must move exactly @n bytes. */
#define ASSERT_MOVES(n, call) do {					\
	long _want = (long)(n), _got = (long)(call);			\
									\
	ASSERT_EQ(_want, _got) TH_LOG("%s: %s", #call,			\
				      _got < 0 ? strerror(errno) : "short"); \
} while (0)

/* ---- helpers ---------------------------------------------------------- */

static int create_anon(int fd, __u64 roff, __u64 size, __u32 prot)
{
	return create_mapping(fd, roff, size, 0, prot, ANON, -1);
}

/* Index of the first non-zero byte of @len at @p, or -1. */
static long nonzero(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return i;
	return -1;
}

#define ASSERT_ZERO(p, len) do {					\
	const char *_p = (p);						\
	long _at = nonzero(_p, len);					\
									\
	ASSERT_EQ(-1L, _at) TH_LOG("%p not zero at +%#lx", _p, _at);	\
} while (0)

static long futex(void *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static ssize_t vm_read(pid_t pid, void *to, const void *from, size_t len)
{
	struct iovec l = { to, len }, r = { (void *)from, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0);
}

static ssize_t vm_write(pid_t pid, void *to, const void *from, size_t len)
{
	struct iovec l = { (void *)from, len }, r = { to, len };

	return process_vm_writev(pid, &l, 1, &r, 1, 0);
}

/* A page-aligned private buffer of @len bytes (never freed: tests). */
static char *buffer(size_t len)
{
	char *p = mmap(NULL, len, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * An unlinked file on the disk file system holding @size bytes of pattern
 * @seed, open O_RDWR | O_DIRECT; -1 on error.
 */
static int disk_file(size_t size, int seed)
{
	static int seq;
	char path[PATH_MAX];
	int fd, dfd = -1;
	char *buf = buffer(size);

	snprintf(path, sizeof(path), DISK_DIR "/hg-%d-%d", getpid(), seq++);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || !buf)
		return -1;
	unlink(path);
	fill(buf, size, seed);
	if (pwrite(fd, buf, size, 0) == (ssize_t)size && !fsync(fd)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		dfd = open(path, O_RDWR | O_DIRECT);
	}
	munmap(buf, size);
	close(fd);
	return dfd;
}

/*
 * -1 if @len bytes at @off of O_DIRECT file @dfd are pattern @seed from
 * @from on, else the index of the first difference (or -2 on an error).
 * Reads whole pages, as O_DIRECT must.
 */
static long direct_mismatch(int dfd, off_t off, size_t len, int seed,
			  size_t from)
{
	off_t start = off & ~(off_t)(PG - 1);
	size_t size = (off + len - start + PG - 1) & ~(PG - 1);
	char *buf = buffer(size);
	long ret = -2;

	if (buf && pread(dfd, buf, size, start) == (ssize_t)size)
		ret = mismatch_from(buf + (off - start), len, seed, from);
	if (buf)
		munmap(buf, size);
	return ret;
}

/* ---- regions ----------------------------------------------------------- */

/*
 * Every name a test creates in /sys/fs/mshare starts with "hg-PID-", PID
 * being the test process's, so that the teardown removes what a failed
 * test left behind.
 */
struct region {
	char path[64];
	int fd;		/* O_RDWR */
	pid_t pid;	/* of the test process */
};

static void region_cleanup(pid_t pid)
{
	if (pid)
		unlink_tagged(MSHARE_DIR, "hg", pid);
}

/*
 * The fixture: a region and two writable attachments of it at different
 * addresses, @p1 and @p2, so that what one GUP user does through one is
 * checked through the other.
 */
FIXTURE(gup) {
	struct region r;
	char *p1, *p2;
};

FIXTURE_SETUP(gup)
{
	static int seq;
	struct region *r = &self->r;

	r->fd = -1;
	r->pid = getpid();
	ASSERT_NE(0UL, A) TH_LOG("msharefs is not mounted on " MSHARE_DIR);
	snprintf(r->path, sizeof(r->path), MSHARE_DIR "/hg-%d-%d",
		 getpid(), seq++);
	r->fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ASSERT_LE(0, r->fd) TH_LOG("%s: %s", r->path, strerror(errno));
	ASSERT_OK(ftruncate(r->fd, A));
	ASSERT_MAPS(self->p1, mshare_attach(r->fd, NULL, RW, 0));
	ASSERT_MAPS(self->p2, mshare_attach(r->fd, NULL, RW, 0));
	ASSERT_NE(self->p1, self->p2);
}

FIXTURE_TEARDOWN_PARENT(gup)
{
	region_cleanup(self->r.pid);
}

/*
 * A peer: a child that attaches the region at an address of its own (it
 * inherits @p1 and @p2, so the kernel picks a third), tells the parent
 * where, stops for the parent's ptrace if @traced, and then checks one
 * range of its attachment against a pattern the parent names.
 */
struct peer {
	pid_t pid;
	int ctl;	/* the parent's end of the request pipe */
	char *addr;	/* the peer's attachment */
	bool traced;
};

struct peer_req {
	unsigned long off, len;
	int seed;
};

static void peer_run(int fd, int prot, bool traced, int up, int down)
{
	struct peer_req rq;
	char *a;

	if (traced && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(20);
	a = mshare_attach(fd, NULL, prot, 0);
	if (a == MAP_FAILED)
		_exit(21);
	if (write(up, &a, sizeof(a)) != sizeof(a))
		_exit(22);
	if (traced)
		raise(SIGSTOP);
	if (read(down, &rq, sizeof(rq)) != sizeof(rq))
		_exit(23);
	_exit(FAILED(mismatch(a + rq.off, rq.len, rq.seed) == -1));
}

static int peer_start(struct peer *pr, int fd, int prot, bool traced)
{
	int up[2], down[2], st;
	ssize_t n;

	pr->traced = traced;
	if (pipe(up) || pipe(down))
		return -1;
	fflush(NULL);
	pr->pid = fork();
	if (pr->pid < 0)
		return -1;
	if (pr->pid == 0) {
		close(up[0]);
		close(down[1]);
		peer_run(fd, prot, traced, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	pr->ctl = down[1];
	n = read(up[0], &pr->addr, sizeof(pr->addr));
	close(up[0]);
	if (n != sizeof(pr->addr))
		return -1;
	if (traced && (waitpid(pr->pid, &st, 0) != pr->pid ||
		       !WIFSTOPPED(st)))
		return -1;
	return 0;
}

/* Let the peer check @len bytes at @off for pattern @seed; its status. */
static int peer_finish(struct peer *pr, unsigned long off, unsigned long len,
		       int seed)
{
	struct peer_req rq = { off, len, seed };

	if (pr->traced)
		ptrace(PTRACE_DETACH, pr->pid, NULL, NULL);
	if (write(pr->ctl, &rq, sizeof(rq)) != sizeof(rq))
		rq.len = 0;
	close(pr->ctl);
	return wait_exit(pr->pid);
}

/* ---- 1. process_vm_readv/writev ---------------------------------------- */

struct pvm {
	char *a, *b, *c;	/* three attachments of the parent */
};

#define PVM_SIZE	(4 * MIB)

/*
 * Read the parent's first object in three pieces, one through each of its
 * attachments; write a new pattern into its untouched second object and
 * into the middle of the first, unaligned.
 */
static int pvm_child(void *arg)
{
	struct pvm *v = arg;
	pid_t pp = getppid();
	char *buf = buffer(PVM_SIZE);
	struct iovec l = { buf, PVM_SIZE }, r[3] = {
		{ v->a, MIB + 123 },
		{ v->b + MIB + 123, 2 * MIB - 123 },
		{ v->c + 3 * MIB, MIB },
	};

	if (FAILED(buf != NULL))
		return 1;
	if (FAILED(process_vm_readv(pp, &l, 1, r, 3, 0) == PVM_SIZE))
		return 1;
	if (FAILED(mismatch(buf, PVM_SIZE, 1) == -1))
		return 1;
	fill(buf, PVM_SIZE, 2);
	if (FAILED(vm_write(pp, v->a + GIB, buf, PVM_SIZE) == PVM_SIZE))
		return 1;
	fill(buf, 10000, 3);
	if (FAILED(vm_write(pp, v->c + 8191, buf, 10000) == 10000))
		return 1;
	return 0;
}

TEST_F(gup, process_vm_rw)
{
	int fd = self->r.fd;
	struct pvm v = { .a = self->p1, .b = self->p2 };
	char *buf = buffer(PVM_SIZE);

	ASSERT_NE(NULL, buf);
	ASSERT_OK(create_anon(fd, 0, PVM_SIZE, RW));
	ASSERT_OK(create_anon(fd, GIB, PVM_SIZE, RW));
	/* A third attachment the parent itself never touches. */
	ASSERT_MAPS(v.c, mshare_attach(fd, NULL, RW, 0));
	fill(self->p1, PVM_SIZE, 1);

	ASSERT_EQ(0, run_child(pvm_child, &v));
	ASSERT_PATTERN(self->p2 + GIB, PVM_SIZE, 2);
	ASSERT_PATTERN(self->p2, 8191, 1);
	ASSERT_PATTERN(self->p2 + 8191, 10000, 3);
	ASSERT_PATTERN_FROM(self->p2 + 18191, PVM_SIZE - 18191, 1, 18191);

	/* On itself, from one attachment to another. */
	ASSERT_MOVES(PVM_SIZE, vm_read(getpid(), buf, v.c + GIB, PVM_SIZE));
	ASSERT_PATTERN(buf, PVM_SIZE, 2);
	fill(buf, 3 * PG, 4);
	ASSERT_MOVES(3 * PG, vm_write(getpid(), self->p2 + GIB + 5 * PG, buf,
				      3 * PG));
	ASSERT_PATTERN(self->p1 + GIB + 5 * PG, 3 * PG, 4);
	ASSERT_OK(munmap(v.c, A));
}

/* ---- 2. /proc/PID/mem -------------------------------------------------- */

TEST_F(gup, proc_self_mem)
{
	int fd = self->r.fd, mfd;
	char *buf = buffer(MIB);

	ASSERT_NE(NULL, buf);
	ASSERT_OK(create_anon(fd, 0, 2 * MIB, RW));
	fill(self->p1, MIB, 5);
	mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);

	ASSERT_MOVES(MIB, pread(mfd, buf, MIB, (off_t)self->p2));
	ASSERT_PATTERN(buf, MIB, 5);
	ASSERT_MOVES(7777, pread(mfd, buf, 7777, (off_t)self->p1 + 4095));
	ASSERT_PATTERN_FROM(buf, 7777, 5, 4095);

	/* Into populated and untouched pages, unaligned. */
	fill(buf, 3 * PG + 10, 6);
	ASSERT_MOVES(3 * PG + 10, pwrite(mfd, buf, 3 * PG + 10,
					 (off_t)self->p2 + MIB - PG - 5));
	ASSERT_PATTERN(self->p1 + MIB - PG - 5, 3 * PG + 10, 6);
	ASSERT_PATTERN(self->p1, MIB - PG - 5, 5);
	ASSERT_ZERO(self->p1 + MIB + 2 * PG + 5, MIB - 2 * PG - 5);
	close(mfd);
}

TEST_F(gup, proc_child_mem)
{
	int fd = self->r.fd, mfd;
	char path[64], *buf = buffer(256 * KIB);
	struct peer pr;

	ASSERT_NE(NULL, buf);
	ASSERT_OK(create_anon(fd, 0, MIB, RW));
	fill(self->p1, 256 * KIB, 7);
	ASSERT_OK(peer_start(&pr, fd, RW, false));
	ASSERT_TRUE(pr.addr != self->p1 && pr.addr != self->p2);
	snprintf(path, sizeof(path), "/proc/%d/mem", pr.pid);
	mfd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);

	ASSERT_MOVES(256 * KIB, pread(mfd, buf, 256 * KIB, (off_t)pr.addr));
	ASSERT_PATTERN(buf, 256 * KIB, 7);
	fill(buf, 256 * KIB, 8);
	ASSERT_MOVES(256 * KIB, pwrite(mfd, buf, 256 * KIB,
				       (off_t)pr.addr + 512 * KIB));
	close(mfd);
	ASSERT_PATTERN(self->p2 + 512 * KIB, 256 * KIB, 8);
	/* And the child sees it at its own address. */
	ASSERT_EQ(0, peer_finish(&pr, 512 * KIB, 256 * KIB, 8));
}

/* ---- 3. ptrace --------------------------------------------------------- */

/* PTRACE_POKEDATA @len bytes of pattern @seed at @addr in @pid: 0 or -1. */
static int poke_pattern(pid_t pid, char *addr, size_t len, int seed)
{
	size_t i;
	long w;

	for (i = 0; i < len; i += sizeof(w)) {
		fill_from((char *)&w, sizeof(w), seed, i);
		if (ptrace(PTRACE_POKEDATA, pid, addr + i, (void *)w))
			return -1;
	}
	return 0;
}

/* PTRACE_PEEKDATA @len bytes at @addr in @pid into @buf: 0 or -1. */
static int peek(pid_t pid, const char *addr, char *buf, size_t len)
{
	size_t i;
	long w;

	for (i = 0; i < len; i += sizeof(w)) {
		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, pid, addr + i, NULL);
		if (errno)
			return -1;
		memcpy(buf + i, &w, sizeof(w));
	}
	return 0;
}

TEST_F(gup, ptrace_peek_poke)
{
	int fd = self->r.fd;
	char buf[8 * KIB];
	struct peer pr;

	ASSERT_OK(create_anon(fd, 0, 64 * KIB, RW));
	fill(self->p1, 32 * KIB, 30);
	ASSERT_OK(peer_start(&pr, fd, RW, true));
	ASSERT_TRUE(pr.addr != self->p1 && pr.addr != self->p2);

	/* Across a page boundary of populated memory. */
	ASSERT_OK(peek(pr.pid, pr.addr + PG - 2 * KIB, buf, sizeof(buf)));
	ASSERT_PATTERN_FROM(buf, sizeof(buf), 30, PG - 2 * KIB);
	/* Into pages nobody touched yet. */
	ASSERT_OK(poke_pattern(pr.pid, pr.addr + 40 * KIB, 8 * KIB, 31));
	ASSERT_PATTERN(self->p2 + 40 * KIB, 8 * KIB, 31);
	ASSERT_OK(peek(pr.pid, pr.addr + 40 * KIB, buf, sizeof(buf)));
	ASSERT_PATTERN(buf, sizeof(buf), 31);
	ASSERT_PATTERN(self->p2, 32 * KIB, 30);
	ASSERT_EQ(0, peer_finish(&pr, 40 * KIB, 8 * KIB, 31));
}

/* ---- 4. O_DIRECT ------------------------------------------------------- */

#define FILE_SIZE	(4 * MIB)

TEST_F(gup, odirect_anon)
{
	static const size_t sizes[] = {
		4 * KIB, 8 * KIB, 64 * KIB, 256 * KIB, MIB
	};
	int fd = self->r.fd, dfd;
	char *p1 = self->p1, *p2 = self->p2;
	struct iovec iov[2];
	size_t i, off;

	dfd = disk_file(FILE_SIZE, 40);
	ASSERT_LE(0, dfd) TH_LOG("%s: %s", DISK_DIR, strerror(errno));
	ASSERT_OK(create_anon(fd, 0, 8 * MIB, RW));

	/* File to untouched memory, a page left untouched after each. */
	for (i = 0, off = 0; i < ARRAY_SIZE(sizes); off += sizes[i++] + PG)
		ASSERT_MOVES(sizes[i], pread(dfd, p1 + off, sizes[i], off));
	for (i = 0, off = 0; i < ARRAY_SIZE(sizes); off += sizes[i++] + PG) {
		ASSERT_PATTERN_FROM(p2 + off, sizes[i], 40, off);
		ASSERT_ZERO(p2 + off + sizes[i], PG);
	}
	/* Again over populated memory, half through each attachment. */
	memset(p2 + 2 * MIB, 0xaa, 2 * MIB);
	iov[0] = (struct iovec){ p1 + 2 * MIB, MIB };
	iov[1] = (struct iovec){ p2 + 3 * MIB, MIB };
	ASSERT_MOVES(2 * MIB, preadv(dfd, iov, 2, 2 * MIB));
	ASSERT_PATTERN_FROM(p1 + 2 * MIB, 2 * MIB, 40, 2 * MIB);

	/* Memory to file. */
	fill(p2 + 4 * MIB, 4 * MIB, 41);
	for (i = 0, off = 0; i < ARRAY_SIZE(sizes); off += sizes[i++])
		ASSERT_MOVES(sizes[i], pwrite(dfd, p1 + 4 * MIB + off,
					      sizes[i], off));
	ASSERT_EQ(-1L, direct_mismatch(dfd, 0, off, 41, 0));
	iov[0] = (struct iovec){ p2 + 6 * MIB, MIB };
	iov[1] = (struct iovec){ p1 + 7 * MIB, MIB };
	ASSERT_MOVES(2 * MIB, pwritev(dfd, iov, 2, 2 * MIB));
	ASSERT_EQ(-1L, direct_mismatch(dfd, 2 * MIB, 2 * MIB, 41, 2 * MIB));
	close(dfd);
}

TEST_F(gup, odirect_hugetlb)
{
	int fd = self->r.fd, dfd;
	char *h1 = self->p1 + 64 * MIB, *h2 = self->p2 + 64 * MIB;
	long free_huge = meminfo_kb("HugePages_Free");

	/* The guest reserves huge pages at boot: not having them is a bug. */
	ASSERT_LE(1L, free_huge) TH_LOG("HugePages_Free %ld", free_huge);
	dfd = disk_file(FILE_SIZE, 42);
	ASSERT_LE(0, dfd) TH_LOG("%s: %s", DISK_DIR, strerror(errno));
	ASSERT_OK(create_mapping(fd, 64 * MIB, HPAGE, 0, RW, ANON_HUGE, -1));

	/* Into the middle of an untouched huge page. */
	ASSERT_MOVES(MIB, pread(dfd, h1 + 512 * KIB, MIB, MIB));
	ASSERT_ZERO(h2, 512 * KIB);
	ASSERT_PATTERN_FROM(h2 + 512 * KIB, MIB, 42, MIB);
	ASSERT_ZERO(h2 + 1536 * KIB, 512 * KIB);
	ASSERT_MOVES(4 * KIB, pread(dfd, h2 + HPAGE - 4 * KIB, 4 * KIB, 0));
	ASSERT_PATTERN(h1 + HPAGE - 4 * KIB, 4 * KIB, 42);

	fill(h2, HPAGE, 43);
	ASSERT_MOVES(HPAGE, pwrite(dfd, h1, HPAGE, 2 * MIB));
	ASSERT_EQ(-1L, direct_mismatch(dfd, 2 * MIB, HPAGE, 43, 0));
	close(dfd);
}

/* ---- 5. futexes -------------------------------------------------------- */

/* Exit codes of a futex waiter. */
enum { WOKEN = 0, TIMED_OUT = 2, NOT_EQUAL = 3, WAIT_FAULT = 4, OTHER = 5 };

/*
 * A child waiting (shared, not FUTEX_PRIVATE_FLAG) on the word at @off of
 * an attachment for up to @secs: its own new attachment of @fd if @own,
 * else inherited @p.
 */
static pid_t futex_waiter(int fd, bool own, char *p, unsigned long off,
			  int secs)
{
	struct timespec ts = { secs, 0 };
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	if (own) {
		p = mshare_attach(fd, NULL, RW, 0);
		if (p == MAP_FAILED)
			_exit(OTHER + 1);
	}
	if (!futex(p + off, FUTEX_WAIT, 0, &ts))
		_exit(WOKEN);
	_exit(errno == ETIMEDOUT ? TIMED_OUT : errno == EAGAIN ? NOT_EQUAL :
	      errno == EFAULT ? WAIT_FAULT : OTHER);
}

/*
 * FUTEX_WAKE one waiter on @w every 10 ms until one is woken, for up to
 * @secs: what the first call that did not return 0 returned (1 when it
 * woke the waiter), or 0 if none was woken in time.
 */
static long wake_one(void *w, int secs)
{
	long i, r;

	for (i = 0; i < secs * 100L; i++) {
		r = futex(w, FUTEX_WAKE, 1, NULL);
		if (r)
			return r < 0 ? -errno : r;
		usleep(10000);
	}
	return 0;
}

TEST_F(gup, futex_other_address)
{
	int fd = self->r.fd;
	pid_t pid;

	ASSERT_OK(create_anon(fd, 0, 64 * KIB, RW));
	*(uint32_t *)(self->p1 + PG + 8) = 0;

	/* Wait through p1 (inherited), wake through p2. */
	pid = futex_waiter(fd, false, self->p1, PG + 8, 20);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1L, wake_one(self->p2 + PG + 8, 15));
	ASSERT_EQ(WOKEN, wait_exit(pid));

	/* Wait through the child's own attachment, wake through p1. */
	pid = futex_waiter(fd, true, NULL, 3 * PG + 60, 20);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1L, wake_one(self->p1 + 3 * PG + 60, 15));
	ASSERT_EQ(WOKEN, wait_exit(pid));

	/* A waiter on another word is not woken. */
	pid = futex_waiter(fd, false, self->p2, 2 * PG, 1);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0L, wake_one(self->p1 + PG + 8, 2));
	ASSERT_EQ(TIMED_OUT, wait_exit(pid));
	ASSERT_EQ(0L, futex(self->p2 + 2 * PG, FUTEX_WAKE, 1, NULL));
}

/* ---- 6. many processes at many addresses: mutex, semaphore, O_DIRECT --- */

/*
 * Each worker does PG_ITER cycles, or stops after PG_BUDGET seconds once it
 * has done PG_MIN_ITER: the guest's speed depends on how loaded its host
 * is. The counters must match what the workers say they did, exactly.
 */
#define PG_WORKERS	32
#define PG_ITER		3000
#define PG_MIN_ITER	500
#define PG_BUDGET	40
#define PG_DATA		(64 * MIB)	/* where the reader's object is */
#define PG_CHUNK	(256 * KIB)

struct pg_shared {
	pthread_mutex_t mutex;
	sem_t sem;
	unsigned long by_mutex;		/* under mutex */
	unsigned long by_sem;		/* under sem */
	unsigned long contended;	/* trylock failures, under mutex */
	unsigned long sem_contended;	/* trywait failures, under sem */
	unsigned long rounds;		/* the reader's */
	unsigned long done[PG_WORKERS];	/* cycles each worker did */
	double deadline;		/* CLOCK_MONOTONIC */
	int workers_left;
};

struct pg_ctx {
	int fd, dfd, start;		/* region, data file, start pipe */
	unsigned long base;		/* attachment k at base + k * A */
	char *inherited[2];
	uint64_t sum;			/* of the data file */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t checksum(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * Drop the inherited attachments, attach at base + @k * A, wait for the
 * start. NULL on failure.
 */
static char *pg_attach(struct pg_ctx *c, int k)
{
	unsigned long want = c->base + k * A;
	char *p, go;

	alarm(550);	/* a lost wake-up must not hang the guest */
	if (FAILED(!munmap(c->inherited[0], A) && !munmap(c->inherited[1], A)))
		return NULL;
	p = mshare_attach(c->fd, (void *)want, RW, MAP_FIXED);
	if (FAILED(p == (char *)want))
		return NULL;
	if (FAILED(read(c->start, &go, 1) == 0))
		return NULL;
	return p;
}

static int pg_worker(struct pg_ctx *c, int k)
{
	struct pg_shared *s;
	char *p = pg_attach(c, k);
	unsigned long v;
	int i, j;

	if (!p)
		return 1;
	s = (struct pg_shared *)p;
	for (i = 0; i < PG_ITER; i++) {
		if (i >= PG_MIN_ITER && !(i % 64) && now() > s->deadline)
			break;
		if (pthread_mutex_trylock(&s->mutex)) {
			if (FAILED(!pthread_mutex_lock(&s->mutex)))
				return 1;
			s->contended++;
		}
		/* A read-modify-write that loses counts without the lock. */
		v = s->by_mutex;
		for (j = 0; j < 20; j++)
			__asm__ volatile("" ::: "memory");
		if (!(i % 32))
			sched_yield();
		s->by_mutex = v + 1;
		if (FAILED(!pthread_mutex_unlock(&s->mutex)))
			return 1;

		if (sem_trywait(&s->sem)) {
			if (FAILED(errno == EAGAIN))
				return 1;
			while (sem_wait(&s->sem))
				if (FAILED(errno == EINTR))
					return 1;
			s->sem_contended++;
		}
		v = s->by_sem;
		/* Now and then, let others block on the semaphore. */
		if (!(i % 8))
			sched_yield();
		s->by_sem = v + 1;
		if (FAILED(!sem_post(&s->sem)))
			return 1;
	}
	s->done[k] = i;
	__atomic_fetch_sub(&s->workers_left, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* Read the data file into the region with O_DIRECT until workers finish. */
static int pg_reader(struct pg_ctx *c, int k)
{
	struct pg_shared *s;
	char *p = pg_attach(c, k), *data;
	size_t off;

	if (!p)
		return 1;
	s = (struct pg_shared *)p;
	data = p + PG_DATA;
	do {
		memset(data, 0, FILE_SIZE);
		for (off = 0; off < FILE_SIZE; off += PG_CHUNK)
			if (FAILED(pread(c->dfd, data + off, PG_CHUNK, off) ==
				   PG_CHUNK))
				return 1;
		if (FAILED(checksum(data, FILE_SIZE) == c->sum))
			return 1;
		s->rounds++;
	} while (__atomic_load_n(&s->workers_left, __ATOMIC_SEQ_CST));
	return 0;
}

TEST_F_TIMEOUT(gup, postgres_like, 600)
{
	struct pg_ctx c = { .fd = self->r.fd };
	pid_t pids[PG_WORKERS + 1];
	pthread_mutexattr_t ma;
	struct pg_shared *s;
	int i, k, bad = 0, start[2], sval = -1;
	unsigned long cycles = 0;
	char *resv, *buf;
	double t0;

	c.inherited[0] = self->p1;
	c.inherited[1] = self->p2;
	ASSERT_OK(create_anon(c.fd, 0, MIB, RW));
	ASSERT_OK(create_anon(c.fd, PG_DATA, FILE_SIZE, RW));
	c.dfd = disk_file(FILE_SIZE, 60);
	ASSERT_LE(0, c.dfd) TH_LOG("%s: %s", DISK_DIR, strerror(errno));
	ASSERT_NE(NULL, buf = buffer(FILE_SIZE));
	fill(buf, FILE_SIZE, 60);
	c.sum = checksum(buf, FILE_SIZE);

	s = (struct pg_shared *)self->p1;
	ASSERT_OK(pthread_mutexattr_init(&ma));
	ASSERT_OK(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED));
	ASSERT_OK(pthread_mutex_init(&s->mutex, &ma));
	ASSERT_OK(sem_init(&s->sem, 1, 1));
	s->workers_left = PG_WORKERS;

	/* Room for one attachment per process, none at p1 or p2. */
	resv = mmap(NULL, (PG_WORKERS + 2) * A, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, resv);
	c.base = ((unsigned long)resv + A - 1) & ~(A - 1);
	ASSERT_OK(munmap(resv, (PG_WORKERS + 2) * A));

	ASSERT_OK(pipe(start));
	c.start = start[0];
	fflush(NULL);
	for (k = 0; k <= PG_WORKERS; k++) {
		pids[k] = fork();
		if (pids[k] == 0) {
			close(start[1]);
			_exit(k < PG_WORKERS ? pg_worker(&c, k) :
			      pg_reader(&c, k));
		}
		ASSERT_LT(0, pids[k]);
	}
	close(start[0]);
	t0 = now();
	s->deadline = t0 + PG_BUDGET;
	close(start[1]);
	for (k = 0; k <= PG_WORKERS; k++) {
		i = wait_exit(pids[k]);
		if (i)
			TH_LOG("process %d (%s) exited %d", k,
			       k < PG_WORKERS ? "worker" : "reader", i);
		bad += !!i;
	}
	for (k = 0; k < PG_WORKERS; k++)
		cycles += s->done[k];
	TH_LOG("%d processes, %lu mutex and semaphore cycles: %.1f s; "
	       "contended: %lu mutex, %lu sem; %lu O_DIRECT rounds",
	       PG_WORKERS, cycles, now() - t0, s->contended,
	       s->sem_contended, s->rounds);
	ASSERT_EQ(0, bad);
	for (k = 0; k < PG_WORKERS; k++)
		ASSERT_LE((unsigned long)PG_MIN_ITER, s->done[k]);
	ASSERT_EQ(cycles, s->by_mutex);
	ASSERT_EQ(cycles, s->by_sem);
	ASSERT_OK(sem_getvalue(&s->sem, &sval));
	ASSERT_EQ(1, sval);
	ASSERT_EQ(0, s->workers_left);
	ASSERT_LE(1UL, s->rounds);
	/* The locks were fought over: waiters slept in the kernel. */
	ASSERT_LT(0UL, s->contended);
	ASSERT_LT(0UL, s->sem_contended);
	ASSERT_EQ(c.sum, checksum(self->p2 + PG_DATA, FILE_SIZE));
	ASSERT_OK(pthread_mutex_lock(&s->mutex));
	ASSERT_OK(pthread_mutex_unlock(&s->mutex));
	close(c.dfd);
}

/* ---- 7. vmsplice ------------------------------------------------------- */

TEST_F(gup, vmsplice)
{
	int fd = self->r.fd, pfd[2];
	char *buf = buffer(64 * KIB);
	struct iovec iov;

	ASSERT_NE(NULL, buf);
	ASSERT_OK(create_anon(fd, 0, MIB, RW));
	fill(self->p1, 512 * KIB, 70);
	ASSERT_OK(pipe(pfd));

	iov = (struct iovec){ self->p2 + 8 * KIB, 64 * KIB };
	ASSERT_MOVES(64 * KIB, vmsplice(pfd[1], &iov, 1, 0));
	ASSERT_MOVES(64 * KIB, read(pfd[0], buf, 64 * KIB));
	ASSERT_PATTERN_FROM(buf, 64 * KIB, 70, 8 * KIB);

	iov = (struct iovec){ self->p1 + 100, 10000 };
	ASSERT_MOVES(10000, vmsplice(pfd[1], &iov, 1, 0));
	ASSERT_MOVES(10000, read(pfd[0], buf, 64 * KIB));
	ASSERT_PATTERN_FROM(buf, 10000, 70, 100);

	/* Untouched memory reads as zeros. */
	iov = (struct iovec){ self->p2 + 768 * KIB, 16 * KIB };
	ASSERT_MOVES(16 * KIB, vmsplice(pfd[1], &iov, 1, 0));
	ASSERT_MOVES(16 * KIB, read(pfd[0], buf, 64 * KIB));
	ASSERT_ZERO(buf, 16 * KIB);

	/*
	 * Without SPLICE_F_GIFT the pipe holds the pages themselves, not a
	 * copy: a later store through the other attachment is what the pipe
	 * reads, which proves they are the region's pages.
	 */
	iov = (struct iovec){ self->p1 + 256 * KIB, 16 * KIB };
	ASSERT_MOVES(16 * KIB, vmsplice(pfd[1], &iov, 1, 0));
	fill(self->p2 + 256 * KIB, 16 * KIB, 71);
	ASSERT_MOVES(16 * KIB, read(pfd[0], buf, 64 * KIB));
	ASSERT_PATTERN(buf, 16 * KIB, 71);
	close(pfd[0]);
	close(pfd[1]);
}

/* ---- 8. a read-only attachment ---------------------------------------- */

TEST_F(gup, readonly_attachment)
{
	int fd = self->r.fd, rfd, mfd, dfd, pfd[2];
	char *r, *buf = buffer(64 * KIB);
	struct iovec iov;
	struct peer pr;
	long w;

	ASSERT_NE(NULL, buf);
	ASSERT_OK(create_anon(fd, 0, MIB, RW));
	fill(self->p1, 256 * KIB, 80);
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	dfd = disk_file(FILE_SIZE, 81);
	ASSERT_LE(0, dfd) TH_LOG("%s: %s", DISK_DIR, strerror(errno));
	mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);
	fill(buf, 64 * KIB, 82);

	/* Writes: populated and untouched pages alike. */
	ASSERT_FAILS(EFAULT, vm_write(getpid(), r, buf, 4 * KIB));
	ASSERT_FAILS(EFAULT, vm_write(getpid(), r + 512 * KIB, buf, 4 * KIB));
	ASSERT_FAILS(EMEM, pwrite(mfd, buf, 64, (off_t)r + 8));
	ASSERT_FAILS(EMEM, pwrite(mfd, buf, 64, (off_t)r + 512 * KIB));
	ASSERT_FAILS(EFAULT, pread(dfd, r, 64 * KIB, 0));
	ASSERT_FAILS(EFAULT, pread(dfd, r + 512 * KIB, 4 * KIB, 0));

	/* ptrace: a stopped child's own read-only attachment. */
	ASSERT_OK(peer_start(&pr, rfd, PROT_READ, true));
	ASSERT_FAILS(EIO, ptrace(PTRACE_POKEDATA, pr.pid, pr.addr + 16,
				 (void *)0x1234L));
	ASSERT_FAILS(EIO, ptrace(PTRACE_POKEDATA, pr.pid,
				 pr.addr + 600 * KIB, (void *)0x1234L));
	errno = 0;
	w = ptrace(PTRACE_PEEKDATA, pr.pid, pr.addr + 16, NULL);
	ASSERT_EQ(0, errno);
	ASSERT_EQ(-1L, mismatch_from((char *)&w, sizeof(w), 80, 16));
	ASSERT_EQ(0, peer_finish(&pr, 0, 256 * KIB, 80));

	/* Nothing changed, through the writable attachment. */
	ASSERT_PATTERN(self->p1, 256 * KIB, 80);
	ASSERT_ZERO(self->p2 + 256 * KIB, 768 * KIB);

	/* Reads work. */
	ASSERT_MOVES(64 * KIB, vm_read(getpid(), buf, r + 4 * KIB, 64 * KIB));
	ASSERT_PATTERN_FROM(buf, 64 * KIB, 80, 4 * KIB);
	ASSERT_MOVES(5000, pread(mfd, buf, 5000, (off_t)r + 3 * PG));
	ASSERT_PATTERN_FROM(buf, 5000, 80, 3 * PG);
	ASSERT_MOVES(128 * KIB, pwrite(dfd, r + 64 * KIB, 128 * KIB, MIB));
	ASSERT_EQ(-1L, direct_mismatch(dfd, MIB, 128 * KIB, 80, 64 * KIB));
	ASSERT_OK(pipe(pfd));
	iov = (struct iovec){ r + 128 * KIB, 32 * KIB };
	ASSERT_MOVES(32 * KIB, vmsplice(pfd[1], &iov, 1, 0));
	ASSERT_MOVES(32 * KIB, read(pfd[0], buf, 64 * KIB));
	ASSERT_PATTERN_FROM(buf, 32 * KIB, 80, 128 * KIB);

	close(pfd[0]);
	close(pfd[1]);
	close(mfd);
	close(dfd);
	ASSERT_OK(munmap(r, A));
	close(rfd);
}

/* ---- 9. a read-only object in a writable attachment ------------------- */

TEST_F(gup, readonly_object)
{
	int fd = self->r.fd, memfd, mfd, dfd;
	char *m, *buf = buffer(64 * KIB);

	ASSERT_NE(NULL, buf);
	memfd = memfd_sized("mshare_gup_test", 0, 64 * KIB);
	ASSERT_LE(0, memfd);
	ASSERT_MAPS(m, mmap(NULL, 64 * KIB, RW, MAP_SHARED, memfd, 0));
	fill(m, 64 * KIB, 90);
	ASSERT_OK(create_mapping(fd, 0, 64 * KIB, 0, PROT_READ, FILEMAP, memfd));
	ASSERT_OK(create_anon(fd, MIB, 64 * KIB, PROT_READ));
	dfd = disk_file(FILE_SIZE, 91);
	ASSERT_LE(0, dfd);
	mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);
	fill(buf, 64 * KIB, 92);

	ASSERT_FAILS(EFAULT, vm_write(getpid(), self->p1 + 8, buf, 100));
	ASSERT_FAILS(EFAULT, vm_write(getpid(), self->p2 + MIB, buf, PG));
	ASSERT_FAILS(EMEM, pwrite(mfd, buf, 100, (off_t)self->p1 + 8));
	ASSERT_FAILS(EMEM, pwrite(mfd, buf, PG, (off_t)self->p2 + MIB));
	ASSERT_FAILS(EFAULT, pread(dfd, self->p1, 64 * KIB, 0));
	ASSERT_FAILS(EFAULT, pread(dfd, self->p2 + MIB, 4 * KIB, 0));

	ASSERT_PATTERN(m, 64 * KIB, 90);
	ASSERT_PATTERN(self->p2, 64 * KIB, 90);
	ASSERT_ZERO(self->p1 + MIB, 64 * KIB);
	/* Reads work. */
	ASSERT_MOVES(64 * KIB, vm_read(getpid(), buf, self->p1, 64 * KIB));
	ASSERT_PATTERN(buf, 64 * KIB, 90);
	ASSERT_MOVES(64 * KIB, pread(mfd, buf, 64 * KIB, (off_t)self->p2));
	ASSERT_PATTERN(buf, 64 * KIB, 90);
	close(mfd);
	close(dfd);
	ASSERT_OK(munmap(m, 64 * KIB));
	close(memfd);
}

/* ---- 10. holes --------------------------------------------------------- */

TEST_F(gup, hole_and_short)
{
	int fd = self->r.fd, mfd;
	char *buf = buffer(64 * KIB), *end;
	struct iovec l, r[2];

	ASSERT_NE(NULL, buf);
	ASSERT_OK(create_anon(fd, MIB, 64 * KIB, RW));
	ASSERT_OK(create_anon(fd, MIB + 128 * KIB, 64 * KIB, RW));
	fill(self->p1 + MIB, 64 * KIB, 100);
	end = self->p2 + MIB + 64 * KIB;
	mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);

	/* Wholly in a hole. */
	ASSERT_FAILS(EFAULT, vm_read(getpid(), buf, self->p1, PG));
	ASSERT_FAILS(EFAULT, vm_write(getpid(), self->p1 + A - PG, buf, PG));
	ASSERT_FAILS(EFAULT, vm_read(getpid(), buf, end, 100));
	ASSERT_FAILS(EIO, pread(mfd, buf, 100, (off_t)end));

	/* From an object into the hole after it: short. */
	ASSERT_MOVES(5000, vm_read(getpid(), buf, end - 5000, 20000));
	ASSERT_PATTERN_FROM(buf, 5000, 100, 64 * KIB - 5000);
	ASSERT_MOVES(5000, pread(mfd, buf, 20000, (off_t)end - 5000));
	ASSERT_PATTERN_FROM(buf, 5000, 100, 64 * KIB - 5000);
	fill(buf, 20000, 101);
	ASSERT_MOVES(3000, vm_write(getpid(), end - 3000, buf, 20000));
	ASSERT_PATTERN(self->p1 + MIB + 64 * KIB - 3000, 3000, 101);
	ASSERT_PATTERN(self->p1 + MIB, 64 * KIB - 3000, 100);

	/*
	 * Two remote pieces: the first runs into the hole, so the transfer
	 * stops there, although the second is readable (the next object).
	 */
	self->p1[MIB + 128 * KIB] = 'x';
	l = (struct iovec){ buf, 3 * PG };
	r[0] = (struct iovec){ end - PG, 2 * PG };
	r[1] = (struct iovec){ end + 64 * KIB, PG };
	ASSERT_MOVES(PG, process_vm_readv(getpid(), &l, 1, r, 2, 0));
	ASSERT_PATTERN_FROM(buf, PG - 3000, 100, 64 * KIB - PG);
	ASSERT_PATTERN(buf + PG - 3000, 3000, 101);
	r[0].iov_len = PG;
	ASSERT_MOVES(2 * PG, process_vm_readv(getpid(), &l, 1, r, 2, 0));
	ASSERT_EQ('x', buf[PG]);
	close(mfd);
}

/* ---- 11. MSHAREFS_UNMAP under a futex waiter --------------------------- */

/* Wait up to 10 s for @pid to sleep in futex(): 0, or -1. */
static int wait_in_futex(pid_t pid)
{
	char sys[64], stat[64], buf[512], *s;
	int i;

	snprintf(sys, sizeof(sys), "/proc/%d/syscall", pid);
	snprintf(stat, sizeof(stat), "/proc/%d/stat", pid);
	for (i = 0; i < 1000; i++, usleep(10000)) {
		if (read_small(AT_FDCWD, sys, buf, sizeof(buf)) <= 0 ||
		    atoi(buf) != SYS_futex ||
		    read_small(AT_FDCWD, stat, buf, sizeof(buf)) <= 0)
			continue;
		/* The state follows the command name in parentheses. */
		s = strrchr(buf, ')');
		if (s && s[1] && s[2] == 'S')
			return 0;
	}
	return -1;
}

TEST_F(gup, futex_unmap_anon)
{
	int fd = self->r.fd;
	pid_t pid;

	ASSERT_OK(create_anon(fd, 0, 64 * KIB, RW));
	*(uint32_t *)(self->p1 + 64) = 0;
	pid = futex_waiter(fd, false, self->p1, 64, 3);
	ASSERT_LT(0, pid);
	ASSERT_OK(wait_in_futex(pid));
	ASSERT_OK(mshare_unmap(fd, 0, 64 * KIB));
	/*
	 * The waiter is keyed by a page that is gone with its object; no
	 * address reaches it any more, so it times out.
	 */
	ASSERT_FAILS(EFAULT, futex(self->p2 + 64, FUTEX_WAKE, 1, NULL));
	ASSERT_EQ(TIMED_OUT, wait_exit(pid));

	/* A new object at the same place is new memory, without waiters. */
	ASSERT_OK(create_anon(fd, 0, 64 * KIB, RW));
	ASSERT_EQ(0L, futex(self->p2 + 64, FUTEX_WAKE, 1, NULL));
	ASSERT_EQ(0U, *(uint32_t *)(self->p1 + 64));
}

TEST_F(gup, futex_unmap_memfd)
{
	int fd = self->r.fd, memfd;
	pid_t pid;
	char *m;

	memfd = memfd_sized("mshare_gup_test", 0, 64 * KIB);
	ASSERT_LE(0, memfd);
	ASSERT_MAPS(m, mmap(NULL, 64 * KIB, RW, MAP_SHARED, memfd, 0));
	ASSERT_OK(create_mapping(fd, 0, 64 * KIB, 0, RW, FILEMAP, memfd));
	pid = futex_waiter(fd, false, self->p1, PG + 64, 20);
	ASSERT_LT(0, pid);
	ASSERT_OK(wait_in_futex(pid));
	ASSERT_OK(mshare_unmap(fd, 0, 64 * KIB));
	ASSERT_FAILS(EFAULT, futex(self->p2 + PG + 64, FUTEX_WAKE, 1, NULL));
	/*
	 * The memfd's page outlives the object: its own mapping reaches the
	 * waiter, keyed by the file and offset.
	 */
	ASSERT_EQ(1L, futex(m + PG + 64, FUTEX_WAKE, 1, NULL));
	ASSERT_EQ(WOKEN, wait_exit(pid));
	ASSERT_OK(munmap(m, 64 * KIB));
	close(memfd);
}

/* ---- 12. an object backed by a disk file ------------------------------ */

/*
 * GUP writes into a file object go through the file's write fault
 * (page_mkwrite) in the region and dirty the page: an O_DIRECT read, which
 * writes dirty pages back first, finds them on the disk.
 */
TEST_F(gup, disk_file_object)
{
	int fd = self->r.fd, ffd, mfd;
	char *o1 = self->p1 + 256 * MIB, *o2 = self->p2 + 256 * MIB;
	char *buf = buffer(64 * KIB);
	struct peer pr;

	ASSERT_NE(NULL, buf);
	ffd = disk_file(MIB, 110);
	ASSERT_LE(0, ffd);
	ASSERT_OK(create_mapping(fd, 256 * MIB, MIB, 0, RW, FILEMAP, ffd));
	mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);

	/* Pages 0-3 read-faulted (clean), the rest untouched. */
	ASSERT_PATTERN(o1, 4 * PG, 110);
	fill(buf, 64 * KIB, 111);
	ASSERT_MOVES(100, vm_write(getpid(), o2 + PG + 8, buf, 100));
	ASSERT_MOVES(100, vm_write(getpid(), o2 + 10 * PG, buf, 100));
	ASSERT_MOVES(200, pwrite(mfd, buf, 200, (off_t)o1 + 2 * PG));
	ASSERT_MOVES(200, pwrite(mfd, buf, 200, (off_t)o1 + 20 * PG));
	ASSERT_OK(peer_start(&pr, fd, RW, true));
	ASSERT_OK(poke_pattern(pr.pid, pr.addr + 256 * MIB + 3 * PG, 64, 111));
	ASSERT_OK(poke_pattern(pr.pid, pr.addr + 256 * MIB + 30 * PG, 64,
			       111));
	ASSERT_EQ(0, peer_finish(&pr, 256 * MIB + 30 * PG, 64, 111));

	ASSERT_PATTERN(o1 + PG + 8, 100, 111);
	ASSERT_PATTERN(o1 + 20 * PG, 200, 111);
	ASSERT_EQ(-1L, direct_mismatch(ffd, 0, PG, 110, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, PG, 8, 110, PG));
	ASSERT_EQ(-1L, direct_mismatch(ffd, PG + 8, 100, 111, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, 10 * PG, 100, 111, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, 2 * PG, 200, 111, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, 20 * PG, 200, 111, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, 3 * PG, 64, 111, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, 30 * PG, 64, 111, 0));
	ASSERT_EQ(-1L, direct_mismatch(ffd, 30 * PG + 64, PG - 64, 110,
				     30 * PG + 64));
	ASSERT_OK(mshare_unmap(fd, 256 * MIB, MIB));
	close(mfd);
	close(ffd);
}

/* ---- 13. GUP users racing MSHAREFS_UNMAP ------------------------------- */

#define RACE_OFF	(128 * MIB)
#define RACE_SIZE	(256 * KIB)

struct race {
	char *p;
	int dfd;
	int stop;
	long full, partial, fault, other;	/* call results */
};

static void race_count(struct race *r, ssize_t ret, size_t want)
{
	long *c = ret == (ssize_t)want ? &r->full :
		  ret > 0 && ret < (ssize_t)want ? &r->partial :
		  ret < 0 && errno == EFAULT ? &r->fault : &r->other;

	if (c == &r->other)
		fprintf(stderr, "# race: %zd of %zu, errno %d\n", ret, want,
			errno);
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void *race_dio(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED))
		race_count(r, pread(r->dfd, r->p, RACE_SIZE, 0), RACE_SIZE);
	return NULL;
}

static void *race_pvm(void *arg)
{
	static char buf[RACE_SIZE];
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		race_count(r, vm_read(getpid(), buf, r->p, RACE_SIZE),
			   RACE_SIZE);
		race_count(r, vm_write(getpid(), r->p, buf, RACE_SIZE),
			   RACE_SIZE);
	}
	return NULL;
}

/*
 * O_DIRECT and process_vm_readv/writev on an object that is removed and
 * placed again all the time: every call moves all, some or nothing
 * (EFAULT), and the kernel stays quiet. The object is replaced at least
 * 20 times and for 5 s (at most 300 times), and on until the calls have
 * seen both a present object (all moved) and a missing one (EFAULT), for
 * up to 60 s: the round that saw both is logged.
 */
TEST_F_TIMEOUT(gup, unmap_race, 120)
{
	struct race r = { .p = self->p1 + RACE_OFF };
	int fd = self->r.fd, i, both = -1;
	pthread_t t[2];
	double t0 = now();

	r.dfd = disk_file(RACE_SIZE, 120);
	ASSERT_LE(0, r.dfd);
	ASSERT_OK(create_anon(fd, RACE_OFF, RACE_SIZE, RW));
	ASSERT_OK(pthread_create(&t[0], NULL, race_dio, &r));
	ASSERT_OK(pthread_create(&t[1], NULL, race_pvm, &r));
	for (i = 0; now() < t0 + 60; i++) {
		if (both < 0 && __atomic_load_n(&r.full, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&r.fault, __ATOMIC_RELAXED))
			both = i;
		if (both >= 0 && i >= 20 && (i >= 300 || now() >= t0 + 5))
			break;
		ASSERT_OK(mshare_unmap(fd, RACE_OFF, RACE_SIZE));
		usleep(i % 3 * 1000);
		ASSERT_OK(create_anon(fd, RACE_OFF, RACE_SIZE, RW));
		usleep(i % 5 * 1000);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	ASSERT_OK(pthread_join(t[0], NULL));
	ASSERT_OK(pthread_join(t[1], NULL));
	TH_LOG("%d replacements in %.1f s, both outcomes after %d: %ld full, %ld partial, %ld EFAULT, %ld other",
	       i, now() - t0, both, r.full, r.partial, r.fault, r.other);
	ASSERT_EQ(0L, r.other);
	ASSERT_LT(0L, r.full);
	ASSERT_LT(0L, r.fault);
	ASSERT_MOVES(RACE_SIZE, pread(r.dfd, r.p, RACE_SIZE, 0));
	ASSERT_PATTERN(self->p2 + RACE_OFF, RACE_SIZE, 120);
	close(r.dfd);
}

__attribute__((constructor)) static void setup_globals(void)
{
	A = read_align();
}

TEST_HARNESS_MAIN
