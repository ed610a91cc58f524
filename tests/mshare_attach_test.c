// SPDX-License-Identifier: GPL-2.0
/*
 * The memory side of msharefs regions, as user space sees it: placing
 * objects with MSHAREFS_CREATE_MAPPING and removing them with
 * MSHAREFS_UNMAP (every refused input, with its errno, and proof that a
 * refused call changed nothing), attaching regions with mmap() and what an
 * attachment refuses (partial munmap, mremap) or gives a region-wide
 * meaning (mprotect, madvise: see mshare_ops_test for the details), the
 * backings an object can have (anonymous, memfd, tmpfs, ext4, hugetlbfs,
 * anonymous huge pages), permissions (read-only attachments and objects,
 * PROT_NONE, holes, other users), and lifetime (fork, exit, exec, a creator
 * that exits, unlink while attached, memory freed at the end).
 *
 * Needs root, a kernel with CONFIG_MSHARE=y and msharefs mounted on
 * /sys/fs/mshare. The backing tests also use /tmp (tmpfs), /mnt/disk (a
 * disk file system) and /dev/hugepages (hugetlbfs with free 2 MiB pages).
 *
 * Build: make -C tests, or
 *   gcc -static -O2 -Wall -Wextra -I<linux>/tools/testing/selftests \
 *       -I<uapi headers> -o mshare_attach_test mshare_attach_test.c
 * Run:   ./mshare_attach_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include "mshare_test.h"

#include <stddef.h>

#define EXPECTED_ALIGN	549755813888UL
#define HUGE_DIR	"/dev/hugepages"
#define EXEC_ENV	"MSHARE_ATTACH_TEST_EXEC_CHECK"

#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)

#define ANON_HUGE	(ANON | MAP_HUGETLB)

/* What run_child() returns for a child killed by SIGSEGV. */
#define SEGV		(128 + SIGSEGV)

/* The alignment (and size of every region here), from mshare_info. */
static unsigned long A;

/* @p must be a multiple of the alignment. */
#define ASSERT_ALIGNED(p) do {						\
	unsigned long _a = (unsigned long)(p);				\
									\
	ASSERT_EQ(0UL, _a % A) TH_LOG("%#lx is not aligned", _a);	\
} while (0)

/* ---- helpers ---------------------------------------------------------- */

static int create_anon(int fd, __u64 roff, __u64 size, __u32 prot)
{
	return create_mapping(fd, roff, size, 0, prot, ANON, -1);
}

/*
 * 0 if no object lies anywhere in the region of @fd, else the errno of
 * placing one over all of it (EEXIST when something is there). This is the
 * proof that a refused call placed nothing.
 */
static int region_empty(int fd)
{
	if (create_mapping(fd, 0, A, 0, RW, ANON | MAP_NORESERVE, -1))
		return errno;
	if (mshare_unmap(fd, 0, A))
		return errno;
	return 0;
}

#define ASSERT_EMPTY(fd) ASSERT_EQ(0, region_empty(fd))

/* A refused MSHAREFS_CREATE_MAPPING: errno @err, and nothing placed. */
#define ASSERT_REFUSED(fd, err, roff, size, off, prot, flags, backing) do { \
	int _fd = (fd);							\
									\
	ASSERT_FAILS(err, create_mapping(_fd, roff, size, off, prot,	\
					 flags, backing));		\
	ASSERT_EMPTY(_fd);						\
} while (0)

/*
 * A free aligned range of the address space at or above @from, found by
 * reserving it with MAP_FIXED_NOREPLACE; 0 if there is none.
 */
static unsigned long free_aligned(unsigned long from)
{
	unsigned long addr;

	for (addr = from; addr && addr <= USER_VA_END - 2 * A; addr += A) {
		void *p = mmap((void *)addr, A, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			       MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED)
			continue;
		munmap(p, A);
		if ((unsigned long)p == addr)
			return addr;
	}
	return 0;
}

struct touch {
	char *p;
	char val;
};

static int do_read(void *arg)
{
	struct touch *t = arg;

	return *t->p == t->val ? 0 : 1;
}

static int do_write(void *arg)
{
	struct touch *t = arg;

	*t->p = t->val;
	return *t->p == t->val ? 0 : 1;
}

/* Read *@p in a child: 0 if it holds @val, 1 if not, SEGV if it faults. */
static int child_read(void *p, char val)
{
	struct touch t = { p, val };

	return run_child(do_read, &t);
}

/* Write @val to *@p in a child: 0, or SEGV if it faults. */
static int child_write(void *p, char val)
{
	struct touch t = { p, val };

	return run_child(do_write, &t);
}

static int memfd_with(size_t size, int seed)
{
	int fd = memfd_sized("mshare_attach_test", 0, size);

	if (fd < 0)
		return -1;
	if (seed >= 0) {
		char *p = mmap(NULL, size, RW, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			close(fd);
			return -1;
		}
		fill(p, size, seed);
		munmap(p, size);
	}
	return fd;
}

/* Reopen @fd with @flags through /proc/self/fd. */
static int reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags);
}

/* Create a new file in @dir with @flags and unlink it at once. */
static int anon_file(const char *dir, int flags)
{
	static int seq;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/ha-%d-%d", dir, getpid(), seq++);
	fd = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* A hugetlbfs file of @size bytes; -1 if there is none. */
static int huge_file(size_t size)
{
	int fd = anon_file(HUGE_DIR, O_RDWR);

	if (fd >= 0 && ftruncate(fd, size)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 1 if a line of /proc/self/maps contains @s, 0 if none does, -1. */
static int maps_contain(const char *s)
{
	char line[512];
	int found = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = !!strstr(line, s);
	fclose(f);
	return found;
}

/*
 * The exec test re-executes this program with EXEC_ENV set to a region
 * name; the new image reports whether it still maps that region, before
 * the harness starts: 0 no, 10 yes, 11 cannot tell.
 */
__attribute__((constructor)) static void setup_globals(void)
{
	const char *name = getenv(EXEC_ENV);

	if (name) {
		int found = maps_contain(name);

		_exit(found == 0 ? 0 : found == 1 ? 10 : 11);
	}
	A = read_align();
}

/* ---- fixtures --------------------------------------------------------- */

/*
 * Every name a test creates in /sys/fs/mshare starts with "ha-PID-", PID
 * being the test process's, so that the fixture's teardown can remove
 * whatever a failed test left behind.
 */
struct region {
	char path[64];
	const char *name;	/* the last component of @path */
	int fd;			/* O_RDWR */
	pid_t pid;		/* of the test process */
};

/* Create a uniquely named region in /sys/fs/mshare; its fd or -1. */
static int region_new(struct region *r, mode_t mode)
{
	static int seq;

	snprintf(r->path, sizeof(r->path), MSHARE_DIR "/ha-%d-%d",
		 getpid(), seq++);
	r->name = r->path + strlen(MSHARE_DIR) + 1;
	r->fd = mshare_region_create(AT_FDCWD, r->path, mode, 0);
	return r->fd;
}

static void region_del(struct region *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->path[0])
		unlink(r->path);
}

/*
 * Remove every name of test process @pid, regions and directories. The
 * fixtures call it from FIXTURE_TEARDOWN_PARENT, which runs even when a
 * failed ASSERT or a signal ended the test.
 */
static void region_cleanup(pid_t pid)
{
	char prefix[32];
	struct dirent *d;
	DIR *dir;
	int dfd;

	if (!pid)
		return;
	snprintf(prefix, sizeof(prefix), "ha-%d-", pid);
	dir = opendir(MSHARE_DIR);
	if (!dir)
		return;
	dfd = dirfd(dir);
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, prefix, strlen(prefix)) &&
		    unlinkat(dfd, d->d_name, 0))
			unlinkat(dfd, d->d_name, AT_REMOVEDIR);
	closedir(dir);
}

static void region_setup(struct __test_metadata *_metadata,
			 struct region *r, bool sized)
{
	r->fd = -1;
	r->pid = getpid();
	if (A == 0)
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	ASSERT_LE(0, region_new(r, 0600))
		TH_LOG("creating %s: %s", r->path, strerror(errno));
	if (sized)
		ASSERT_OK(ftruncate(r->fd, A));
}

/* ---- MSHAREFS_CREATE_MAPPING: refused inputs -------------------------- */

/* A region not sized yet. */
FIXTURE(unsized) {
	struct region r;
};

FIXTURE_SETUP(unsized)
{
	region_setup(_metadata, &self->r, false);
}

FIXTURE_TEARDOWN_PARENT(unsized)
{
	region_cleanup(self->r.pid);
}

/* Each of the others holds a region sized to A. */
FIXTURE(create) {
	struct region r;
};

FIXTURE_SETUP(create)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(create)
{
	region_cleanup(self->r.pid);
}

TEST_F(unsized, create)
{
	int fd = self->r.fd;

	ASSERT_FAILS(EINVAL, create_anon(fd, 0, PG, RW));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, PG));
	/* Nothing was placed: once sized, the region is empty. */
	ASSERT_OK(ftruncate(fd, A));
	ASSERT_EMPTY(fd);
}

TEST_F(create, readonly_region_fd)
{
	int rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, rfd);
	ASSERT_FAILS(EBADF, create_anon(rfd, 0, PG, RW));
	ASSERT_FAILS(EBADF, create_anon(rfd, 0, PG, PROT_READ));
	ASSERT_EMPTY(self->r.fd);
	close(rfd);
}

TEST_F(create, map_private)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW,
		       MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1);
}

TEST_F(create, missing_map_fixed)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW,
		       MAP_SHARED | MAP_ANONYMOUS, -1);
}

TEST_F(create, missing_map_shared)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, MAP_FIXED | MAP_ANONYMOUS, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, MAP_ANONYMOUS, -1);
}

TEST_F(create, map_shared_validate)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW,
		       MAP_SHARED_VALIDATE | MAP_FIXED | MAP_ANONYMOUS, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW,
		       MAP_DROPPABLE | MAP_FIXED | MAP_ANONYMOUS, -1);
}

