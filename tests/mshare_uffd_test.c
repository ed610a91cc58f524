// SPDX-License-Identifier: GPL-2.0
/*
 * userfaultfd through msharefs attachments, as a thread sees it on shared
 * memory: a process registers a range of its attachment, and a fault there
 * from any sharer, at whatever address that sharer attached the region, is
 * delivered to its userfaultfd at the address in its own attachment;
 * resolving it fills the region for everyone.
 *
 *  - missing faults of another sharer, resolved by UFFDIO_COPY and
 *    UFFDIO_ZEROPAGE; minor faults, resolved by UFFDIO_CONTINUE; write
 *    protection, resolved by UFFDIO_WRITEPROTECT; UFFDIO_POISON;
 *  - several sharers faulting at once on every page of an object, one
 *    handler thread resolving (the idea of the kernel's uffd-stress);
 *  - the rules: a reader's attachment cannot register (EPERM) but its
 *    faults are delivered; an object registered by another process's
 *    userfaultfd is EBUSY, cannot be filled (ENOENT) and stays registered
 *    after an UFFDIO_UNREGISTER by that process; one attachment per
 *    userfaultfd and region; bad ranges;
 *  - the registration ends with the userfaultfd (close) or with the
 *    attachment (munmap, or the exit of the registering process while
 *    another holds its userfaultfd): waiting faults go on, later ones are
 *    ordinary faults;
 *  - a sharer's MADV_DONTNEED is a remove event at the registering
 *    process's addresses.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y and CONFIG_USERFAULTFD=y, and
 * msharefs on /sys/fs/mshare.
 *
 * Build: make -C tests, or
 *   gcc -static -O2 -Wall -Wextra -I<linux>/tools/testing/selftests \
 *       -I<uapi headers> -o mshare_uffd_test mshare_uffd_test.c \
 *       -lmshare -lpthread
 * Run:   ./mshare_uffd_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <linux/userfaultfd.h>
#include <sys/syscall.h>

#include "mshare_test.h"

#define OBJ		(1UL << 20)	/* the memfd object, at offset 0 */
#define NPAGES		(OBJ / PG)
#define ANON_OFF	(2 * OBJ)	/* a shared anonymous object */
#define HUGE_OFF	(4 * OBJ)	/* a hugetlb object, where a test puts one */
#define WAIT_MS		10000		/* for a message that must come */
#define QUIET_MS	300		/* for one that must not */

#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd	438
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON		(1 << 14)
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM	(1 << 12)
#endif

/* The alignment (and size of every region here), from mshare_info. */
static unsigned long A;

FIXTURE(uffd) {
	char path[64];
	int fd;		/* the region, O_RDWR */
	int mfd;	/* the memfd object's file */
	char *p;	/* our attachment, a writer's */
	char *m;	/* the memfd mapped on its own, outside the region */
	pid_t pid;
};

FIXTURE_SETUP(uffd)
{
	static int seq;

	self->fd = -1;
	self->pid = getpid();
	ASSERT_NE(0UL, A) TH_LOG("msharefs is not mounted on " MSHARE_DIR);
	snprintf(self->path, sizeof(self->path), MSHARE_DIR "/uf-%d-%d",
		 getpid(), seq++);
	self->fd = open(self->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			0644);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
	ASSERT_OK(ftruncate(self->fd, A));
	self->mfd = memfd_sized("uffd", MFD_CLOEXEC, OBJ);
	ASSERT_LE(0, self->mfd);
	ASSERT_OK(create_mapping(self->fd, 0, OBJ, 0, RW, FILEMAP, self->mfd));
	ASSERT_OK(create_mapping(self->fd, ANON_OFF, OBJ, 0, RW, ANON, -1));
	ASSERT_MAPS(self->p, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_MAPS(self->m, mmap(NULL, OBJ, RW, MAP_SHARED, self->mfd, 0));
}

FIXTURE_TEARDOWN_PARENT(uffd)
{
	if (self->pid)
		unlink_tagged(MSHARE_DIR, "uf", self->pid);
}

/* A userfaultfd with @features, non-blocking; -1 on error. */
static int uffd_open(__u64 features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int ufd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (ufd < 0)
		return -1;
	if (ioctl(ufd, UFFDIO_API, &api)) {
		close(ufd);
		return -1;
	}
	return ufd;
}

static int uffd_register(int ufd, void *addr, size_t len, __u64 mode)
{
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)addr, .len = len },
		.mode = mode,
	};

	return ioctl(ufd, UFFDIO_REGISTER, &reg);
}

/* A userfaultfd with @features that registered [@p, @p + OBJ) in @mode. */
static int registered(char *p, __u64 features, __u64 mode)
{
	int ufd = uffd_open(features);

	if (ufd >= 0 && uffd_register(ufd, p, OBJ, mode)) {
		close(ufd);
		return -1;
	}
	return ufd;
}

static int uffd_unregister(int ufd, void *addr, size_t len)
{
	struct uffdio_range r = { .start = (uintptr_t)addr, .len = len };

	return ioctl(ufd, UFFDIO_UNREGISTER, &r);
}

/* UFFDIO_COPY of one page @src to @dst; 0 or -1 with errno. */
static int uffd_copy(int ufd, void *dst, const void *src)
{
	struct uffdio_copy c = {
		.dst = (uintptr_t)dst, .src = (uintptr_t)src, .len = PG,
	};

	if (ioctl(ufd, UFFDIO_COPY, &c))
		return -1;
	return c.copy == (__s64)PG ? 0 : -1;
}