TEST_F(create, forbidden_flags)
{
	static const struct {
		const char *name;
		unsigned int flag;
	} bad[] = {
		{ "MAP_32BIT", MAP_32BIT },
		{ "MAP_GROWSDOWN", MAP_GROWSDOWN },
		{ "MAP_DENYWRITE", MAP_DENYWRITE },
		{ "MAP_EXECUTABLE", MAP_EXECUTABLE },
		{ "MAP_LOCKED", MAP_LOCKED },
		{ "MAP_POPULATE", MAP_POPULATE },
		{ "MAP_NONBLOCK", MAP_NONBLOCK },
		{ "MAP_STACK", MAP_STACK },
		{ "MAP_SYNC", MAP_SYNC },
		{ "MAP_FIXED_NOREPLACE", MAP_FIXED_NOREPLACE },
		{ "0x80", 0x80 },
		{ "0x200000", 0x200000 },
		{ "0x400000", 0x400000 },
		{ "0x800000", 0x800000 },
		{ "0x1000000", 0x1000000 },
		{ "0x2000000", 0x2000000 },
	};
	int fd = self->r.fd, mfd;
	size_t i;

	mfd = memfd_with(PG, -1);
	ASSERT_LE(0, mfd);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_FAILS_MSG(EINVAL,
				 create_mapping(fd, 0, PG, 0, RW,
						ANON | bad[i].flag, -1),
				 " (%s)", bad[i].name);
		ASSERT_EMPTY(fd);
		ASSERT_FAILS_MSG(EINVAL,
				 create_mapping(fd, 0, PG, 0, RW,
						FILEMAP | bad[i].flag, mfd),
				 " (%s)", bad[i].name);
		ASSERT_EMPTY(fd);
	}
	/* The allowed extra flags are accepted. */
	ASSERT_OK(create_mapping(fd, 0, PG, 0, RW, ANON | MAP_NORESERVE, -1));
	ASSERT_OK(mshare_unmap(fd, 0, PG));
	ASSERT_OK(create_mapping(fd, 0, PG, 0, RW, FILEMAP | MAP_NORESERVE,
				 mfd));
	ASSERT_OK(mshare_unmap(fd, 0, PG));
	close(mfd);
}

TEST_F(create, bad_prot)
{
	static const unsigned int bad[] = {
		PROT_EXEC, PROT_READ | PROT_EXEC, RW | PROT_EXEC,
		0x8, 0x10, 0x100, PROT_GROWSDOWN, PROT_GROWSUP,
		RW | 0x80000000U,
	};
	int fd = self->r.fd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_FAILS_MSG(EINVAL,
				 create_mapping(fd, 0, PG, 0, bad[i], ANON, -1),
				 " (prot %#x)", bad[i]);
		ASSERT_EMPTY(fd);
	}
	/* PROT_NONE is allowed. */
	ASSERT_OK(create_anon(fd, 0, PG, PROT_NONE));
	ASSERT_OK(mshare_unmap(fd, 0, PG));
}

TEST_F(create, misaligned)
{
	int fd = self->r.fd, mfd;

	ASSERT_REFUSED(fd, EINVAL, 1, PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 2048, PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, A / 2 + 512, PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, 1, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG - 1, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG + 1, 0, RW, ANON, -1);

	mfd = memfd_with(4 * PG, -1);
	ASSERT_LE(0, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 1, RW, FILEMAP, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 2048, RW, FILEMAP, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, PG + 100, RW, FILEMAP, mfd);
	ASSERT_REFUSED(fd, EINVAL, PG + 8, PG, PG, RW, FILEMAP, mfd);
	close(mfd);
}

TEST_F(create, size_zero)
{
	int fd = self->r.fd, mfd;

	ASSERT_REFUSED(fd, EINVAL, 0, 0, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, A / 2, 0, 0, RW, ANON, -1);
	mfd = memfd_with(PG, -1);
	ASSERT_LE(0, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, 0, 0, RW, FILEMAP, mfd);
	close(mfd);
}

TEST_F(create, past_end)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, A, PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, A - PG, 2 * PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, A + PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, 2 * A, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 2 * A, PG, 0, RW, ANON, -1);
	/* The last page itself is fine. */
	ASSERT_OK(create_anon(fd, A - PG, PG, RW));
	ASSERT_OK(mshare_unmap(fd, A - PG, PG));
}

TEST_F(create, overflow)
{
	const __u64 huge = ~0ULL & ~(PG - 1);
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, A - PG, huge, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, huge, PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, huge, 2 * PG, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, PG, huge, 0, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 2 * PG, huge, 0, RW, ANON, -1);
}

TEST_F(create, anon_with_fd)
{
	int fd = self->r.fd, mfd;

	mfd = memfd_with(PG, -1);
	ASSERT_LE(0, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, ANON, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, ANON, 0);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, ANON, fd);
	close(mfd);
}

TEST_F(create, anon_with_offset)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, 0, PG, PG, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, A, RW, ANON, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 1, RW, ANON, -1);
}

TEST_F(create, no_fd_without_anon)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EBADF, 0, PG, 0, RW, FILEMAP, -1);
	ASSERT_REFUSED(fd, EBADF, 0, PG, 0, PROT_READ, FILEMAP, -1);
}

TEST_F(create, closed_fd)
{
	int fd = self->r.fd, closed;

	closed = dup(fd);
	ASSERT_LE(0, closed);
	ASSERT_OK(close(closed));
	ASSERT_REFUSED(fd, EBADF, 0, PG, 0, RW, FILEMAP, closed);
	ASSERT_REFUSED(fd, EBADF, 0, PG, 0, RW, FILEMAP, INT_MAX);
}

TEST_F(create, msharefs_backing)
{
	int fd = self->r.fd, ofd;
	struct region other;

	ASSERT_LE(0, region_new(&other, 0600));
	ofd = other.fd;
	ASSERT_OK(ftruncate(ofd, A));
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, FILEMAP, ofd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, PROT_READ, FILEMAP, ofd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, FILEMAP, fd);
	ASSERT_EMPTY(ofd);
	region_del(&other);

	/* Nor is the mount's mshare_info, whatever the protection. */
	ofd = open(INFO_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ofd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, PROT_READ, FILEMAP, ofd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, PROT_NONE, FILEMAP, ofd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, FILEMAP, ofd);
	close(ofd);
}

TEST_F(create, directory_backing)
{
	char dir[sizeof(self->r.path) + 8];
	int fd = self->r.fd, dfd;

	dfd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, dfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, PROT_READ, FILEMAP, dfd);
	close(dfd);

	/* A character device is not a regular file either. */
	dfd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, FILEMAP, dfd);
	close(dfd);

	/* A directory of msharefs itself is no region either. */
	snprintf(dir, sizeof(dir), "%s.d", self->r.path);
	ASSERT_OK(mkdir(dir, 0700));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, dfd);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, PROT_READ, FILEMAP, dfd);
	close(dfd);
	ASSERT_OK(rmdir(dir));
}

TEST_F(create, readonly_memfd_write)
{
	int fd = self->r.fd, mfd, rfd;
	char *p;

	mfd = memfd_with(2 * PG, 5);
	ASSERT_LE(0, mfd);
	rfd = reopen(mfd, O_RDONLY);
	ASSERT_LE(0, rfd);
	ASSERT_REFUSED(fd, EACCES, 0, PG, 0, RW, FILEMAP, rfd);
	ASSERT_REFUSED(fd, EACCES, 0, PG, 0, PROT_WRITE, FILEMAP, rfd);

	/* PROT_READ is what the open mode allows: that works. */
	ASSERT_OK(create_mapping(fd, 0, 2 * PG, 0, PROT_READ, FILEMAP, rfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, PROT_READ, 0));
	ASSERT_PATTERN(p, 2 * PG, 5);
	ASSERT_OK(munmap(p, A));
	close(rfd);
	close(mfd);
}

TEST_F(create, wronly_file_read)
{
	int fd = self->r.fd, wfd;

	wfd = anon_file("/tmp", O_WRONLY);
	ASSERT_LE(0, wfd);
	ASSERT_OK(ftruncate(wfd, PG));
	ASSERT_REFUSED(fd, EACCES, 0, PG, 0, PROT_READ, FILEMAP, wfd);
	ASSERT_REFUSED(fd, EACCES, 0, PG, 0, RW, FILEMAP, wfd);
	close(wfd);
}

TEST_F(create, hugetlb_non_hugetlbfs)
{
	int fd = self->r.fd, mfd, tfd;

	mfd = memfd_with(HPAGE, -1);
	ASSERT_LE(0, mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, HPAGE, 0, RW, FILEMAP | MAP_HUGETLB,
		       mfd);
	ASSERT_REFUSED(fd, EINVAL, 0, HPAGE, 0, RW,
		       FILEMAP | MAP_HUGETLB | MAP_HUGE_2MB, mfd);
	close(mfd);

	tfd = anon_file("/tmp", O_RDWR);
	ASSERT_LE(0, tfd);
	ASSERT_OK(ftruncate(tfd, HPAGE));
	ASSERT_REFUSED(fd, EINVAL, 0, HPAGE, 0, RW, FILEMAP | MAP_HUGETLB,
		       tfd);
	close(tfd);
}

TEST_F(create, hugetlb_anon_bad_size)
{
	int fd = self->r.fd;

	ASSERT_REFUSED(fd, EINVAL, 0, MIB, 0, RW, ANON_HUGE, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, PG, 0, RW, ANON_HUGE, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, HPAGE + PG, 0, RW, ANON_HUGE, -1);
	ASSERT_REFUSED(fd, EINVAL, 0, 3 * MIB, 0, RW,
		       ANON_HUGE | MAP_HUGE_2MB, -1);
}

TEST_F(create, hugetlbfs_misaligned_offset)
{
	int fd = self->r.fd, hfd;

	hfd = huge_file(HPAGE);
	if (hfd < 0)
		SKIP(return, "no hugetlbfs on " HUGE_DIR);
	ASSERT_REFUSED(fd, EINVAL, PG, HPAGE, 0, RW, FILEMAP, hfd);
	ASSERT_REFUSED(fd, EINVAL, MIB, HPAGE, 0, RW, FILEMAP, hfd);
	ASSERT_REFUSED(fd, EINVAL, HPAGE + PG, HPAGE, 0, RW,
		       FILEMAP | MAP_HUGETLB, hfd);
	/* Aligned, it works. */
	ASSERT_OK(create_mapping(fd, HPAGE, HPAGE, 0, RW, FILEMAP, hfd));
	ASSERT_OK(mshare_unmap(fd, HPAGE, HPAGE));
	close(hfd);
}

TEST_F(create, overlap)
{
	const unsigned long at = 2 * MIB, len = 4 * PG;
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, at, len, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p + at, len, 7);

	ASSERT_FAILS(EEXIST, create_anon(fd, at, len, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, at, PG, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, at + PG, PG, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, at + len - PG, PG, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, at - PG, 2 * PG, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, at + len - PG, 2 * PG, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, 0, 4 * MIB, RW));
	ASSERT_FAILS(EEXIST, create_anon(fd, 0, A, RW));
	ASSERT_FAILS(EEXIST, create_mapping(fd, at, HPAGE, 0, PROT_READ,
					    ANON_HUGE, -1));

	/* Nothing changed: the object and its data are intact... */
	ASSERT_PATTERN(p + at, len, 7);
	/* ... and no partial object was placed next to it. */
	ASSERT_EQ(SEGV, child_read(p + at - PG, 0));
	ASSERT_EQ(SEGV, child_read(p + at + len, 0));
	ASSERT_OK(create_anon(fd, at - PG, PG, RW));
	ASSERT_OK(create_anon(fd, at + len, PG, RW));
	ASSERT_EQ(0, child_read(p + at - PG, 0));
	ASSERT_EQ(0, child_read(p + at + len, 0));
	ASSERT_PATTERN(p + at, len, 7);

	ASSERT_OK(mshare_unmap(fd, at - PG, len + 2 * PG));
	ASSERT_EMPTY(fd);
	ASSERT_OK(munmap(p, A));
}

TEST_F(create, bad_pointer)
{
	struct mshare_create *mc;
	int fd = self->r.fd;
	char *page;

	ASSERT_FAILS(EFAULT, ioctl(fd, MSHAREFS_CREATE_MAPPING, NULL));
	ASSERT_FAILS(EFAULT, ioctl(fd, MSHAREFS_CREATE_MAPPING, 8UL));
	ASSERT_FAILS(EFAULT, ioctl(fd, MSHAREFS_UNMAP, NULL));

	/* An argument that ends in an inaccessible page. */
	ASSERT_MAPS(page, mmap(NULL, 2 * PG, RW,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	ASSERT_OK(mprotect(page + PG, PG, PROT_NONE));
	mc = (void *)(page + PG - 8);
	mc->region_offset = 0;
	ASSERT_FAILS(EFAULT, ioctl(fd, MSHAREFS_CREATE_MAPPING, mc));
	ASSERT_FAILS(EFAULT, ioctl(fd, MSHAREFS_CREATE_MAPPING, page + PG));
	ASSERT_FAILS(EFAULT, ioctl(fd, MSHAREFS_UNMAP, page + PG - 8));
	munmap(page, 2 * PG);
	ASSERT_EMPTY(fd);
}

/*
 * struct mshare_create keeps the size, and so the ioctl number, of the
 * layout whose last 4 bytes were padding; they are now reserved, and any
 * byte of them set refuses the request whatever the rest says.
 */
TEST_F(create, reserved_must_be_zero)
{
	static const unsigned char vals[] = { 0x01, 0x80, 0xff };
	struct mshare_create mc;
	int fd = self->r.fd, mfd, i, v;
	unsigned char *b;

	ASSERT_EQ(40, (int)sizeof(mc));
	ASSERT_EQ(32, (int)offsetof(struct mshare_create, fd));
	ASSERT_EQ(36, (int)offsetof(struct mshare_create, reserved));
	ASSERT_EQ(0x40287800UL, (unsigned long)MSHAREFS_CREATE_MAPPING);

	mfd = memfd_with(PG, -1);
	ASSERT_LE(0, mfd);
	for (i = 0; i < 4; i++) {
		for (v = 0; v < (int)sizeof(vals); v++) {
			/* An anonymous object, then one of a file. */
			memset(&mc, 0, sizeof(mc));
			mc.size = PG;
			mc.prot = RW;
			mc.flags = ANON;
			mc.fd = -1;
			b = (unsigned char *)&mc.reserved;
			b[i] = vals[v];
			ASSERT_FAILS_MSG(EINVAL,
					 ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc),
					 " (byte %d = %#x)", i, vals[v]);
			ASSERT_EMPTY(fd);
			mc.flags = FILEMAP;
			mc.fd = mfd;
			ASSERT_FAILS_MSG(EINVAL,
					 ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc),
					 " (byte %d = %#x, file)", i, vals[v]);
			ASSERT_EMPTY(fd);
		}
	}
	/* The same request with the field zero is taken. */
	memset(&mc, 0, sizeof(mc));
	mc.size = PG;
	mc.prot = RW;
	mc.flags = FILEMAP;
	mc.fd = mfd;
	ASSERT_OK(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc));
	ASSERT_OK(mshare_unmap(fd, 0, PG));
	close(mfd);
}

TEST_F(create, unknown_ioctl)
{
	int fd = self->r.fd, rfd;
	struct mshare_create mc = {
		.size = PG, .prot = RW, .flags = ANON, .fd = -1,
	};

	ASSERT_FAILS(ENOTTY, ioctl(fd, _IOW('x', 2, struct mshare_create),
				   &mc));
	ASSERT_FAILS(ENOTTY, ioctl(fd, _IOR('x', 0, struct mshare_create),
				   &mc));
	ASSERT_FAILS(ENOTTY, ioctl(fd, _IO('x', 0), &mc));
	ASSERT_FAILS(ENOTTY, ioctl(fd, 0x1234, &mc));
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_FAILS(ENOTTY, ioctl(rfd, _IOW('x', 7, struct mshare_create),
				   &mc));
	close(rfd);
	ASSERT_EMPTY(fd);
}

/* ---- MSHAREFS_UNMAP ---------------------------------------------------- */

FIXTURE(unmap) {
	struct region r;
};

FIXTURE_SETUP(unmap)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(unmap)
{
	region_cleanup(self->r.pid);
}

TEST_F(unmap, readonly_fd)
{
	int fd = self->r.fd, rfd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 2 * PG, 3);
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_FAILS(EBADF, mshare_unmap(rfd, 0, 2 * PG));
	ASSERT_FAILS(EBADF, mshare_unmap(rfd, 0, A));
	close(rfd);
	/* Still there, still the same data. */
	ASSERT_PATTERN(p, 2 * PG, 3);
	ASSERT_FAILS(EEXIST, create_anon(fd, 0, PG, RW));
	ASSERT_OK(munmap(p, A));
}

TEST_F(unmap, bad_ranges)
{
	const __u64 huge = ~0ULL & ~(PG - 1);
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_OK(create_anon(fd, A - PG, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 2 * PG, 4);
	fill(p + A - PG, PG, 5);

	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 1, PG));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 2048, PG));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, 1));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, PG + 1));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, 2 * PG - 1));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, 0));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, PG, 0));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, A, PG));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, A - PG, 2 * PG));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, A + PG));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, 0, 2 * A));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, A - PG, huge));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, PG, huge));
	ASSERT_FAILS(EINVAL, mshare_unmap(fd, huge, 2 * PG));

	ASSERT_PATTERN(p, 2 * PG, 4);
	ASSERT_PATTERN(p + A - PG, PG, 5);
	ASSERT_OK(munmap(p, A));
}