static int uffd_wp(int ufd, void *addr, size_t len, bool protect)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)addr, .len = len },
		.mode = protect ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(ufd, UFFDIO_WRITEPROTECT, &wp);
}

/*
 * The next message of @ufd within @ms milliseconds: 0, -ETIME if none
 * came, or -errno.
 */
static int uffd_next(int ufd, struct uffd_msg *msg, int ms)
{
	struct pollfd pfd = { .fd = ufd, .events = POLLIN };
	int n = poll(&pfd, 1, ms);

	if (n < 0)
		return -errno;
	if (!n)
		return -ETIME;
	if (read(ufd, msg, sizeof(*msg)) != sizeof(*msg))
		return -errno;
	return 0;
}

/* A page of @c bytes, for UFFDIO_COPY. */
static char *page_of(char c)
{
	char *pg = mmap(NULL, PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (pg != MAP_FAILED)
		memset(pg, c, PG);
	return pg;
}

/*
 * What a child sharer does: attach the region at an address of its own,
 * read (or write @val to) the byte at @off, and report what it read there
 * afterwards on @pipe.
 */
struct toucher {
	int fd;			/* the region */
	int prot;		/* of its attachment */
	unsigned long off;	/* in the region */
	bool write;
	char val;
	int pipe;		/* write end */
	int ufd;		/* if not 0, our userfaultfd: close it */
};

static int touch_child(void *arg)
{
	struct toucher *t = arg;
	char *q = mshare_attach(t->fd, NULL, t->prot, 0);
	char got;

	/* The file stays open while any process has it open. */
	if (t->ufd > 0)
		close(t->ufd);
	if (q == MAP_FAILED)
		return 1;
	if (t->write)
		*(volatile char *)(q + t->off) = t->val;
	got = *(volatile char *)(q + t->off);
	return write(t->pipe, &got, 1) == 1 ? 0 : 2;
}

/* A byte from @fd within @ms milliseconds: it, or -1. */
static int read_byte(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned char c;

	if (poll(&pfd, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

/* A sharer doing @t, reporting on a new pipe (*@rd): its pid, or -1. */
static pid_t start_touch(struct toucher *t, int *rd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	t->pipe = fds[1];
	pid = fork_run(touch_child, t);
	close(fds[1]);
	*rd = fds[0];
	return pid;
}

/*
 * A sharer doing @t faults; the fault reaches @ufd at @want (our address)
 * and waits until UFFDIO_COPY puts a page of @c there, which the sharer
 * then reads. The message goes to *@out if @out.
 */
static void copy_resolves(struct __test_metadata *_metadata, int ufd,
			  struct toucher *t, char *want, char c,
			  struct uffd_msg *out)
{
	struct uffd_msg msg;
	char *src;
	pid_t pid;
	int rd;

	pid = start_touch(t, &rd);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	EXPECT_EQ((uintptr_t)want, msg.arg.pagefault.address & ~(PG - 1))
		TH_LOG("fault at %#llx, want %p",
		       (unsigned long long)msg.arg.pagefault.address, want);
	/* It waits for us. */
	EXPECT_EQ(-1, read_byte(rd, QUIET_MS));
	ASSERT_MAPS(src, page_of(c));
	ASSERT_OK(uffd_copy(ufd, want, src));
	EXPECT_EQ(c, read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	munmap(src, PG);
	close(rd);
	if (out)
		*out = msg;
}

/*
 * A missing fault of another sharer, at its own address, comes to our
 * userfaultfd at ours; UFFDIO_COPY there fills the region for it and us.
 */
TEST_F(uffd, missing_copy_other_sharer)
{
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 5 * PG + 17 };
	struct uffd_msg msg;
	char *src;
	int ufd;

	ufd = registered(self->p, UFFD_FEATURE_THREAD_ID,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	copy_resolves(_metadata, ufd, &t, self->p + 5 * PG, 'c', &msg);
	EXPECT_EQ(0ULL, msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE);
	EXPECT_EQ(0U, msg.arg.pagefault.feat.ptid)
		TH_LOG("a thread of another process was named");
	EXPECT_EQ('c', self->p[5 * PG]);
	EXPECT_EQ('c', self->m[5 * PG + PG - 1]);
	/* Filled once, for everyone: a second copy finds it there. */
	ASSERT_MAPS(src, page_of('d'));
	ASSERT_FAILS(EEXIST, uffd_copy(ufd, self->p + 5 * PG, src));
	EXPECT_EQ('c', self->m[5 * PG]);
	close(ufd);
}

/* UFFD_FEATURE_EXACT_ADDRESS: the byte the sharer touched, at our address. */
TEST_F(uffd, exact_address)
{
	struct toucher t = { .fd = self->fd, .prot = RW,
			     .off = 17 * PG + 123 };
	struct uffd_msg msg;
	int ufd;

	ufd = registered(self->p, UFFD_FEATURE_EXACT_ADDRESS,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	copy_resolves(_metadata, ufd, &t, self->p + 17 * PG, 'e', &msg);
	EXPECT_EQ((uintptr_t)self->p + 17 * PG + 123,
		  msg.arg.pagefault.address);
	close(ufd);
}

/*
 * UFFD_FEATURE_SIGBUS: a sharer's missing fault is SIGBUS at once, and no
 * message; the page stays missing.
 */
TEST_F(uffd, sigbus_feature)
{
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 19 * PG,
			     .pipe = -1 };
	struct uffd_msg msg;
	int ufd;

	ufd = registered(self->p, UFFD_FEATURE_SIGBUS,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	EXPECT_EQ(128 + SIGBUS, run_child(touch_child, &t));
	EXPECT_EQ(-ETIME, uffd_next(ufd, &msg, 0));
	ASSERT_OK(uffd_unregister(ufd, self->p, OBJ));
	EXPECT_EQ(0, self->p[19 * PG]);
	close(ufd);
}

/* UFFDIO_ZEROPAGE resolves a sharer's write fault in the anonymous object. */
TEST_F(uffd, missing_zeropage_write)
{
	struct uffdio_zeropage z = {
		.range = { .start = (uintptr_t)self->p + ANON_OFF + 3 * PG,
			   .len = PG },
	};
	struct toucher t = { .fd = self->fd, .prot = RW,
			     .off = ANON_OFF + 3 * PG, .write = true,
			     .val = 'w' };
	struct uffd_msg msg;
	int rd, ufd;
	pid_t pid;

	ufd = uffd_open(UFFD_FEATURE_THREAD_ID);
	ASSERT_LE(0, ufd);
	ASSERT_OK(uffd_register(ufd, self->p + ANON_OFF, OBJ,
				UFFDIO_REGISTER_MODE_MISSING));
	pid = start_touch(&t, &rd);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	EXPECT_EQ((uintptr_t)self->p + ANON_OFF + 3 * PG,
		  msg.arg.pagefault.address & ~(PG - 1));
	EXPECT_NE(0ULL, msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE);
	ASSERT_OK(ioctl(ufd, UFFDIO_ZEROPAGE, &z));
	EXPECT_EQ((__s64)PG, z.zeropage);
	EXPECT_EQ('w', read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	EXPECT_EQ('w', self->p[ANON_OFF + 3 * PG]);
	EXPECT_EQ(0, self->p[ANON_OFF + 3 * PG + 1]);
	close(rd);
	close(ufd);
}

/* A thread of ours faulting through our attachment. */
static void *read_page(void *arg)
{
	return (void *)(uintptr_t)*(volatile char *)arg;
}

/* Our own thread's fault through the attachment comes with its id. */
TEST_F(uffd, missing_own_thread_named)
{
	struct uffd_msg msg;
	pthread_t th;
	char *src;
	void *ret;
	int ufd;

	ufd = registered(self->p, UFFD_FEATURE_THREAD_ID,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, pthread_create(&th, NULL, read_page, self->p + 9 * PG));
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	EXPECT_EQ((uintptr_t)self->p + 9 * PG, msg.arg.pagefault.address);
	EXPECT_NE(0U, msg.arg.pagefault.feat.ptid);
	EXPECT_NE((__u32)getpid(), msg.arg.pagefault.feat.ptid);
	ASSERT_MAPS(src, page_of('t'));
	ASSERT_OK(uffd_copy(ufd, self->p + 9 * PG, src));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ((uintptr_t)'t', (uintptr_t)ret);
	close(ufd);
}

/*
 * A fault waiting for us holds no lock of its process. A thread of ours
 * waits on a missing page of our attachment, and meanwhile we change the
 * attachment's own flags (MADV_DONTFORK, which write-locks its VMA) and
 * mmap() and munmap() (the mmap_lock for writing), then resolve it; once
 * for a load (a user-mode fault, which may be tried under the VMA lock)
 * and once for a read() into the page (kernel mode: under the mmap_lock).
 * Were a lock held, the change would wait for the fault and the fault for
 * us: the alarm ends that.
 */
static void *syscall_read_thread(void *arg);

static void wait_unlocked(struct __test_metadata *_metadata,
			  FIXTURE_DATA(uffd) *self, int ufd,
			  void *(*fn)(void *), unsigned long off, long want)
{
	struct uffd_msg msg;
	pthread_t th;
	char *src, *q;
	void *ret;

	ASSERT_MAPS(src, page_of('l'));
	ASSERT_EQ(0, pthread_create(&th, NULL, fn, self->p + off));
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	EXPECT_EQ((uintptr_t)self->p + off,
		  msg.arg.pagefault.address & ~(PG - 1));
	alarm(20);
	ASSERT_OK(madvise(self->p, A, MADV_DONTFORK));
	ASSERT_OK(madvise(self->p, A, MADV_DOFORK));
	ASSERT_MAPS(q, mmap(NULL, PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	ASSERT_OK(munmap(q, PG));
	ASSERT_OK(uffd_copy(ufd, self->p + off, src));
	ASSERT_EQ(0, pthread_join(th, &ret));
	alarm(0);
	EXPECT_EQ(want, (long)ret);
	munmap(src, PG);
}

TEST_F(uffd, wait_holds_no_process_lock)
{
	int ufd;

	ufd = registered(self->p, 0, UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	wait_unlocked(_metadata, self, ufd, read_page, 61 * PG, 'l');
	wait_unlocked(_metadata, self, ufd, syscall_read_thread, 62 * PG, 1);
	EXPECT_EQ('s', self->m[62 * PG]);
	close(ufd);
}

/* A sharer's system call reads into a missing page of ours at @off. */
struct syscall_reader {
	int fd;
	unsigned long off;
};

static int syscall_read_child(void *arg)
{
	struct syscall_reader *r = arg;
	char *q = mshare_attach(r->fd, NULL, RW, 0);
	int pfd[2];

	if (FAILED(q != MAP_FAILED && !pipe(pfd)))
		return 1;
	if (FAILED(write(pfd[1], "k", 1) == 1))
		return 1;
	/* copy_to_user() faults in kernel mode: EFAULT, no wait. */
	if (FAILED(read(pfd[0], q + r->off, 1) == -1 && errno == EFAULT))
		return 1;
	return 0;
}

/* Our own thread's system call, which waits for us. */
static void *syscall_read_thread(void *arg)
{
	int pfd[2];

	if (pipe(pfd) || write(pfd[1], "s", 1) != 1)
		return (void *)-1L;
	return (void *)(long)read(pfd[0], arg, 1);
}

/*
 * No process can hold another inside the kernel: another sharer's read()
 * into a missing registered page fails with EFAULT and nothing comes to
 * us; our own thread's read() there waits until we fill the page.
 */
TEST_F(uffd, kernel_faults_of_others_efault)
{
	struct syscall_reader r = { .fd = self->fd, .off = 63 * PG };
	struct uffd_msg msg;
	pthread_t th;
	char *src;
	void *ret;
	int ufd;

	ufd = registered(self->p, 0, UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	EXPECT_EQ(0, run_child(syscall_read_child, &r));
	EXPECT_EQ(-ETIME, uffd_next(ufd, &msg, QUIET_MS));

	ASSERT_EQ(0, pthread_create(&th, NULL, syscall_read_thread,
				    self->p + 63 * PG));
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	EXPECT_EQ((uintptr_t)self->p + 63 * PG,
		  msg.arg.pagefault.address & ~(PG - 1));
	EXPECT_NE(0ULL, msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE);
	ASSERT_MAPS(src, page_of(0));
	ASSERT_OK(uffd_copy(ufd, self->p + 63 * PG, src));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(1L, (long)ret);
	EXPECT_EQ('s', self->m[63 * PG]);
	close(ufd);
}

/*
 * A minor fault: the page is in the memfd's cache but not mapped in the
 * region. We change it through the memfd, then UFFDIO_CONTINUE maps it
 * for the faulting sharer, which reads the new data.
 */
TEST_F(uffd, minor_continue)
{
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 7 * PG };
	struct uffdio_continue cont = {
		.range = { .start = (uintptr_t)self->p + 7 * PG, .len = PG },
	};
	struct uffd_msg msg;
	int rd, ufd;
	pid_t pid;

	memset(self->m, 'o', OBJ);
	ufd = registered(self->p, 0, UFFDIO_REGISTER_MODE_MINOR);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	pid = start_touch(&t, &rd);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	EXPECT_NE(0ULL, msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR);
	EXPECT_EQ((uintptr_t)self->p + 7 * PG, msg.arg.pagefault.address);
	self->m[7 * PG] = 'n';
	ASSERT_OK(ioctl(ufd, UFFDIO_CONTINUE, &cont));
	EXPECT_EQ((__s64)PG, cont.mapped);
	EXPECT_EQ('n', read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	close(rd);
	close(ufd);
}

/*
 * Write protection: the pages are there; we protect them, a sharer's
 * write waits for us, and goes through once we unprotect.
 */
TEST_F(uffd, wp_other_sharer)
{
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 11 * PG,
			     .write = true, .val = 'W' };
	struct uffd_msg msg;
	int rd, ufd;
	pid_t pid;

	memset(self->p, 'a', OBJ);
	ufd = registered(self->p, UFFD_FEATURE_WP_HUGETLBFS_SHMEM,
			 UFFDIO_REGISTER_MODE_WP);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_OK(uffd_wp(ufd, self->p, OBJ, true));
	/* Reading is not writing. */
	t.write = false;
	pid = start_touch(&t, &rd);
	ASSERT_LT(0, pid);
	EXPECT_EQ('a', read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	EXPECT_EQ(-ETIME, uffd_next(ufd, &msg, 0));

	t.write = true;
	close(rd);
	pid = start_touch(&t, &rd);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	EXPECT_NE(0ULL, msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP);
	EXPECT_EQ((uintptr_t)self->p + 11 * PG,
		  msg.arg.pagefault.address & ~(PG - 1));
	EXPECT_EQ(-1, read_byte(rd, QUIET_MS));
	EXPECT_EQ('a', self->m[11 * PG]);
	ASSERT_OK(uffd_wp(ufd, self->p + 11 * PG, PG, false));
	EXPECT_EQ('W', read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	EXPECT_EQ('W', self->m[11 * PG]);
	close(rd);
	close(ufd);
}

/* UFFDIO_POISON of a page through the attachment: every sharer SIGBUS. */
TEST_F(uffd, poison)
{
	struct uffdio_poison poison = {
		.range = { .start = (uintptr_t)self->p + 13 * PG, .len = PG },
	};
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 13 * PG,
			     .pipe = -1 };
	int ufd;

	ufd = registered(self->p, UFFD_FEATURE_POISON,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_OK(ioctl(ufd, UFFDIO_POISON, &poison));
	EXPECT_EQ((__s64)PG, poison.updated);
	EXPECT_EQ(128 + SIGBUS, run_child(touch_child, &t));
	close(ufd);
}

/*
 * Many sharers fault on every page of the object at once, each in its own
 * order; one handler thread resolves each fault with the page's pattern.
 * Every sharer reads every page right, and each page was filled once.
 */
struct handler {
	int ufd;
	char *base;		/* our attachment */
	volatile bool stop;
	long faults, copies, exists;
	int err;
};

static void *handler_thread(void *arg)
{
	struct handler *h = arg;
	char *src = page_of(0);
	struct uffd_msg msg;
	unsigned long off;
	int ret;

	if (src == MAP_FAILED) {
		h->err = ENOMEM;
		return NULL;
	}
	while (!h->stop) {
		ret = uffd_next(h->ufd, &msg, 50);
		if (ret == -ETIME || ret == -EAGAIN)
			continue;
		if (ret || msg.event != UFFD_EVENT_PAGEFAULT) {
			h->err = ret ? -ret : EPROTO;
			break;
		}
		h->faults++;
		off = (msg.arg.pagefault.address & ~(PG - 1)) -
		      (uintptr_t)h->base;
		if (off >= OBJ) {
			h->err = ERANGE;
			break;
		}
		fill(src, PG, 40 + off / PG);
		if (!uffd_copy(h->ufd, h->base + off, src)) {
			h->copies++;
		} else if (errno == EEXIST) {
			struct uffdio_range r = {
				.start = (uintptr_t)h->base + off, .len = PG,
			};

			/* Filled for another sharer meanwhile: wake it. */
			h->exists++;
			if (ioctl(h->ufd, UFFDIO_WAKE, &r)) {
				h->err = errno;
				break;
			}
		} else {
			h->err = errno;
			break;
		}
	}
	munmap(src, PG);
	return NULL;
}

static int stress_child(void *arg)
{
	int fd = *(int *)arg;
	char *q = mshare_attach(fd, NULL, RW, 0);
	unsigned long i, k, step;

	if (q == MAP_FAILED)
		return 1;
	/* A stride coprime to NPAGES (a power of two), per child. */
	step = 2 * (getpid() % 61) + 1;
	for (i = 0; i < NPAGES; i++) {
		k = (i * step + getpid()) % NPAGES;
		if (mismatch(q + k * PG, PG, 40 + k) >= 0)
			return 2;
	}
	return 0;
}

TEST_F_TIMEOUT(uffd, stress_missing, 120)
{
	struct handler h = { .base = self->p };
	pid_t pid[6];
	pthread_t th;
	unsigned long k;
	int i;

	h.ufd = uffd_open(0);
	ASSERT_LE(0, h.ufd);
	ASSERT_OK(uffd_register(h.ufd, self->p, OBJ,
				UFFDIO_REGISTER_MODE_MISSING));
	ASSERT_EQ(0, pthread_create(&th, NULL, handler_thread, &h));
	for (i = 0; i < (int)ARRAY_SIZE(pid); i++) {
		pid[i] = fork_run(stress_child, &self->fd);
		ASSERT_LT(0, pid[i]);
	}
	for (i = 0; i < (int)ARRAY_SIZE(pid); i++)
		EXPECT_EQ(0, wait_exit(pid[i])) TH_LOG("sharer %d", i);
	h.stop = true;
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%ld faults, %ld copies, %ld already filled", h.faults,
	       h.copies, h.exists);
	ASSERT_EQ(0, h.err) TH_LOG("handler: %s", strerror(h.err));
	EXPECT_EQ((long)NPAGES, h.copies);
	EXPECT_LE((long)NPAGES, h.faults);
	for (k = 0; k < NPAGES; k++)
		ASSERT_EQ(-1L, mismatch(self->m + k * PG, PG, 40 + k))
			TH_LOG("page %lu", k);
	close(h.ufd);
}

/*
 * A reader's attachment registers nothing (registration changes every
 * sharer's faults), but a reader's faults go to a writer's registration.
 */
TEST_F(uffd, reader_faults_delivered_not_registered)
{
	struct toucher t = { .prot = PROT_READ, .off = 21 * PG };
	int ufd, rfd;
	char *r;

	rfd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ufd = uffd_open(0);
	ASSERT_LE(0, ufd);
	ASSERT_FAILS(EPERM, uffd_register(ufd, r, OBJ,
					  UFFDIO_REGISTER_MODE_MISSING));
	ASSERT_FAILS(EPERM, uffd_register(ufd, r + 2 * OBJ, PG,
					  UFFDIO_REGISTER_MODE_WP));
	ASSERT_OK(munmap(r, A));

	ASSERT_OK(uffd_register(ufd, self->p, OBJ,
				UFFDIO_REGISTER_MODE_MISSING));
	t.fd = rfd;
	copy_resolves(_metadata, ufd, &t, self->p + 21 * PG, 'r', NULL);
	close(ufd);
	close(rfd);
}

/*
 * Two processes, two userfaultfds: the second cannot register, fill or
 * unregister what the first registered; it may register the rest.
 */
struct rival {
	int fd;
};

static int rival_child(void *arg)
{
	struct rival *r = arg;
	char *q = mshare_attach(r->fd, NULL, RW, 0);
	int ufd = uffd_open(0);
	char *src = page_of('x');

	if (FAILED(q != MAP_FAILED && ufd >= 0 && src != MAP_FAILED))
		return 1;
	if (FAILED(uffd_register(ufd, q, PG, UFFDIO_REGISTER_MODE_MISSING) &&
		   errno == EBUSY))
		return 1;
	if (FAILED(uffd_register(ufd, q + ANON_OFF, OBJ,
				 UFFDIO_REGISTER_MODE_MISSING) == 0))
		return 1;
	/* Filling the other's object, registered or not here: ENOENT. */
	if (FAILED(uffd_copy(ufd, q + 31 * PG, src) && errno == ENOENT))
		return 1;
	/* Unregistering it takes off only what is ours. */
	if (FAILED(uffd_unregister(ufd, q, 2 * OBJ) == 0))
		return 1;
	if (FAILED(uffd_unregister(ufd, q + ANON_OFF, OBJ) == 0))
		return 1;
	return 0;
}

TEST_F(uffd, other_process_ebusy_enoent)
{
	struct rival r = { .fd = self->fd };
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 31 * PG };
	int ufd;

	ufd = registered(self->p, 0, UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, run_child(rival_child, &r));

	/* Still ours: a fault comes here. */
	copy_resolves(_metadata, ufd, &t, self->p + 31 * PG, 'y', NULL);
	close(ufd);
}

/*
 * A fill of a huge page that has to copy its source with the locks
 * dropped looks the object up again: it must find it registered with the
 * same userfaultfd. Our copy into a hugetlb object waits on its source
 * (registered with a second userfaultfd of ours); meanwhile we unregister
 * the object and another process registers it. Our copy then fails with
 * ENOENT, and the other process's userfaultfd gets the sharer's fault.
 */
struct copier {
	int ufd;
	char *dst, *src;
	long ret;
	int err;
};

static void *copy_huge(void *arg)
{
	struct copier *c = arg;
	struct uffdio_copy uc = {
		.dst = (uintptr_t)c->dst, .src = (uintptr_t)c->src,
		.len = HPAGE,
	};

	c->ret = ioctl(c->ufd, UFFDIO_COPY, &uc);
	c->err = errno;
	return NULL;
}

struct thief {
	int fd;
	int ready;	/* write end: 'R' once registered */
	int go;		/* read end: touch now */
};

static int thief_child(void *arg)
{
	struct toucher t = { .prot = PROT_READ, .off = HUGE_OFF + 5 };
	struct thief *th = arg;
	char *q = mshare_attach(th->fd, NULL, RW, 0);
	int ufd = uffd_open(0);
	struct uffd_msg msg;
	char c;
	int rd;

	if (FAILED(q != MAP_FAILED && ufd >= 0))
		return 1;
	if (FAILED(!uffd_register(ufd, q + HUGE_OFF, HPAGE,
				  UFFDIO_REGISTER_MODE_MISSING)))
		return 1;
	if (write(th->ready, "R", 1) != 1 || read(th->go, &c, 1) != 1)
		return 2;
	/*
	 * A sharer's fault there is ours: the page was not filled. (At the
	 * huge page's address: hugetlb faults are.)
	 */
	t.fd = th->fd;
	t.ufd = ufd;
	if (FAILED(start_touch(&t, &rd) > 0))
		return 1;
	if (FAILED(uffd_next(ufd, &msg, WAIT_MS) == 0))
		return 1;
	return FAILED(msg.arg.pagefault.address == (uintptr_t)q + HUGE_OFF) ?
	       1 : 0;
}

TEST_F(uffd, hugetlb_copy_retry_refused)
{
	struct copier c = { .dst = self->p + HUGE_OFF };
	struct thief th = { .fd = self->fd };
	int ready[2], go[2], sfd;
	struct uffd_msg msg;
	char *src, *fill;
	pthread_t t;
	pid_t pid;

	ASSERT_OK(create_mapping(self->fd, HUGE_OFF, HPAGE, 0, RW,
				 ANON | MAP_HUGETLB, -1));
	c.ufd = uffd_open(0);
	ASSERT_LE(0, c.ufd);
	ASSERT_OK(uffd_register(c.ufd, self->p + HUGE_OFF, HPAGE,
				UFFDIO_REGISTER_MODE_MISSING));
	ASSERT_MAPS(src, mmap(NULL, HPAGE, RW, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0));
	ASSERT_OK(madvise(src, HPAGE, MADV_NOHUGEPAGE));
	sfd = uffd_open(0);
	ASSERT_LE(0, sfd);
	ASSERT_OK(uffd_register(sfd, src, HPAGE, UFFDIO_REGISTER_MODE_MISSING));
	c.src = src;
	ASSERT_EQ(0, pthread_create(&t, NULL, copy_huge, &c));
	/* The copy waits for its source. */
	ASSERT_EQ(0, uffd_next(sfd, &msg, WAIT_MS));

	ASSERT_OK(uffd_unregister(c.ufd, self->p + HUGE_OFF, HPAGE));
	ASSERT_OK(pipe(ready));
	ASSERT_OK(pipe(go));
	th.ready = ready[1];
	th.go = go[0];
	pid = fork_run(thief_child, &th);
	ASSERT_LT(0, pid);
	ASSERT_EQ('R', read_byte(ready[0], WAIT_MS));

	ASSERT_MAPS(fill, mmap(NULL, HPAGE, RW, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0));
	memset(fill, 'B', HPAGE);
	{
		struct uffdio_copy uc = {
			.dst = (uintptr_t)src, .src = (uintptr_t)fill,
			.len = HPAGE,
		};

		ASSERT_OK(ioctl(sfd, UFFDIO_COPY, &uc));
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(-1L, c.ret);
	EXPECT_EQ(ENOENT, c.err);
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_exit(pid));
	close(sfd);
	close(c.ufd);
}

/* Bad ranges and operations through an attachment change nothing. */
TEST_F(uffd, bad_input)
{
	struct uffdio_move mv = {
		.dst = (uintptr_t)self->p, .src = (uintptr_t)self->p + PG,
		.len = PG,
	};
	char *q, *src;
	int ufd;

	ufd = uffd_open(0);
	ASSERT_LE(0, ufd);
	ASSERT_MAPS(src, page_of('b'));
	/* Past the end of the attachment. */
	ASSERT_FAILS(EINVAL, uffd_register(ufd, self->p + A - PG, 2 * PG,
					   UFFDIO_REGISTER_MODE_MISSING));
	/* Only a hole of the region. */
	ASSERT_FAILS(EINVAL, uffd_register(ufd, self->p + 8 * OBJ, OBJ,
					   UFFDIO_REGISTER_MODE_MISSING));
	/* Misaligned, no mode, an unknown mode. */
	ASSERT_FAILS(EINVAL, uffd_register(ufd, self->p + 1, PG,
					   UFFDIO_REGISTER_MODE_MISSING));
	ASSERT_FAILS(EINVAL, uffd_register(ufd, self->p, PG, 0));
	ASSERT_FAILS(EINVAL, uffd_register(ufd, self->p, PG, 1ULL << 40));
	/* Not registered: nothing to fill or protect. */
	ASSERT_FAILS(ENOENT, uffd_copy(ufd, self->p, src));
	ASSERT_FAILS(ENOENT, uffd_wp(ufd, self->p, PG, true));
	/* Registered, but the copy runs past the object into a hole. */
	ASSERT_OK(uffd_register(ufd, self->p, OBJ,
				UFFDIO_REGISTER_MODE_MISSING));
	{
		struct uffdio_copy c = {
			.dst = (uintptr_t)self->p + OBJ - PG,
			.src = (uintptr_t)src, .len = 2 * PG,
		};

		ASSERT_FAILS(ENOENT, ioctl(ufd, UFFDIO_COPY, &c));
	}
	/* Not write-protect registered. */
	ASSERT_FAILS(ENOENT, uffd_wp(ufd, self->p, PG, true));
	/* No moving pages in or out of a region. */
	ASSERT_FAILS(EINVAL, ioctl(ufd, UFFDIO_MOVE, &mv));
	/* One attachment per userfaultfd and region. */
	ASSERT_MAPS(q, mshare_attach(self->fd, NULL, RW, 0));
	ASSERT_FAILS(EBUSY, uffd_register(ufd, q + ANON_OFF, OBJ,
					  UFFDIO_REGISTER_MODE_MISSING));
	ASSERT_OK(munmap(q, A));
	/* Nothing was filled. */
	ASSERT_OK(uffd_unregister(ufd, self->p, OBJ));
	EXPECT_EQ(0, self->p[0]);
	EXPECT_EQ(0, self->p[OBJ - PG]);
	close(ufd);
}

/*
 * The registration ends with the userfaultfd or the attachment: a fault
 * waiting on it goes on (an ordinary fault, a zero page), later ones too.
 */
enum end_by { END_CLOSE, END_UNREGISTER, END_MUNMAP, END_REPLACED };

static void ends_with(struct __test_metadata *_metadata,
		      FIXTURE_DATA(uffd) *self, enum end_by how)
{
	struct toucher t = { .fd = self->fd, .prot = RW, .off = 41 * PG };
	struct uffd_msg msg;
	int rd, ufd;
	pid_t pid;

	ufd = registered(self->p, 0, UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	t.ufd = ufd;
	pid = start_touch(&t, &rd);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	EXPECT_EQ(-1, read_byte(rd, QUIET_MS));
	switch (how) {
	case END_CLOSE:
		close(ufd);
		break;
	case END_UNREGISTER:
		ASSERT_OK(uffd_unregister(ufd, self->p, OBJ));
		break;
	case END_REPLACED:
		/* The object the fault waits on goes, then the attachment. */
		ASSERT_OK(ioctl(self->fd, MSHAREFS_UNMAP,
				&(struct mshare_unmap){ 0, OBJ }));
		ASSERT_OK(create_mapping(self->fd, 0, OBJ, 0, RW, ANON, -1));
		/* fall through */
	case END_MUNMAP:
		ASSERT_OK(munmap(self->p, A));
		break;
	}
	EXPECT_EQ(0, read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	/* Later faults are ordinary ones. */
	t.off = 43 * PG;
	t.ufd = 0;
	close(rd);
	pid = start_touch(&t, &rd);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, read_byte(rd, WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	if (how != END_CLOSE)
		EXPECT_EQ(-ETIME, uffd_next(ufd, &msg, QUIET_MS));
	if (how != END_CLOSE)
		close(ufd);
	close(rd);
}

TEST_F(uffd, ends_with_close)
{
	ends_with(_metadata, self, END_CLOSE);
}

TEST_F(uffd, ends_with_unregister)
{
	ends_with(_metadata, self, END_UNREGISTER);
}

TEST_F(uffd, ends_with_munmap)
{
	ends_with(_metadata, self, END_MUNMAP);
}

/* Also for a fault whose object was replaced while it waited. */
TEST_F(uffd, ends_with_munmap_replaced)
{
	ends_with(_metadata, self, END_REPLACED);
}

/*
 * The registering process exits while we hold its userfaultfd (got with
 * pidfd_getfd()): its attachment is gone, so is the registration; our
 * faults are ordinary, the userfaultfd hears of none, and closing it
 * after its process is gone leaves nothing behind.
 */
struct registrar {
	int fd;
	int sync[2];	/* child -> parent: its userfaultfd number */
	int go[2];	/* parent -> child: exit now */
};

static int registrar_child(void *arg)
{
	struct registrar *r = arg;
	char *q = mshare_attach(r->fd, NULL, RW, 0);
	int ufd = uffd_open(0);
	char c;

	if (FAILED(q != MAP_FAILED && ufd >= 0))
		return 1;
	if (FAILED(!uffd_register(ufd, q, OBJ, UFFDIO_REGISTER_MODE_MISSING)))
		return 1;
	if (FAILED(write(r->sync[1], &ufd, sizeof(ufd)) == sizeof(ufd)))
		return 1;
	return read(r->go[0], &c, 1) == 1 ? 0 : 2;
}

TEST_F(uffd, registrar_exits)
{
	struct registrar r = { .fd = self->fd };
	struct uffd_msg msg;
	int pidfd, cfd, ufd;
	pid_t pid;

	ASSERT_OK(pipe(r.sync));
	ASSERT_OK(pipe(r.go));
	pid = fork_run(registrar_child, &r);
	ASSERT_LT(0, pid);
	ASSERT_EQ((ssize_t)sizeof(cfd), read(r.sync[0], &cfd, sizeof(cfd)));
	pidfd = syscall(__NR_pidfd_open, pid, 0);
	ASSERT_LE(0, pidfd);
	ufd = syscall(__NR_pidfd_getfd, pidfd, cfd, 0);
	ASSERT_LE(0, ufd) TH_LOG("pidfd_getfd: %s", strerror(errno));
	ASSERT_EQ(1, write(r.go[1], "x", 1));
	ASSERT_EQ(0, wait_exit(pid));

	/* A fault of ours would hang if the registration were still on. */
	alarm(20);
	EXPECT_EQ(0, self->p[51 * PG]);
	alarm(0);
	EXPECT_EQ(-ETIME, uffd_next(ufd, &msg, QUIET_MS));
	close(ufd);
	close(pidfd);
}

/*
 * Another sharer's MADV_DONTNEED of a registered range is a remove event
 * at our addresses; it waits until we read it.
 */
struct dropper {
	int fd;
	int done;	/* write end */
};

static int dropper_child(void *arg)
{
	struct dropper *d = arg;
	char *q = mshare_attach(d->fd, NULL, RW, 0);

	if (FAILED(q != MAP_FAILED))
		return 1;
	if (FAILED(!madvise(q + 4 * PG, 2 * PG, MADV_DONTNEED)))
		return 1;
	return write(d->done, "d", 1) == 1 ? 0 : 2;
}

TEST_F(uffd, remove_event_other_sharer)
{
	struct dropper d = { .fd = self->fd };
	struct uffd_msg msg;
	int pipefd[2], ufd;
	pid_t pid;

	memset(self->p, 'z', OBJ);
	ufd = registered(self->p, UFFD_FEATURE_EVENT_REMOVE,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_OK(pipe(pipefd));
	d.done = pipefd[1];
	pid = fork_run(dropper_child, &d);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	ASSERT_EQ(UFFD_EVENT_REMOVE, msg.event);
	EXPECT_EQ((uintptr_t)self->p + 4 * PG, msg.arg.remove.start);
	EXPECT_EQ((uintptr_t)self->p + 6 * PG, msg.arg.remove.end);
	EXPECT_EQ('d', read_byte(pipefd[0], WAIT_MS));
	EXPECT_EQ(0, wait_exit(pid));
	/* MADV_DONTNEED of a shared object drops mappings, not data. */
	EXPECT_EQ('z', self->m[4 * PG]);
	close(pipefd[0]);
	close(pipefd[1]);
	close(ufd);
}

/* munmap() of our attachment, in a thread: it waits for its event. */
static void *unmap_attachment(void *arg)
{
	return (void *)(long)munmap(arg, A);
}

/*
 * munmap() of the attachment a userfaultfd registered through is an unmap
 * event of the attachment's range, as for a registered mapping, and ends
 * the registration.
 */
TEST_F(uffd, unmap_event)
{
	struct uffd_msg msg;
	pthread_t th;
	void *ret;
	int ufd;

	ufd = registered(self->p, UFFD_FEATURE_EVENT_UNMAP,
			 UFFDIO_REGISTER_MODE_MISSING);
	ASSERT_LE(0, ufd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, pthread_create(&th, NULL, unmap_attachment, self->p));
	ASSERT_EQ(0, uffd_next(ufd, &msg, WAIT_MS));
	ASSERT_EQ(UFFD_EVENT_UNMAP, msg.event);
	EXPECT_EQ((uintptr_t)self->p, msg.arg.remove.start);
	EXPECT_EQ((uintptr_t)self->p + A, msg.arg.remove.end);
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(0L, (long)ret);
	/* Nothing is registered any more: a sharer's fault is ordinary. */
	EXPECT_EQ(0, self->m[71 * PG]);
	EXPECT_EQ(-ETIME, uffd_next(ufd, &msg, 0));
	close(ufd);
}

__attribute__((constructor)) static void setup_globals(void)
{
	A = read_align();
}

TEST_HARNESS_MAIN