TEST_F(unmap, hole_succeeds)
{
	int fd = self->r.fd;
	char *p;

	/* In an empty region: a page, a range, all of it. */
	ASSERT_OK(mshare_unmap(fd, 0, PG));
	ASSERT_OK(mshare_unmap(fd, A / 2, MIB));
	ASSERT_OK(mshare_unmap(fd, 0, A));

	/* Next to an object, which stays. */
	ASSERT_OK(create_anon(fd, 4 * PG, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p + 4 * PG, 2 * PG, 6);
	ASSERT_OK(mshare_unmap(fd, 0, 4 * PG));
	ASSERT_OK(mshare_unmap(fd, 6 * PG, GIB));
	ASSERT_OK(mshare_unmap(fd, A - PG, PG));
	ASSERT_PATTERN(p + 4 * PG, 2 * PG, 6);
	ASSERT_OK(munmap(p, A));
}

TEST_F(unmap, attached_gets_sigsegv)
{
	const unsigned long at = 3 * GIB;
	int fd = self->r.fd;
	char *p, *q;

	ASSERT_OK(create_anon(fd, at, 3 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, PROT_READ, 0));
	fill(p + at, 3 * PG, 8);
	ASSERT_PATTERN(q + at, 3 * PG, 8);

	/* The middle page goes; its neighbours stay. */
	ASSERT_OK(mshare_unmap(fd, at + PG, PG));
	ASSERT_EQ(SEGV, child_read(p + at + PG, 0));
	ASSERT_EQ(SEGV, child_read(q + at + PG, 0));
	ASSERT_EQ(SEGV, child_write(p + at + PG, 1));
	ASSERT_PATTERN(p + at, PG, 8);
	ASSERT_PATTERN_FROM(q + at + 2 * PG, PG, 8, 2 * PG);

	/* Then the rest: the region is empty. */
	ASSERT_OK(mshare_unmap(fd, at, 3 * PG));
	ASSERT_EQ(SEGV, child_read(p + at, 0));
	ASSERT_EQ(SEGV, child_read(q + at + 2 * PG, 0));
	ASSERT_EMPTY(fd);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

TEST_F(unmap, recreate_visible)
{
	const unsigned long at = 5 * GIB + 8 * PG;
	int fd = self->r.fd, mfd;
	char *p;

	ASSERT_OK(create_anon(fd, at, 4 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p + at, 4 * PG, 9);

	/* The region's only object goes, and a new one takes its place. */
	ASSERT_OK(mshare_unmap(fd, at, 4 * PG));
	ASSERT_EQ(SEGV, child_read(p + at, 0));
	mfd = memfd_with(4 * PG, 10);
	ASSERT_LE(0, mfd);
	ASSERT_OK(create_mapping(fd, at, 4 * PG, 0, RW, FILEMAP, mfd));
	/* The attachment made before sees the new contents. */
	ASSERT_PATTERN(p + at, 4 * PG, 10);
	ASSERT_EQ(0, child_read(p + at + PG, pat(10, PG)));
	p[at] = 'n';
	ASSERT_EQ(0, child_read(p + at, 'n'));
	ASSERT_OK(munmap(p, A));
	close(mfd);

	/* Again with a fresh anonymous object: zeroes, not old data. */
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_OK(mshare_unmap(fd, at, 4 * PG));
	ASSERT_OK(create_anon(fd, at, 4 * PG, RW));
	ASSERT_EQ(0, child_read(p + at, 0));
	ASSERT_EQ(0, p[at + 3 * PG + 17]);
	ASSERT_OK(munmap(p, A));
}

/* ---- attach (mmap) ----------------------------------------------------- */

FIXTURE(attach) {
	struct region r;
};

FIXTURE_SETUP(attach)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(attach)
{
	region_cleanup(self->r.pid);
}

/* The region of @fd has never been attached: read(2) says start 0. */
#define ASSERT_NEVER_ATTACHED(fd) do {					\
	struct mshare_info _i;						\
									\
	ASSERT_OK(mshare_region_info(fd, &_i));					\
	ASSERT_EQ(0ULL, _i.start);					\
	ASSERT_EQ((__u64)A, _i.size);					\
} while (0)

TEST_F(unsized, attach)
{
	int fd = self->r.fd;

	ASSERT_FAILS(EINVAL, mmap(NULL, A, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, PG, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, 0, RW, MAP_SHARED, fd, 0));
	ASSERT_OK(ftruncate(fd, A));
	ASSERT_NEVER_ATTACHED(fd);
}

TEST_F(attach, wrong_length)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_FAILS(EINVAL, mmap(NULL, A - PG, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, PG, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, A / 2, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, A + PG, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, 2 * A, RW, MAP_SHARED, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, 0, RW, MAP_SHARED, fd, 0));
	ASSERT_NEVER_ATTACHED(fd);
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_OK(munmap(p, A));
}

TEST_F(attach, nonzero_offset)
{
	int fd = self->r.fd;

	ASSERT_FAILS(EINVAL, mmap(NULL, A, RW, MAP_SHARED, fd, PG));
	ASSERT_FAILS(EINVAL, mmap(NULL, A, RW, MAP_SHARED, fd, A));
	ASSERT_FAILS(EINVAL, mmap(NULL, A - PG, RW, MAP_SHARED, fd, PG));
	ASSERT_NEVER_ATTACHED(fd);
}

TEST_F(attach, map_private)
{
	int fd = self->r.fd;

	ASSERT_FAILS(EINVAL, mmap(NULL, A, PROT_READ, MAP_PRIVATE, fd, 0));
	ASSERT_FAILS(EINVAL, mmap(NULL, A, RW, MAP_PRIVATE | MAP_NORESERVE,
				  fd, 0));
	/* Not ENOMEM: a private mapping of a region is refused as such. */
	ASSERT_FAILS(EINVAL, mmap(NULL, A, RW, MAP_PRIVATE, fd, 0));
	ASSERT_NEVER_ATTACHED(fd);
}

TEST_F(attach, unaligned_fixed)
{
	int fd = self->r.fd;
	unsigned long addr;
	char *p;

	addr = free_aligned(4 * A);
	ASSERT_NE(0UL, addr);
	ASSERT_FAILS(EINVAL, mshare_attach(fd, (void *)(addr + PG), RW, MAP_FIXED));
	ASSERT_FAILS(EINVAL, mshare_attach(fd, (void *)(addr + 2 * MIB), RW, MAP_FIXED));
	ASSERT_FAILS(EINVAL, mshare_attach(fd, (void *)(addr + A / 2), RW, MAP_FIXED));
	ASSERT_FAILS(EINVAL, mshare_attach(fd, (void *)(addr + A / 2), RW,
					   MAP_FIXED_NOREPLACE));
	ASSERT_NEVER_ATTACHED(fd);
	/* Nothing was mapped there: the range is still free. */
	ASSERT_MAPS(p, mshare_attach(fd, (void *)addr, RW, MAP_FIXED_NOREPLACE));
	ASSERT_EQ(addr, (unsigned long)p);
	ASSERT_OK(munmap(p, A));
}

TEST_F(attach, readonly_fd_write)
{
	int rfd;
	char *p;

	ASSERT_OK(create_anon(self->r.fd, 0, PG, RW));
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_FAILS(EACCES, mshare_attach(rfd, NULL, RW, 0));
	ASSERT_FAILS(EACCES, mshare_attach(rfd, NULL, PROT_WRITE, 0));
	ASSERT_NEVER_ATTACHED(rfd);
	ASSERT_MAPS(p, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_EQ(0, p[0]);
	ASSERT_OK(munmap(p, A));
	close(rfd);
}

TEST_F(attach, exec)
{
	int fd = self->r.fd;

	ASSERT_FAILS(EPERM, mshare_attach(fd, NULL, PROT_READ | PROT_EXEC, 0));
	ASSERT_FAILS(EPERM, mshare_attach(fd, NULL, RW | PROT_EXEC, 0));
	ASSERT_FAILS(EPERM, mshare_attach(fd, NULL, PROT_EXEC, 0));
	ASSERT_NEVER_ATTACHED(fd);
}

TEST_F(attach, kernel_address_aligned)
{
	int fd = self->r.fd;
	char *p, *q;

	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_ALIGNED(p);
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_ALIGNED(q);
	ASSERT_NE((unsigned long)p, (unsigned long)q);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

TEST_F(attach, aligned_hint_honoured)
{
	int fd = self->r.fd;
	unsigned long hint;
	char *p;

	/* Low in the address space, where the kernel would not look. */
	hint = free_aligned(2 * A);
	ASSERT_NE(0UL, hint);
	ASSERT_MAPS(p, mshare_attach(fd, (void *)hint, RW, 0));
	ASSERT_EQ(hint, (unsigned long)p);
	ASSERT_OK(munmap(p, A));
}

TEST_F(attach, unaligned_hint_aligned)
{
	int fd = self->r.fd;
	unsigned long hint;
	char *p;

	hint = free_aligned(2 * A);
	ASSERT_NE(0UL, hint);
	ASSERT_MAPS(p, mshare_attach(fd, (void *)(hint + PG), RW, 0));
	ASSERT_ALIGNED(p);
	ASSERT_OK(munmap(p, A));
	ASSERT_MAPS(p, mshare_attach(fd, (void *)(hint + A / 2), RW, 0));
	ASSERT_ALIGNED(p);
	ASSERT_OK(munmap(p, A));
	ASSERT_MAPS(p, mshare_attach(fd, (void *)12345, RW, 0));
	ASSERT_ALIGNED(p);
	ASSERT_OK(munmap(p, A));
}

/*
 * A hint at or above TASK_SIZE (USER_VA_END) is no address this process
 * could use: it is ignored as an unaligned one is, and the kernel picks.
 */
TEST_F(attach, hint_above_task_size)
{
	const unsigned long hints[] = {
		USER_VA_END, USER_VA_END + A,
		1UL << 56, 0xffff800000000000UL, ~0UL & ~(A - 1),
	};
	int fd = self->r.fd;
	size_t i;
	char *p;

	ASSERT_OK(create_anon(fd, 0, PG, RW));
	for (i = 0; i < ARRAY_SIZE(hints); i++) {
		p = mshare_attach(fd, (void *)(hints[i]), RW, 0);
		ASSERT_NE(MAP_FAILED, p)
			TH_LOG("hint %#lx: %s", hints[i], strerror(errno));
		ASSERT_ALIGNED(p);
		ASSERT_GT(USER_VA_END, (unsigned long)p);
		p[i] = (char)(i + 1);
		ASSERT_EQ(0, child_read(p + i, (char)(i + 1)));
		ASSERT_OK(munmap(p, A));
	}
	/* With MAP_FIXED the address is taken at its word: no room there. */
	ASSERT_FAILS(ENOMEM, mshare_attach(fd, (void *)USER_VA_END, RW, MAP_FIXED));
}

TEST_F(attach, fixed_aligned)
{
	int fd = self->r.fd;
	unsigned long addr;
	char *p;

	ASSERT_OK(create_anon(fd, GIB, PG, RW));
	addr = free_aligned(3 * A);
	ASSERT_NE(0UL, addr);
	ASSERT_MAPS(p, mshare_attach(fd, (void *)addr, RW, MAP_FIXED));
	ASSERT_EQ(addr, (unsigned long)p);
	p[GIB] = 42;
	ASSERT_EQ(0, child_read(p + GIB, 42));
	ASSERT_OK(munmap(p, A));
}

TEST_F(attach, two_attachments)
{
	int fd = self->r.fd;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_OK(create_anon(fd, A - 2 * PG, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_NE((unsigned long)p, (unsigned long)q);

	fill(p, 4 * PG, 11);
	ASSERT_PATTERN(q, 4 * PG, 11);
	fill(q + A - 2 * PG, 2 * PG, 12);
	ASSERT_PATTERN(p + A - 2 * PG, 2 * PG, 12);
	q[PG] = 'q';
	ASSERT_EQ('q', p[PG]);
	ASSERT_EQ(0, child_read(p + PG, 'q'));
	ASSERT_EQ(0, child_write(q + 2 * PG, 'c'));
	ASSERT_EQ('c', p[2 * PG]);
	ASSERT_OK(munmap(q, A));
	ASSERT_EQ('c', p[2 * PG]);
	ASSERT_OK(munmap(p, A));
}

TEST_F(attach, info_start)
{
	unsigned long first, hint;
	struct mshare_info info;
	int fd = self->r.fd, rfd;
	char *p, *q;

	ASSERT_NEVER_ATTACHED(fd);
	first = free_aligned(2 * A);
	ASSERT_NE(0UL, first);
	ASSERT_MAPS(p, mshare_attach(fd, (void *)first, RW, 0));
	ASSERT_EQ(first, (unsigned long)p);
	ASSERT_OK(mshare_region_info(fd, &info));
	ASSERT_EQ((__u64)first, info.start);
	ASSERT_EQ((__u64)A, info.size);

	/* Later attaches elsewhere leave it alone... */
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_NE((unsigned long)p, (unsigned long)q);
	hint = free_aligned(first + A);
	ASSERT_NE(0UL, hint);
	ASSERT_MAPS(p, mshare_attach(fd, (void *)hint, PROT_READ, MAP_FIXED));
	ASSERT_OK(mshare_region_info(fd, &info));
	ASSERT_EQ((__u64)first, info.start);

	/* ... and so does detaching everything and attaching again. */
	ASSERT_OK(munmap(p, A));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap((void *)first, A));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_NE(first, (unsigned long)q);
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_OK(mshare_region_info(rfd, &info));
	ASSERT_EQ((__u64)first, info.start);
	close(rfd);
	ASSERT_OK(munmap(q, A));
}

TEST_F(attach, partial_munmap)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_OK(create_anon(fd, A - PG, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 2 * PG, 13);
	fill(p + A - PG, PG, 14);

	ASSERT_FAILS(EINVAL, munmap(p, PG));
	ASSERT_FAILS(EINVAL, munmap(p + PG, PG));
	ASSERT_FAILS(EINVAL, munmap(p + A / 2, A / 2));
	ASSERT_FAILS(EINVAL, munmap(p + A - PG, PG));
	ASSERT_FAILS(EINVAL, munmap(p, A - PG));
	ASSERT_FAILS(EINVAL, munmap(p - PG, 2 * PG));
	ASSERT_FAILS(EINVAL, munmap(p + A - PG, 2 * PG));

	/* The attachment is whole and works. */
	ASSERT_PATTERN(p, 2 * PG, 13);
	ASSERT_PATTERN(p + A - PG, PG, 14);
	p[PG] = 'w';
	ASSERT_EQ(0, child_read(p + PG, 'w'));
	ASSERT_EQ(1, maps_contain(self->r.name));

	/* All of it detaches. */
	ASSERT_OK(munmap(p, A));
	ASSERT_EQ(0, maps_contain(self->r.name));
	ASSERT_EQ(SEGV, child_read(p, 0));
}

/*
 * mprotect() of an attachment sets the protection of the objects in the
 * range, for every attachment and process (mshare_ops_test has the
 * details); the attachment itself stays as it was mapped.
 */
TEST_F(attach, mprotect)
{
	int fd = self->r.fd, rfd;
	char *p, *q, *r;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	fill(p, 2 * PG, 15);

	/* The second page read-only, for both attachments. */
	ASSERT_OK(mprotect(p + PG, PG, PROT_READ));
	ASSERT_EQ(SEGV, child_write(p + PG, 'm'));
	ASSERT_EQ(SEGV, child_write(q + PG + 1, 'm'));
	ASSERT_EQ(0, child_read(q + PG, pat(15, PG)));
	ASSERT_EQ(0, child_write(q, 'm'));
	ASSERT_EQ('m', p[0]);
	/* The first PROT_NONE, then all writable again from the other one. */
	ASSERT_OK(mprotect(q, PG, PROT_NONE));
	ASSERT_EQ(SEGV, child_read(p, 'm'));
	ASSERT_OK(mprotect(q, 2 * PG, RW));
	ASSERT_EQ(0, child_write(p + PG, 'n'));
	ASSERT_EQ('n', q[PG]);
	ASSERT_EQ('m', q[0]);

	/* Holes (the rest of the region): ENOMEM, as for unmapped memory. */
	ASSERT_FAILS(ENOMEM, mprotect(p + 2 * PG, PG, PROT_READ));
	ASSERT_FAILS(ENOMEM, mprotect(p, A, RW));
	ASSERT_EQ(1, maps_contain(self->r.name));

	/* A read-only attachment can neither write nor change anything. */
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_FAILS(EACCES, mprotect(r, A, RW));
	ASSERT_FAILS(EACCES, mprotect(r, PG, RW));
	ASSERT_FAILS(EACCES, mprotect(r, PG, PROT_NONE));
	ASSERT_EQ('n', r[PG]);
	ASSERT_EQ(SEGV, child_write(r + PG, 'x'));
	ASSERT_EQ(0, child_write(p + PG, 'o'));
	ASSERT_EQ('o', r[PG]);
	ASSERT_OK(munmap(r, A));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	close(rfd);
}

TEST_F(attach, mremap)
{
	int fd = self->r.fd;
	unsigned long to;
	char *p;

	ASSERT_OK(create_anon(fd, 0, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'r';
	to = free_aligned(2 * A);
	ASSERT_NE(0UL, to);

	ASSERT_FAILS(EINVAL, mremap(p, A, A / 2, 0));
	ASSERT_FAILS(EINVAL, mremap(p, A, PG, MREMAP_MAYMOVE));
	ASSERT_FAILS(EINVAL, mremap(p, A, 2 * A, MREMAP_MAYMOVE));
	ASSERT_FAILS(EINVAL, mremap(p, A, A, MREMAP_MAYMOVE | MREMAP_FIXED,
				    (void *)to));
	ASSERT_FAILS(EINVAL, mremap(p, A, A, MREMAP_MAYMOVE |
				    MREMAP_DONTUNMAP, (void *)to));
	ASSERT_FAILS(EINVAL, mremap(p, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED,
				    (void *)to));

	ASSERT_EQ('r', p[0]);
	ASSERT_EQ(0, child_write(p, 's'));
	ASSERT_EQ('s', p[0]);
	ASSERT_EQ(SEGV, child_read((void *)to, 0));
	ASSERT_OK(munmap(p, A));
}

/*
 * madvise() of an attachment advises the region's objects (details in
 * mshare_ops_test): the data of shared memory survives DONTNEED and the
 * like, MADV_REMOVE frees it for everyone, MADV_FREE (for private memory)
 * and advice for the attachment itself on a part of it are refused.
 */
TEST_F(attach, madvise)
{
	static const int advice[] = {
		MADV_DONTNEED, MADV_NORMAL, MADV_WILLNEED, MADV_COLD,
		MADV_PAGEOUT, MADV_DONTNEED_LOCKED, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE,
	};
	int fd = self->r.fd;
	size_t i;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	fill(p, 4 * PG, 16);

	for (i = 0; i < ARRAY_SIZE(advice); i++) {
		ASSERT_EQ(0, madvise(p, 4 * PG, advice[i]))
			TH_LOG("advice %d: %s", advice[i], strerror(errno));
		ASSERT_EQ(0, madvise(q + PG, PG, advice[i]))
			TH_LOG("advice %d, one page: %s", advice[i],
			       strerror(errno));
		ASSERT_PATTERN(q, 4 * PG, 16);
	}
	ASSERT_EQ(0, child_read(p + PG, pat(16, PG)));
	ASSERT_FAILS(ENOMEM, madvise(p, A, MADV_DONTNEED));
	ASSERT_FAILS(EINVAL, madvise(p, 4 * PG, MADV_FREE));
	ASSERT_FAILS(EINVAL, madvise(p, 4 * PG, MADV_DONTFORK));
	ASSERT_FAILS(EINVAL, madvise(p, PG, MADV_WIPEONFORK));
	ASSERT_PATTERN(p, 4 * PG, 16);

	/* MADV_REMOVE: zeroes for every attachment and process. */
	ASSERT_OK(madvise(q + PG, 2 * PG, MADV_REMOVE));
	ASSERT_EQ(0, child_read(p + PG, 0));
	ASSERT_EQ(0, p[3 * PG - 1]);
	ASSERT_PATTERN(p, PG, 16);
	ASSERT_PATTERN_FROM(q + 3 * PG, PG, 16, 3 * PG);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

/* ---- backings ---------------------------------------------------------- */

FIXTURE(backing) {
	struct region r;
};

FIXTURE_SETUP(backing)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(backing)
{
	region_cleanup(self->r.pid);
}

TEST_F(backing, anonymous)
{
	const unsigned long at = 7 * GIB;
	int fd = self->r.fd;
	long shmem;
	char *p;

	shmem = meminfo_exact_kb("Shmem");
	ASSERT_OK(create_anon(fd, at, MIB, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	/* New memory reads as zeroes. */
	ASSERT_EQ(0, p[at]);
	ASSERT_EQ(0, p[at + MIB - 1]);
	fill(p + at, MIB, 17);
	ASSERT_PATTERN(p + at, MIB, 17);
	ASSERT_EQ(0, child_read(p + at + 5 * PG, pat(17, 5 * PG)));
	/*
	 * It is shared memory (shmem), counted as such: exactly, with the
	 * per-CPU counter deltas folded in (without, a fast-kernel run saw
	 * 744 kB of the 1,024).
	 */
	ASSERT_LE(shmem + 768L, meminfo_exact_kb("Shmem"));
	ASSERT_EQ(SEGV, child_read(p + at + MIB, 0));
	ASSERT_EQ(SEGV, child_read(p + at - PG, 0));
	ASSERT_OK(munmap(p, A));
}

TEST_F(backing, memfd)
{
	const unsigned long at = GIB + 16 * PG;
	int fd = self->r.fd, mfd;
	char *p, buf[4];

	mfd = memfd_with(8 * PG, 18);
	ASSERT_LE(0, mfd);
	/* Pages 2..5 of the file. */
	ASSERT_OK(create_mapping(fd, at, 4 * PG, 2 * PG, RW, FILEMAP, mfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_PATTERN_FROM(p + at, 4 * PG, 18, 2 * PG);
	ASSERT_EQ(pat(18, 2 * PG), p[at]);
	ASSERT_EQ(pat(18, 5 * PG + 99), p[at + 3 * PG + 99]);
	p[at + PG] = 'M';
	ASSERT_EQ(1, pread(mfd, buf, 1, 3 * PG));
	ASSERT_EQ('M', buf[0]);
	ASSERT_EQ(1, pwrite(mfd, "F", 1, 4 * PG + 1));
	ASSERT_EQ('F', p[at + 2 * PG + 1]);
	ASSERT_EQ(SEGV, child_read(p + at + 4 * PG, 0));
	ASSERT_OK(munmap(p, A));
	close(mfd);
}

TEST_F(backing, tmpfs_file)
{
	const unsigned long at = 100 * GIB;
	int fd = self->r.fd, tfd;
	struct statfs sfs;
	char *p, buf[PG];

	ASSERT_OK(statfs("/tmp", &sfs));
	if (sfs.f_type != TMPFS_MAGIC)
		SKIP(return, "/tmp is not tmpfs");
	tfd = anon_file("/tmp", O_RDWR);
	ASSERT_LE(0, tfd);
	memset(buf, 't', sizeof(buf));
	ASSERT_EQ((ssize_t)PG, write(tfd, buf, PG));
	memset(buf, 'u', sizeof(buf));
	ASSERT_EQ((ssize_t)PG, write(tfd, buf, PG));

	ASSERT_OK(create_mapping(fd, at, PG, PG, RW, FILEMAP, tfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ('u', p[at]);
	ASSERT_EQ('u', p[at + PG - 1]);
	p[at + 10] = 'T';
	ASSERT_EQ(1, pread(tfd, buf, 1, PG + 10));
	ASSERT_EQ('T', buf[0]);
	ASSERT_EQ(1, pread(tfd, buf, 1, 10));
	ASSERT_EQ('t', buf[0]);
	ASSERT_OK(munmap(p, A));
	close(tfd);
}

TEST_F(backing, disk_file)
{
	const unsigned long at = 200 * GIB;
	int fd = self->r.fd, dfd, i;
	struct statfs sfs;
	char *p, buf[PG];

	if (statfs(DISK_DIR, &sfs) || sfs.f_type == TMPFS_MAGIC ||
	    sfs.f_type == RAMFS_MAGIC)
		SKIP(return, "no disk file system on " DISK_DIR);
	dfd = anon_file(DISK_DIR, O_RDWR);
	ASSERT_LE(0, dfd);
	/* Pages 'a', 'b', 'c', 'd'; the object maps 'b' and 'c'. */
	for (i = 0; i < 4; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		ASSERT_EQ((ssize_t)PG, write(dfd, buf, PG));
	}
	ASSERT_OK(fsync(dfd));

	ASSERT_OK(create_mapping(fd, at, 2 * PG, PG, RW, FILEMAP, dfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ('b', p[at]);
	ASSERT_EQ('b', p[at + PG - 1]);
	ASSERT_EQ('c', p[at + PG]);
	ASSERT_EQ('c', p[at + 2 * PG - 1]);
	ASSERT_EQ(SEGV, child_read(p + at + 2 * PG, 0));
	ASSERT_EQ(SEGV, child_read(p + at - PG, 0));

	memcpy(p + at + 100, "through", 7);
	ASSERT_EQ(0, child_write(p + at + PG + 7, 'X'));
	ASSERT_OK(msync(p + at, 2 * PG, MS_ASYNC));
	ASSERT_OK(munmap(p, A));
	ASSERT_OK(fsync(dfd));

	/* The data is the file's. */
	ASSERT_EQ((ssize_t)PG, pread(dfd, buf, PG, PG));
	ASSERT_EQ(0, memcmp(buf + 100, "through", 7));
	ASSERT_EQ('b', buf[99]);
	ASSERT_EQ('b', buf[107]);
	ASSERT_EQ((ssize_t)PG, pread(dfd, buf, PG, 2 * PG));
	ASSERT_EQ('X', buf[7]);
	ASSERT_EQ('c', buf[8]);
	ASSERT_EQ((ssize_t)PG, pread(dfd, buf, PG, 0));
	ASSERT_EQ('a', buf[100]);
	ASSERT_EQ((ssize_t)PG, pread(dfd, buf, PG, 3 * PG));
	ASSERT_EQ('d', buf[7]);
	close(dfd);
}

TEST_F(backing, hugetlbfs_file)
{
	const unsigned long at = 300 * GIB;
	int fd = self->r.fd, hfd;
	long free0, free1;
	char *p, *h;

	hfd = huge_file(HPAGE);
	free0 = meminfo_kb("HugePages_Free");
	if (hfd < 0 || free0 < 2)
		SKIP(return, "no free 2 MiB huge pages in " HUGE_DIR);
	ASSERT_OK(create_mapping(fd, at, HPAGE, 0, RW, FILEMAP, hfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p + at, HPAGE, 19);
	free1 = meminfo_kb("HugePages_Free");
	ASSERT_EQ(free0 - 1, free1);

	/* The file itself holds the data. */
	ASSERT_MAPS(h, mmap(NULL, HPAGE, RW, MAP_SHARED, hfd, 0));
	ASSERT_PATTERN(h, HPAGE, 19);
	h[HPAGE - 1] = 'H';
	ASSERT_EQ('H', p[at + HPAGE - 1]);
	ASSERT_EQ(0, child_read(p + at + MIB, pat(19, MIB)));
	ASSERT_EQ(SEGV, child_read(p + at + HPAGE, 0));
	ASSERT_OK(munmap(h, HPAGE));

	/* MAP_HUGETLB with a hugetlbfs file is fine too. */
	ASSERT_OK(mshare_unmap(fd, at, HPAGE));
	ASSERT_OK(create_mapping(fd, at + HPAGE, HPAGE, 0, PROT_READ,
				 FILEMAP | MAP_HUGETLB, hfd));
	ASSERT_EQ(SEGV, child_read(p + at, 0));
	ASSERT_EQ('H', p[at + 2 * HPAGE - 1]);
	ASSERT_OK(munmap(p, A));
	close(hfd);
}

TEST_F(backing, hugetlb_anonymous)
{
	const unsigned long at2 = 400 * GIB, at4 = 400 * GIB + 4 * MIB;
	int fd = self->r.fd;
	long free0;
	char *p;

	free0 = meminfo_kb("HugePages_Free");
	if (free0 < 3)
		SKIP(return, "fewer than 3 free 2 MiB huge pages");
	ASSERT_OK(create_mapping(fd, at2, 2 * MIB, 0, RW, ANON_HUGE, -1));
	ASSERT_OK(create_mapping(fd, at4, 4 * MIB, 0, RW,
				 ANON_HUGE | MAP_HUGE_2MB, -1));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(0, p[at2]);
	fill(p + at2, 2 * MIB, 20);
	fill(p + at4, 4 * MIB, 21);
	ASSERT_EQ(free0 - 3, meminfo_kb("HugePages_Free"));
	ASSERT_PATTERN(p + at2, 2 * MIB, 20);
	ASSERT_PATTERN(p + at4, 4 * MIB, 21);
	ASSERT_EQ(0, child_read(p + at4 + 3 * MIB, pat(21, 3 * MIB)));
	ASSERT_EQ(SEGV, child_read(p + at2 + 2 * MIB, 0));
	ASSERT_EQ(SEGV, child_read(p + at4 + 4 * MIB, 0));

	/* Unmapped, the huge pages go back to the pool. */
	ASSERT_OK(mshare_unmap(fd, at2, 8 * MIB));
	ASSERT_EQ(free0, meminfo_kb("HugePages_Free"));
	ASSERT_EQ(SEGV, child_read(p + at4, 0));
	ASSERT_OK(munmap(p, A));
}

TEST_F(backing, small_objects)
{
	static const struct {
		unsigned long at, size;
	} obj[] = {
		{ 0, 4 * KIB },
		{ 12 * KIB, 8 * KIB },
		{ 2 * MIB - 4 * KIB, 8 * KIB },
		{ GIB, 4 * KIB },
		{ 300 * GIB + 4 * KIB, 8 * KIB },
		{ 512 * GIB - 8 * KIB, 4 * KIB },	/* A - 8 KiB */
		{ 512 * GIB - 4 * KIB, 4 * KIB },	/* A - 4 KiB */
	};
	const size_t n = ARRAY_SIZE(obj);
	int fd = self->r.fd;
	char *p, *q;
	size_t i;

	ASSERT_EQ(512 * GIB, A);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, create_anon(fd, obj[i].at, obj[i].size, RW))
			TH_LOG("object %zu: %s", i, strerror(errno));
	}
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, PROT_READ, 0));
	for (i = 0; i < n; i++)
		fill(p + obj[i].at, obj[i].size, 30 + i);
	for (i = 0; i < n; i++) {
		unsigned long end = obj[i].at + obj[i].size;

		ASSERT_PATTERN(q + obj[i].at, obj[i].size, 30 + i);
		ASSERT_EQ(0, child_read(p + end - 1,
					pat(30 + i, obj[i].size - 1)));
		/* Around it, holes (unless the next object starts there). */
		if (i + 1 < n && obj[i + 1].at != end && end < A)
			ASSERT_EQ(SEGV, child_read(p + end, 0));
		if (obj[i].at && (i == 0 || obj[i - 1].at + obj[i - 1].size !=
				  obj[i].at))
			ASSERT_EQ(SEGV, child_read(p + obj[i].at - 1, 0));
	}
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

/* ---- permissions ------------------------------------------------------- */

FIXTURE(perm) {
	struct region r;
};

FIXTURE_SETUP(perm)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(perm)
{
	region_cleanup(self->r.pid);
}

TEST_F(perm, readonly_attachment)
{
	int fd = self->r.fd, rfd;
	char *p, *r, *s;

	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	/* Populated writable through the writable attachment first. */
	fill(p, 4 * PG, 22);

	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_PATTERN(r, 4 * PG, 22);
	ASSERT_EQ(SEGV, child_write(r, 'x'));
	ASSERT_EQ(SEGV, child_write(r + 3 * PG + 5, 'x'));
	/* Read-only on a read-write fd is read-only too. */
	ASSERT_MAPS(s, mshare_attach(fd, NULL, PROT_READ, 0));
	ASSERT_EQ(SEGV, child_write(s + PG, 'x'));
	ASSERT_PATTERN(p, 4 * PG, 22);

	/* Writes through the writable one are seen. */
	p[2 * PG] = 'W';
	ASSERT_EQ('W', r[2 * PG]);
	ASSERT_EQ(0, child_read(s + 2 * PG, 'W'));
	ASSERT_OK(munmap(s, A));
	ASSERT_OK(munmap(r, A));
	ASSERT_OK(munmap(p, A));
	close(rfd);
}

TEST_F(perm, readonly_object)
{
	int fd = self->r.fd, mfd;
	char *p;

	mfd = memfd_with(2 * PG, 23);
	ASSERT_LE(0, mfd);
	ASSERT_OK(create_mapping(fd, 0, 2 * PG, 0, PROT_READ, FILEMAP, mfd));
	ASSERT_OK(create_anon(fd, 4 * PG, PG, PROT_READ));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_PATTERN(p, 2 * PG, 23);
	ASSERT_EQ(0, p[4 * PG]);
	ASSERT_EQ(SEGV, child_write(p, 'x'));
	ASSERT_EQ(SEGV, child_write(p + PG + 9, 'x'));
	ASSERT_EQ(SEGV, child_write(p + 4 * PG, 'x'));
	ASSERT_PATTERN(p, 2 * PG, 23);
	ASSERT_EQ(0, child_read(p + PG, pat(23, PG)));
	ASSERT_OK(munmap(p, A));
	close(mfd);
}

/*
 * A PROT_WRITE object is readable as well, as PROT_WRITE memory is on
 * x86: pages nobody wrote read as zeroes (or the file's data) through a
 * writable attachment, before and after writes.
 */
TEST_F(perm, write_only_object)
{
	int fd = self->r.fd, mfd;
	char *p;

	mfd = memfd_with(2 * PG, 44);
	ASSERT_LE(0, mfd);
	ASSERT_OK(create_anon(fd, 0, 4 * PG, PROT_WRITE));
	ASSERT_OK(create_mapping(fd, 8 * PG, 2 * PG, 0, PROT_WRITE, FILEMAP,
				 mfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	/* Reads first, in children and here: nothing was written yet. */
	ASSERT_EQ(0, child_read(p + PG, 0));
	ASSERT_EQ(0, child_read(p + 8 * PG + 5, pat(44, 5)));
	ASSERT_EQ(0, p[3 * PG + 7]);
	ASSERT_PATTERN(p + 8 * PG, 2 * PG, 44);
	/* Then writes, seen by readers. */
	ASSERT_EQ(0, child_write(p + 2 * PG, 'w'));
	ASSERT_EQ('w', p[2 * PG]);
	p[9 * PG] = 'v';
	ASSERT_EQ(0, child_read(p + 9 * PG, 'v'));
	ASSERT_EQ(0, p[0]);
	ASSERT_OK(munmap(p, A));
	close(mfd);
}

TEST_F(perm, prot_none_object)
{
	int fd = self->r.fd, mfd;
	char *p;

	mfd = memfd_with(PG, 24);
	ASSERT_LE(0, mfd);
	ASSERT_OK(create_anon(fd, 0, PG, PROT_NONE));
	ASSERT_OK(create_mapping(fd, PG, PG, 0, PROT_NONE, FILEMAP, mfd));
	ASSERT_OK(create_anon(fd, 2 * PG, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(SEGV, child_read(p, 0));
	ASSERT_EQ(SEGV, child_write(p, 'x'));
	ASSERT_EQ(SEGV, child_read(p + PG, pat(24, 0)));
	ASSERT_EQ(SEGV, child_write(p + PG, 'x'));
	/* Its neighbour works. */
	ASSERT_EQ(0, child_write(p + 2 * PG, 'y'));
	ASSERT_EQ('y', p[2 * PG]);
	ASSERT_OK(munmap(p, A));
	close(mfd);
}

TEST_F(perm, holes)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	/* An empty region is all hole. */
	ASSERT_EQ(SEGV, child_read(p, 0));
	ASSERT_EQ(SEGV, child_write(p + A - 1, 'x'));
	ASSERT_OK(create_anon(fd, 10 * GIB, 2 * PG, RW));
	ASSERT_EQ(SEGV, child_read(p, 0));
	ASSERT_EQ(SEGV, child_read(p + 10 * GIB - 1, 0));
	ASSERT_EQ(SEGV, child_write(p + 10 * GIB + 2 * PG, 'x'));
	ASSERT_EQ(SEGV, child_read(p + A / 2, 0));
	ASSERT_EQ(SEGV, child_read(p + A - 1, 0));
	ASSERT_EQ(0, child_write(p + 10 * GIB + PG, 'x'));
	ASSERT_OK(munmap(p, A));
}

struct other_uid {
	const char *path;
	char *expect;	/* where the parent's attachment holds the data */
	char val;
};

static int other_uid_0600(void *arg)
{
	struct other_uid *o = arg;

	if (FAILED(become_nobody() == 0))
		return 1;
	if (FAILED(open(o->path, O_RDWR) == -1 && errno == EACCES))
		return 1;
	if (FAILED(open(o->path, O_RDONLY) == -1 && errno == EACCES))
		return 1;
	if (FAILED(open(o->path, O_WRONLY) == -1 && errno == EACCES))
		return 1;
	/* Without a file descriptor there is nothing to attach. */
	return 0;
}

static int other_uid_0644(void *arg)
{
	struct other_uid *o = arg;
	struct touch t;
	int fd;
	char *p;

	if (FAILED(become_nobody() == 0))
		return 1;
	if (FAILED(open(o->path, O_RDWR) == -1 && errno == EACCES))
		return 1;
	fd = open(o->path, O_RDONLY);
	if (FAILED(fd >= 0))
		return 1;
	if (FAILED(create_anon(fd, 8 * PG, PG, RW) == -1 && errno == EBADF))
		return 1;
	if (FAILED(mshare_unmap(fd, 0, PG) == -1 && errno == EBADF))
		return 1;
	if (FAILED(mshare_attach(fd, NULL, RW, 0) == MAP_FAILED && errno == EACCES))
		return 1;
	p = mshare_attach(fd, NULL, PROT_READ, 0);
	if (FAILED(p != MAP_FAILED))
		return 1;
	if (FAILED(p[0] == o->val))
		return 1;
	if (FAILED(mismatch(p + PG, PG, 25) == -1))
		return 1;
	t.p = p;
	t.val = 'x';
	if (FAILED(run_child(do_write, &t) == SEGV))
		return 1;
	if (FAILED(p[0] == o->val))
		return 1;
	if (FAILED(mprotect(p, A, RW) == -1 && errno == EACCES))
		return 1;
	if (FAILED(munmap(p, A) == 0))
		return 1;
	return 0;
}

TEST_F(perm, other_uid_0600)
{
	struct other_uid o = { .path = self->r.path };

	ASSERT_OK(create_anon(self->r.fd, 0, PG, RW));
	ASSERT_EQ(0, run_child(other_uid_0600, &o));
}

TEST_F(perm, other_uid_0644)
{
	struct other_uid o = { .path = self->r.path, .val = 'V' };
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'V';
	fill(p + PG, PG, 25);
	ASSERT_OK(fchmod(fd, 0644));
	ASSERT_EQ(0, run_child(other_uid_0644, &o));
	/* Nothing the other user did changed the data. */
	ASSERT_EQ('V', p[0]);
	ASSERT_PATTERN(p + PG, PG, 25);
	ASSERT_EQ(SEGV, child_read(p + 8 * PG, 0));
	ASSERT_OK(create_anon(fd, 8 * PG, PG, RW));
	ASSERT_OK(munmap(p, A));
}

/* ---- lifetime ---------------------------------------------------------- */

FIXTURE(life) {
	struct region r;
};

FIXTURE_SETUP(life)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(life)
{
	region_cleanup(self->r.pid);
}

static int child_sees_and_writes(void *arg)
{
	char *p = arg;

	if (FAILED(p[0] == 'P'))
		return 1;
	if (FAILED(mismatch(p + PG, PG, 26) == -1))
		return 1;
	p[1] = 'C';
	fill(p + 2 * PG, PG, 27);
	return 0;
}

TEST_F(life, fork_inherits)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 3 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'P';
	fill(p + PG, PG, 26);
	ASSERT_EQ(0, run_child(child_sees_and_writes, p));
	ASSERT_EQ('C', p[1]);
	ASSERT_PATTERN(p + 2 * PG, PG, 27);
	ASSERT_OK(munmap(p, A));
}

static int child_attaches_and_exits(void *arg)
{
	struct region *r = arg;
	int fd = open(r->path, O_RDWR);
	char *p;

	if (FAILED(fd >= 0))
		return 1;
	p = mshare_attach(fd, NULL, RW, 0);
	if (FAILED(p != MAP_FAILED))
		return 1;
	if (FAILED(p[0] == 'E'))
		return 1;
	p[PG] = 'e';
	/* Exit with the attachment and fd still open. */
	return 0;
}

static int child_touches_and_exits(void *arg)
{
	char *p = arg;

	if (FAILED(p[0] == 'E'))
		return 1;
	p[PG + 1] = 'f';
	return 0;
}

TEST_F(life, child_exit)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'E';
	ASSERT_EQ(0, run_child(child_attaches_and_exits, &self->r));
	ASSERT_EQ(0, run_child(child_touches_and_exits, p));
	/* The parent's attachment is untouched by either exit. */
	ASSERT_EQ('E', p[0]);
	ASSERT_EQ('e', p[PG]);
	ASSERT_EQ('f', p[PG + 1]);
	p[2] = 'g';
	ASSERT_EQ(0, child_read(p + 2, 'g'));
	ASSERT_EQ(SEGV, child_read(p + 2 * PG, 0));
	ASSERT_OK(munmap(p, A));
}

struct creator {
	const char *path;
	unsigned long start;	/* where the creator attached, 0 if not */
};

static int creator(void *arg)
{
	struct creator *c = arg;
	int fd;
	char *p;

	fd = open(c->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (FAILED(fd >= 0))
		return 1;
	if (FAILED(ftruncate(fd, A) == 0))
		return 1;
	if (FAILED(create_anon(fd, GIB, 4 * PG, RW) == 0))
		return 1;
	if (FAILED(create_anon(fd, A - PG, PG, RW) == 0))
		return 1;
	p = mshare_attach(fd, NULL, RW, 0);
	if (FAILED(p != MAP_FAILED))
		return 1;
	fill(p + GIB, 4 * PG, 28);
	fill(p + A - PG, PG, 29);
	/* The parent learns the address from read(2) instead. */
	return 0;
}

TEST_F(life, creator_exits)
{
	struct creator c;
	struct mshare_info info;
	struct region r;
	char *p;

	/* A region of the creator's, under a name of ours. */
	snprintf(r.path, sizeof(r.path), MSHARE_DIR "/ha-%d-creator",
		 getpid());
	r.fd = -1;
	c.path = r.path;
	ASSERT_EQ(0, run_child(creator, &c));

	r.fd = open(r.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, r.fd);
	ASSERT_OK(mshare_region_info(r.fd, &info));
	ASSERT_EQ((__u64)A, info.size);
	ASSERT_NE(0ULL, info.start);
	ASSERT_MAPS(p, mshare_attach(r.fd, NULL, RW, 0));
	ASSERT_PATTERN(p + GIB, 4 * PG, 28);
	ASSERT_PATTERN(p + A - PG, PG, 29);
	ASSERT_EQ(SEGV, child_read(p, 0));
	/* Attach where the creator did, as pointer-keeping programs would. */
	ASSERT_OK(munmap(p, A));
	ASSERT_MAPS(p, mshare_attach(r.fd, (void *)(info.start), PROT_READ, 0));
	ASSERT_EQ((unsigned long)info.start, (unsigned long)p);
	ASSERT_PATTERN(p + GIB, 4 * PG, 28);
	ASSERT_OK(munmap(p, A));
	region_del(&r);
}

static int child_after_unlink(void *arg)
{
	char *p = arg;

	if (FAILED(p[0] == 'U'))
		return 1;
	if (FAILED(mismatch(p + PG, PG, 31) == -1))
		return 1;
	p[1] = 'u';
	return 0;
}

TEST_F(life, unlink_attached)
{
	int fd = self->r.fd;
	struct stat st;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'U';
	ASSERT_OK(unlink(self->r.path));
	ASSERT_OK(close(fd));
	self->r.fd = -1;
	ASSERT_FAILS(ENOENT, stat(self->r.path, &st));

	/* Still readable and writable, in this process and a child. */
	ASSERT_EQ('U', p[0]);
	fill(p + PG, PG, 31);
	ASSERT_EQ(0, run_child(child_after_unlink, p));
	ASSERT_EQ('u', p[1]);
	ASSERT_EQ(SEGV, child_read(p + 2 * PG, 0));
	ASSERT_OK(munmap(p, A));
}

/*
 * Wait up to 5 s for free memory to come back to within @slack KiB of
 * @free0, and Shmem to within @slack KiB of @shmem0.
 */
static bool memory_back(long free0, long shmem0, long slack)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (free_kb() >= free0 - slack &&
		    meminfo_kb("Shmem") <= shmem0 + slack)
			return true;
		usleep(100000);
	}
	return false;
}

TEST_F(life, unlink_frees_memory)
{
	const unsigned long size = 64 * MIB, slack = 8 * 1024;
	long free0, shmem0, free1, shmem1;
	int fd, i;
	struct stat st;
	char *p;

	/* Use a region created after the first reading. */
	region_del(&self->r);
	free0 = free_kb();
	shmem0 = meminfo_kb("Shmem");
	ASSERT_LT(0L, free0);

	fd = region_new(&self->r, 0600);
	ASSERT_LE(0, fd);
	ASSERT_OK(ftruncate(fd, A));
	ASSERT_OK(create_anon(fd, GIB, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	for (i = 0; i < (int)(size / PG); i++)
		p[GIB + i * PG] = (char)i;
	free1 = free_kb();
	shmem1 = meminfo_kb("Shmem");
	ASSERT_LE(shmem0 + 60 * 1024L, shmem1);
	ASSERT_GE(free0 - 56 * 1024L, free1);

	ASSERT_OK(unlink(self->r.path));
	/* Attached still: the memory is in use. */
	ASSERT_EQ((char)7, p[GIB + 7 * PG]);
	ASSERT_OK(munmap(p, A));
	ASSERT_LE(shmem0 + 60 * 1024L, meminfo_kb("Shmem"));
	ASSERT_OK(close(fd));
	self->r.fd = -1;
	ASSERT_FAILS(ENOENT, stat(self->r.path, &st));
	ASSERT_TRUE(memory_back(free0, shmem0, slack))
		TH_LOG("free %ld (was %ld, MemFree %ld), Shmem %ld (was %ld) KiB",
		       free_kb(), free0, meminfo_kb("MemFree"),
		       meminfo_kb("Shmem"), shmem0);
}

TEST_F(life, exec_detaches)
{
	static char *const argv[] = { "mshare_attach_test", NULL };
	char env[128];
	char *const envp[] = { env, NULL };
	int fd = self->r.fd, status;
	pid_t pid;
	char *p;

	ASSERT_OK(create_anon(fd, 0, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'X';
	/* The check has teeth: this process does map it. */
	ASSERT_EQ(1, maps_contain(self->r.name));
	snprintf(env, sizeof(env), "%s=%s", EXEC_ENV, self->r.name);

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (maps_contain(self->r.name) != 1 || p[0] != 'X')
			_exit(12);
		execve("/proc/self/exe", argv, envp);
		_exit(13);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("10: still mapped after exec; 11: maps unreadable; "
		       "12: not mapped before exec; 13: execve failed");
	ASSERT_EQ('X', p[0]);
	ASSERT_OK(munmap(p, A));
}

/* ---- the shape of the public proposal's tests -------------------------- */

FIXTURE(peer) {
	struct region r;
};

FIXTURE_SETUP(peer)
{
	region_setup(_metadata, &self->r, true);
}

FIXTURE_TEARDOWN_PARENT(peer)
{
	region_cleanup(self->r.pid);
}

struct peer_objs {
	const char *path, *name;
	unsigned long p1, p2;	/* the parent's attachments */
};

static const struct {
	unsigned long at, size;
	__u32 flags;
} peer_obj[] = {
	{ 0, 4 * KIB, ANON },
	{ MIB, 8 * KIB, ANON },
	{ 2 * MIB, 2 * MIB, ANON_HUGE },
	{ 4 * MIB, 4 * MIB, ANON_HUGE },
};

#define PEER_N	ARRAY_SIZE(peer_obj)

/*
 * A peer that has not attached the region (this child of the creator
 * first drops the attachments it inherited) learns from mshare_info where
 * the creator attached and attaches read-only there, so that the pointer
 * the creator stored at the start of the first object leads to the last
 * object. It sees every object, cannot write, and a second attachment at
 * a kernel-chosen address is aligned and sees the same data.
 */
static int peer_reader(void *arg)
{
	struct peer_objs *o = arg;
	struct mshare_info info;
	struct touch t;
	char *p, *q, *ptr;
	size_t i;
	int fd;

	fd = open(o->path, O_RDONLY);
	if (FAILED(fd >= 0))
		return 1;
	if (FAILED(mshare_region_info(fd, &info) == 0 && info.start == o->p1))
		return 1;
	if (FAILED(munmap((void *)o->p1, A) == 0) ||
	    FAILED(munmap((void *)o->p2, A) == 0) ||
	    FAILED(maps_contain(o->name) == 0))
		return 1;
	p = mshare_attach(fd, (void *)(info.start), PROT_READ, MAP_FIXED_NOREPLACE);
	if (FAILED(p != MAP_FAILED) || FAILED((unsigned long)p == info.start))
		return 1;
	ptr = *(char **)p;
	if (FAILED(ptr == p + peer_obj[PEER_N - 1].at) ||
	    FAILED(mismatch(ptr, peer_obj[PEER_N - 1].size, 40 + PEER_N - 1)
		   == -1))
		return 1;
	for (i = 0; i < PEER_N; i++) {
		size_t skip = i ? 0 : sizeof(ptr);

		if (FAILED(mismatch_from(p + peer_obj[i].at + skip,
					 peer_obj[i].size - skip, 40 + i,
					 skip) == -1))
			return 1;
	}
	t.p = p + peer_obj[0].at;
	t.val = 1;
	if (FAILED(run_child(do_write, &t) == SEGV))
		return 1;

	q = mshare_attach(fd, NULL, PROT_READ, 0);
	if (FAILED(q != MAP_FAILED) || FAILED((unsigned long)q % A == 0))
		return 1;
	for (i = 1; i < PEER_N; i++)
		if (FAILED(mismatch(q + peer_obj[i].at, peer_obj[i].size,
				    40 + i) == -1))
			return 1;
	if (FAILED(*(char **)q == ptr))
		return 1;
	if (FAILED(munmap(q, A) == 0) || FAILED(munmap(p, A) == 0))
		return 1;
	return 0;
}

TEST_F(peer, basic)
{
	struct peer_objs o = { .path = self->r.path, .name = self->r.name };
	int fd = self->r.fd;
	char *p1, *p2;
	size_t i;

	ASSERT_EQ(EXPECTED_ALIGN, A);
	if (meminfo_kb("HugePages_Free") < 3)
		SKIP(return, "fewer than 3 free 2 MiB huge pages");
	for (i = 0; i < PEER_N; i++)
		ASSERT_OK(create_mapping(fd, peer_obj[i].at, peer_obj[i].size,
					 0, RW, peer_obj[i].flags, -1));

	ASSERT_MAPS(p1, mshare_attach(fd, NULL, RW, 0));
	ASSERT_ALIGNED(p1);
	o.p1 = (unsigned long)p1;
	o.p2 = free_aligned(2 * A);
	ASSERT_NE(0UL, o.p2);
	ASSERT_MAPS(p2, mshare_attach(fd, (void *)(o.p2), RW, MAP_FIXED));
	ASSERT_EQ(o.p2, (unsigned long)p2);

	for (i = 0; i < PEER_N; i++)
		fill(p1 + peer_obj[i].at, peer_obj[i].size, 40 + i);
	for (i = 0; i < PEER_N; i++)
		ASSERT_PATTERN(p2 + peer_obj[i].at, peer_obj[i].size, 40 + i);
	/* A pointer into the region, valid where the creator attached. */
	*(char **)(p1 + peer_obj[0].at) = p1 + peer_obj[PEER_N - 1].at;
	ASSERT_EQ(0, run_child(peer_reader, &o));

	for (i = 0; i < PEER_N; i++) {
		char *last = p1 + peer_obj[i].at + peer_obj[i].size - 1;

		ASSERT_OK(mshare_unmap(fd, peer_obj[i].at, peer_obj[i].size));
		ASSERT_EQ(SEGV, child_read(p1 + peer_obj[i].at, 0));
		ASSERT_EQ(SEGV, child_read(last, 0));
		ASSERT_EQ(SEGV, child_read(p2 + peer_obj[i].at, 0));
	}
	ASSERT_EMPTY(fd);
	ASSERT_OK(munmap(p2, A));
	ASSERT_OK(munmap(p1, A));
}

TEST_HARNESS_MAIN
