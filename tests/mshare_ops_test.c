// SPDX-License-Identifier: GPL-2.0
/*
 * Operations on an msharefs attachment act on the region, for every
 * sharer, as a thread's act for its siblings: madvise() advises the
 * region's objects, mprotect() changes their protection, mlock() locks
 * them, msync() and fsync() of the region write back its file objects.
 * The per-region numbers of /proc/PID/fdinfo/FD show the effects (objects,
 * their protection, resident bytes, page tables, attachments).
 *
 * Every test checks the data from another attachment: a second one in the
 * test process, and a child that attaches the region at an address of its
 * own.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y, msharefs on /sys/fs/mshare, a
 * disk file system on /mnt/disk and free 2 MiB pages on /dev/hugepages.
 *
 * Build: make -C tests
 * Run:   ./mshare_ops_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <pthread.h>
#include <time.h>

#include "mshare_test.h"


#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)


#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* What run_child() returns for a child killed by SIGSEGV. */
#define SEGV		(128 + SIGSEGV)

/* The alignment (and size of every region here), from mshare_info. */
static unsigned long A;

/*
 * The size of the "big" objects: a few MiB, more than any per-CPU batch
 * of a counter would hide (mshare-rss is exact, checked to the byte).
 */
#define BIG		(4 * MIB)

__attribute__((constructor)) static void setup_globals(void)
{
	A = read_align();
}

/* ---- data ------------------------------------------------------------- */

/* Pattern @seed in the first byte of each page only: for big objects. */
static void fill_pages(char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		p[i] = pat(seed, i);
}

/* mismatch_from() for the first byte of each page. */
static long mismatch_pages_from(const char *p, size_t len, int seed,
				size_t from)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		if (p[i] != pat(seed, from + i))
			return i;
	return -1;
}

#define ASSERT_PAGES_FROM(p, len, seed, from) do {			\
	const char *_p = (p);						\
	int _seed = (seed);						\
									\
	ASSERT_EQ(-1L, mismatch_pages_from(_p, len, _seed, from))	\
		TH_LOG("page pattern %d at %p differs", _seed, _p);	\
} while (0)

#define ASSERT_PAGES(p, len, seed) ASSERT_PAGES_FROM(p, len, seed, 0)

/* Read a byte of every page of [@p, @p + @len): the sum, to be used. */
static int touch_pages(const char *p, size_t len)
{
	int sum = 0;
	size_t i;

	for (i = 0; i < len; i += 4096)
		sum += ((const volatile char *)p)[i];
	return sum;
}

/* ---- regions, objects, files ------------------------------------------ */

/*
 * Names a test creates start with "ops-PID-" (PID of the test process) in
 * /sys/fs/mshare and in /mnt/disk, so that teardown finds what a failed
 * test left behind.
 */
struct region {
	char path[64];
	int fd;			/* O_RDWR */
	pid_t pid;
};

static int seq;

static void region_setup(struct __test_metadata *_metadata, struct region *r)
{
	r->fd = -1;
	r->pid = getpid();
	if (A == 0)
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	snprintf(r->path, sizeof(r->path), MSHARE_DIR "/ops-%d-%d",
		 getpid(), seq++);
	r->fd = mshare_region_create(AT_FDCWD, r->path, 0600, A);
	ASSERT_LE(0, r->fd) TH_LOG("creating %s: %s", r->path,
				   strerror(errno));
}

static void ops_cleanup(pid_t pid)
{
	if (!pid)
		return;
	unlink_tagged(MSHARE_DIR, "ops", pid);
	unlink_tagged(DISK_DIR, "ops", pid);
}

/* One fixture per group of tests, each with a region sized to A. */
#define OPS_FIXTURE(name)						\
	FIXTURE(name) {							\
		struct region r;					\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		region_setup(_metadata, &self->r);			\
	}								\
	FIXTURE_TEARDOWN_PARENT(name)					\
	{								\
		ops_cleanup(self->r.pid);				\
	}

static int create_anon(int fd, __u64 roff, __u64 size, __u32 prot)
{
	return create_mapping(fd, roff, size, 0, prot, ANON, -1);
}

/*
 * A file of @size bytes on /mnt/disk holding pattern @seed, written back,
 * and named in @path: its fd opened with @flags, or -1.
 */
static int disk_file(char *path, size_t size, int seed, int flags)
{
	char *buf = malloc(size);
	int fd;

	snprintf(path, PATH_MAX, DISK_DIR "/ops-%d-%d", getpid(), seq++);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || !buf)
		goto fail;
	fill(buf, size, seed);
	if (pwrite(fd, buf, size, 0) != (ssize_t)size || fsync(fd))
		goto fail;
	free(buf);
	if (flags == O_RDWR)
		return fd;
	close(fd);
	return open(path, flags | O_CLOEXEC);
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return -1;
}


/* ---- /proc/self/fdinfo of a region ------------------------------------ */

#define MAX_OBJS	8

struct obj_info {
	unsigned long off, size, foff;
	char prot[4];
	char backing[PATH_MAX];
};

struct fdinfo {
	long size, attachments, rss, pgtables, objects;
	unsigned long start;
	int n;				/* mshare-object lines */
	struct obj_info obj[MAX_OBJS];
};

/* Parse the mshare- lines of /proc/self/fdinfo/@fd: 0, or -1 if some lack. */
static int fdinfo_get(int fd, struct fdinfo *fi)
{
	char path[64], line[PATH_MAX + 128];
	int have = 0;
	FILE *f;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct obj_info *o = &fi->obj[fi->n];

		have |= sscanf(line, "mshare-size:\t%ld", &fi->size) == 1;
		have |= (sscanf(line, "mshare-start:\t%lx",
				&fi->start) == 1) << 1;
		have |= (sscanf(line, "mshare-attachments:\t%ld",
				&fi->attachments) == 1) << 2;
		have |= (sscanf(line, "mshare-rss:\t%ld", &fi->rss) == 1) << 3;
		have |= (sscanf(line, "mshare-pgtables:\t%ld",
				&fi->pgtables) == 1) << 4;
		have |= (sscanf(line, "mshare-objects:\t%ld",
				&fi->objects) == 1) << 5;
		if (fi->n < MAX_OBJS &&
		    sscanf(line, "mshare-object:\t%lx %lx %3s %lx %4095[^\n]",
			   &o->off, &o->size, o->prot, &o->foff,
			   o->backing) == 5)
			fi->n++;
	}
	fclose(f);
	return have == 0x3f ? 0 : -1;
}

#define ASSERT_FDINFO(fd, fi)						\
	ASSERT_EQ(0, fdinfo_get(fd, fi))				\
		TH_LOG("fdinfo of %d lacks mshare- lines", fd)

/* The resident bytes of the region of @fd, or -1. */
static long region_rss(int fd)
{
	struct fdinfo fi;

	return fdinfo_get(fd, &fi) ? -1 : fi.rss;
}

/* mshare-rss of @fd is exactly @want: the counter has no per-CPU slack. */
#define ASSERT_RSS(fd, want) do {					\
	long _want = (want), _rss = region_rss(fd);			\
									\
	ASSERT_EQ(_want, _rss)						\
		TH_LOG("mshare-rss %ld, want %ld", _rss, _want);	\
} while (0)

/* The protection of the object at @off, "?" if no object starts there. */
static const char *obj_prot(int fd, unsigned long off)
{
	static struct fdinfo fi;
	int i;

	if (fdinfo_get(fd, &fi))
		return "?";
	for (i = 0; i < fi.n; i++)
		if (fi.obj[i].off == off)
			return fi.obj[i].prot;
	return "?";
}

static long region_objects(int fd)
{
	struct fdinfo fi;

	return fdinfo_get(fd, &fi) ? -1 : fi.objects;
}

/* An mshare-object line @o is as expected. */
#define ASSERT_OBJ(o, o_off, o_size, o_prot, o_foff, o_backing) do {	\
	const struct obj_info *_o = (o);				\
									\
	ASSERT_EQ((unsigned long)(o_off), _o->off);			\
	ASSERT_EQ((unsigned long)(o_size), _o->size);			\
	ASSERT_STREQ(o_prot, _o->prot);					\
	ASSERT_EQ((unsigned long)(o_foff), _o->foff);			\
	ASSERT_STREQ(o_backing, _o->backing);				\
} while (0)

/* ---- children ---------------------------------------------------------- */

struct touch {
	char *p;
	char val;
};

static int do_read(void *arg)
{
	struct touch *t = arg;

	return *(volatile char *)t->p == t->val ? 0 : 1;
}

static int do_write(void *arg)
{
	struct touch *t = arg;

	*(volatile char *)t->p = t->val;
	return 0;
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

/*
 * A peer: a child that opens the region itself and attaches it at an
 * address of its own (not @avoid, the parent's), then checks pattern
 * @seed at @off, or writes @val there.
 */
struct peer {
	const char *path;
	const char *avoid;
	unsigned long off, len;
	int seed;
	bool write;
	char val;
	bool pages;		/* check the first byte of each page only */
	unsigned long from;	/* pattern index of the byte at @off */
};

static int peer_run(void *arg)
{
	struct peer *pr = arg;
	int fd = open(pr->path, pr->write ? O_RDWR : O_RDONLY);
	char *p;

	if (FAILED(fd >= 0))
		return 2;
	p = mshare_attach(fd, NULL, pr->write ? RW : PROT_READ, 0);
	if (FAILED(p != MAP_FAILED) || FAILED(p != pr->avoid))
		return 2;
	if (pr->write) {
		*(volatile char *)(p + pr->off) = pr->val;
		return 0;
	}
	if (pr->pages) {
		if (FAILED(mismatch_pages_from(p + pr->off, pr->len, pr->seed,
					       pr->from) == -1))
			return 1;
	} else if (FAILED(mismatch_from(p + pr->off, pr->len, pr->seed,
					pr->from) == -1)) {
		return 1;
	}
	return 0;
}

/* A peer's view of [@off, @off + @len) is pattern @seed: 0. */
static int peer_check(const struct region *r, const char *avoid,
		      unsigned long off, unsigned long len, int seed)
{
	struct peer pr = { r->path, avoid, off, len, seed, false, 0, false, 0 };

	return run_child(peer_run, &pr);
}

/*
 * The same for the first byte of each page (fill_pages()), the byte at
 * @off being byte @from of the pattern.
 */
static int peer_check_pages_from(const struct region *r, const char *avoid,
				 unsigned long off, unsigned long len, int seed,
				 unsigned long from)
{
	struct peer pr = { r->path, avoid, off, len, seed, false, 0, true,
			   from };

	return run_child(peer_run, &pr);
}

static int peer_check_pages(const struct region *r, const char *avoid,
			    unsigned long off, unsigned long len, int seed)
{
	return peer_check_pages_from(r, avoid, off, len, seed, 0);
}

/* A peer writes @val at @off: 0, or SEGV. */
static int peer_write(const struct region *r, const char *avoid,
		      unsigned long off, char val)
{
	struct peer pr = { r->path, avoid, off, 1, 0, true, val, false, 0 };

	return run_child(peer_run, &pr);
}

/* ---- per-region statistics ---------------------------------------------- */

OPS_FIXTURE(fdinfo)

TEST_F(fdinfo, empty_region)
{
	struct fdinfo fi;
	int rfd;

	ASSERT_FDINFO(self->r.fd, &fi);
	ASSERT_EQ((long)A, fi.size);
	ASSERT_EQ(0UL, fi.start);
	ASSERT_EQ(0L, fi.attachments);
	ASSERT_EQ(0L, fi.rss);
	/* No table yet: a unit gets its PUD table with its first object. */
	ASSERT_EQ(0L, fi.pgtables);
	ASSERT_EQ(0L, fi.objects);
	ASSERT_EQ(0, fi.n);

	/* Any open mode shows it; an unsized region has no size or tables. */
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_FDINFO(rfd, &fi);
	ASSERT_EQ((long)A, fi.size);
	ASSERT_EQ(0L, fi.pgtables);
	close(rfd);
	snprintf(self->r.path, sizeof(self->r.path), MSHARE_DIR "/ops-%d-%d",
		 getpid(), seq++);
	rfd = mshare_region_create(AT_FDCWD, self->r.path, 0600, 0);
	ASSERT_LE(0, rfd);
	unlink(self->r.path);
	ASSERT_FDINFO(rfd, &fi);
	ASSERT_EQ(0L, fi.size);
	ASSERT_EQ(0L, fi.pgtables);
	ASSERT_EQ(0L, fi.objects);
	close(rfd);
}

TEST_F(fdinfo, objects)
{
	char disk[PATH_MAX];
	int fd = self->r.fd, dfd, mfd, rfd;
	struct fdinfo fi;
	bool huge = meminfo_kb("HugePages_Free") >= 1;
	char *p;

	mfd = memfd_sized("ops", 0, 4 * PG);
	ASSERT_LE(0, mfd);
	dfd = disk_file(disk, 4 * PG, 3, O_RDWR);
	ASSERT_LE(0, dfd) TH_LOG("%s: %s", disk, strerror(errno));
	rfd = open(disk, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);

	/* Created out of order: listed in offset order. */
	ASSERT_OK(create_mapping(fd, 16 * MIB, 2 * PG, PG, RW, FILEMAP, dfd));
	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_OK(create_mapping(fd, 8 * MIB, 3 * PG, PG, PROT_READ, FILEMAP,
				 mfd));
	ASSERT_OK(create_mapping(fd, 32 * MIB, PG, 3 * PG, PROT_READ, FILEMAP,
				 rfd));
	ASSERT_OK(create_anon(fd, A - PG, PG, PROT_NONE));
	if (huge)
		ASSERT_OK(create_mapping(fd, 2 * MIB, HPAGE, 0, RW,
					 ANON | MAP_HUGETLB, -1));

	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(huge ? 6L : 5L, fi.objects);
	ASSERT_EQ(fi.objects, (long)fi.n);
	ASSERT_OBJ(&fi.obj[0], 0, 4 * PG, "rw-", 0, "anon");
	if (huge) {
		ASSERT_OBJ(&fi.obj[1], 2 * MIB, HPAGE, "rw-", 0,
			   "anon-hugetlb");
		memmove(&fi.obj[1], &fi.obj[2], 4 * sizeof(fi.obj[0]));
	}
	/* (The memfd's name is checked in memfd_path.) */
	ASSERT_OBJ(&fi.obj[1], 8 * MIB, 3 * PG, "r--", PG,
		   fi.obj[1].backing);
	ASSERT_OBJ(&fi.obj[2], 16 * MIB, 2 * PG, "rw-", PG, disk);
	ASSERT_OBJ(&fi.obj[3], 32 * MIB, PG, "r--", 3 * PG, disk);
	ASSERT_OBJ(&fi.obj[4], A - PG, PG, "---", 0, "anon");
	ASSERT_EQ(0L, fi.rss);
	ASSERT_EQ(0UL, fi.start);

	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ((unsigned long)p, fi.start);
	ASSERT_EQ(1L, fi.attachments);
	ASSERT_EQ(0L, fi.rss);

	/* Touch everything touchable: resident bytes are the objects'. */
	fill(p, 4 * PG, 1);
	ASSERT_PATTERN_FROM(p + 16 * MIB, 2 * PG, 3, PG);
	ASSERT_PATTERN_FROM(p + 32 * MIB, PG, 3, 3 * PG);
	if (huge)
		fill(p + 2 * MIB, HPAGE, 2);
	ASSERT_EQ(0, touch_pages(p + 8 * MIB, 3 * PG));
	ASSERT_RSS(fd, 4 * PG + 3 * PG + 2 * PG + PG + (huge ? HPAGE : 0));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 4 * PG, 1));
	if (huge)
		ASSERT_EQ(0, peer_check(&self->r, p, 2 * MIB, HPAGE, 2));
	ASSERT_EQ(SEGV, child_read(p + A - PG, 0));

	ASSERT_OK(munmap(p, A));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(0L, fi.attachments);
	close(rfd);
	close(dfd);
	close(mfd);
}

/*
 * A memfd (or any unlinked tmpfs file) is a file: its line has its path.
 * Shared anonymous memory is shmem too, but its line says "anon".
 */
TEST_F(fdinfo, memfd_path)
{
	int fd = self->r.fd, mfd;
	struct fdinfo fi;
	char *p;

	mfd = memfd_sized("ops", 0, 2 * PG);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(1, pwrite(mfd, "m", 1, PG));
	ASSERT_OK(create_mapping(fd, 0, PG, PG, RW, FILEMAP, mfd));
	ASSERT_OK(create_anon(fd, MIB, 2 * PG, PROT_READ));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ('m', p[0]);
	ASSERT_EQ(0, peer_write(&self->r, p, 1, 'n'));
	ASSERT_EQ(1, pread(mfd, p + 2, 1, PG + 1) == 1 && p[2] == 'n');
	ASSERT_EQ(0, p[MIB + PG]);
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(2L, fi.objects);
	ASSERT_OBJ(&fi.obj[0], 0, PG, "rw-", PG, "/memfd:ops (deleted)");
	ASSERT_OBJ(&fi.obj[1], MIB, 2 * PG, "r--", 0, "anon");
	ASSERT_OK(munmap(p, A));
	close(mfd);
}

struct count_arg {
	struct region *r;
	long want;		/* attachments the child should see */
};

static int child_counts(void *arg)
{
	struct count_arg *c = arg;
	struct fdinfo fi;
	char *p;

	p = mshare_attach(c->r->fd, NULL, PROT_READ, 0);
	if (FAILED(p != MAP_FAILED))
		return 2;
	if (FAILED(fdinfo_get(c->r->fd, &fi) == 0))
		return 2;
	if (fi.attachments != c->want)
		fprintf(stderr, "# child sees %ld attachments, wants %ld\n",
			fi.attachments, c->want);
	if (FAILED(fi.attachments == c->want))
		return 1;
	if (FAILED(mismatch(p, PG, 4) == -1))
		return 1;
	/* Exits attached. */
	return 0;
}

TEST_F(fdinfo, attachments)
{
	struct count_arg c = { &self->r, 0 };
	int fd = self->r.fd;
	struct fdinfo fi;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, PROT_READ, 0));
	ASSERT_NE(p, q);
	fill(p, PG, 4);
	ASSERT_PATTERN(q, PG, 4);
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(2L, fi.attachments);
	ASSERT_EQ((unsigned long)p, fi.start);

	/* A child inherits two and attaches once more. */
	c.want = 5;
	ASSERT_EQ(0, run_child(child_counts, &c));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(2L, fi.attachments);
	ASSERT_EQ(0, peer_check(&self->r, p, 0, PG, 4));

	ASSERT_OK(munmap(p, A));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(1L, fi.attachments);
	/* mshare-start stays the first address. */
	ASSERT_EQ((unsigned long)p, fi.start);
	ASSERT_PATTERN(q, PG, 4);
	ASSERT_OK(munmap(q, A));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(0L, fi.attachments);
}

TEST_F(fdinfo, rss_and_pgtables)
{
	const unsigned long size = BIG;
	int fd = self->r.fd;
	struct fdinfo fi;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_OK(create_anon(fd, GIB, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(0L, fi.rss);
	/* The PUD table only. */
	ASSERT_EQ((long)PG, fi.pgtables);

	fill_pages(p, size / 2, 5);
	ASSERT_RSS(fd, size / 2);
	/* Reading through the other attachment maps nothing new. */
	ASSERT_PAGES(q, size / 2, 5);
	ASSERT_RSS(fd, size / 2);
	fill_pages(q, size, 5);
	ASSERT_RSS(fd, size);
	/* Plus a PMD table, and a PTE table for every 2 MiB. */
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ((long)(2 * PG + size / HPAGE * PG), fi.pgtables);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size, 5));
	ASSERT_RSS(fd, size);

	/* Another GiB needs tables of its own. */
	fill_pages(p + GIB, size, 6);
	ASSERT_RSS(fd, 2 * size);
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ((long)(3 * PG + 2 * size / HPAGE * PG), fi.pgtables);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, GIB, size, 6));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	/* Detaching does not unmap the region's memory. */
	ASSERT_RSS(fd, 2 * size);
}

/* ---- madvise ------------------------------------------------------------ */

OPS_FIXTURE(madv)

TEST_F(madv, dontneed)
{
	const unsigned long size = BIG;
	int fd = self->r.fd;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	fill_pages(p, size, 6);
	fill(p, 4 * PG, 6);
	ASSERT_RSS(fd, size);

	ASSERT_OK(madvise(p, size, MADV_DONTNEED));
	ASSERT_RSS(fd, 0);
	/* Shared memory: the data stays, for every sharer. */
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size, 6));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 4 * PG, 6));
	ASSERT_PAGES(q, size, 6);
	ASSERT_RSS(fd, size);

	/* Half of it, through the other attachment. */
	ASSERT_OK(madvise(q + size / 4, size / 2, MADV_DONTNEED_LOCKED));
	ASSERT_RSS(fd, size / 2);
	ASSERT_EQ(1L, region_objects(fd));
	ASSERT_PAGES(p, size, 6);
	ASSERT_PATTERN(p, 4 * PG, 6);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size, 6));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

TEST_F(madv, remove)
{
	const unsigned long size = BIG, half = BIG / 2;
	int fd = self->r.fd, rfd;
	char *p, *q, *r, *s;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	fill_pages(p, size, 7);
	fill(p + half - 2 * PG, 4 * PG, 8);
	ASSERT_RSS(fd, size);

	/*
	 * Read-only attachments cannot discard shared data: a reader's may
	 * not advise the region at all (EPERM), a writer's read-only one
	 * needs PROT_WRITE (EACCES).
	 */
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_MAPS(s, mshare_attach(fd, NULL, PROT_READ, 0));
	ASSERT_FAILS(EPERM, madvise(r + half, half, MADV_REMOVE));
	ASSERT_FAILS(EACCES, madvise(s + half, half, MADV_REMOVE));
	ASSERT_RSS(fd, size);
	ASSERT_PATTERN(q + half - 2 * PG, 4 * PG, 8);
	ASSERT_EQ(0, peer_check_pages_from(&self->r, p, half + 2 * PG,
					   half - 2 * PG, 7, half + 2 * PG));

	ASSERT_OK(madvise(p + half, half, MADV_REMOVE));
	/* The pages are gone from the region, for everyone. */
	ASSERT_RSS(fd, half);
	ASSERT_PATTERN(q + half - 2 * PG, 2 * PG, 8);
	ASSERT_PATTERN(r + half, 2 * PG, ZERO);
	ASSERT_PAGES(q + half, half, ZERO);
	ASSERT_PAGES(s, half - 2 * PG, 7);
	ASSERT_EQ(0, peer_check(&self->r, p, half, 2 * PG, ZERO));
	ASSERT_EQ(0, peer_check_pages(&self->r, p, half, half, ZERO));
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, half - 2 * PG, 7));
	ASSERT_OK(munmap(s, A));
	ASSERT_OK(munmap(r, A));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	close(rfd);
}

/*
 * MADV_REMOVE of an attachment against a write(2) to the object's memfd
 * whose source buffer is the attachment: the write holds the file's lock
 * and faults on the region, the advice holds the region's lock and punches
 * a hole in the file. A third thread maps and unmaps (and attaches and
 * detaches) to queue writers on the locks in between. This used to
 * deadlock; now all three must run for RACE_SECONDS and stop.
 */
#define RACE_PAGES	64
#define RACE_SECONDS	2

struct remove_race {
	const struct region *r;
	char *p;		/* the attachment */
	int mfd;
	volatile bool stop;
	unsigned long removes, writes, maps;
	int err;		/* errno of the first failure, or 0 */
	const char *what;	/* what failed */
};

static void race_fail(struct remove_race *rr, const char *what)
{
	if (!rr->err) {
		rr->err = errno ? errno : -1;
		rr->what = what;
	}
	rr->stop = true;
}

static void *race_remove(void *arg)
{
	struct remove_race *rr = arg;

	while (!rr->stop) {
		if (madvise(rr->p, RACE_PAGES * PG, MADV_REMOVE))
			race_fail(rr, "madvise(MADV_REMOVE)");
		rr->removes++;
	}
	return NULL;
}

static void *race_write(void *arg)
{
	const size_t half = RACE_PAGES / 2 * PG;
	struct remove_race *rr = arg;
	unsigned long i = 0;
	ssize_t n;

	while (!rr->stop) {
		/* The upper half of the object into its lower half. */
		n = pwrite(rr->mfd, rr->p + half, half, (i++ % 2) * PG);
		if (n <= 0)
			race_fail(rr, "pwrite(memfd, attachment)");
		rr->writes++;
	}
	return NULL;
}

static void *race_map(void *arg)
{
	struct remove_race *rr = arg;
	char *m;

	while (!rr->stop) {
		if (rr->maps % 8 == 7)
			m = mshare_attach(rr->r->fd, NULL, RW, 0);
		else
			m = mmap(NULL, PG, RW, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
		if (m == MAP_FAILED) {
			race_fail(rr, "mmap");
			break;
		}
		if (munmap(m, rr->maps % 8 == 7 ? A : PG))
			race_fail(rr, "munmap");
		rr->maps++;
	}
	return NULL;
}

TEST_F_TIMEOUT(madv, remove_vs_write_no_deadlock, 120)
{
	void *(*const fn[3])(void *) = { race_remove, race_write, race_map };
	struct remove_race rr = { .r = &self->r };
	int fd = self->r.fd, i, joined = 0;
	struct timespec dl;
	pthread_t t[3];
	char *p;

	rr.mfd = memfd_sized("ops-race", 0, RACE_PAGES * PG);
	ASSERT_LE(0, rr.mfd);
	ASSERT_OK(create_mapping(fd, 0, RACE_PAGES * PG, 0, RW, FILEMAP,
				 rr.mfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	rr.p = p;
	fill(p, RACE_PAGES * PG, 42);

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, fn[i], &rr));
	sleep(RACE_SECONDS);
	rr.stop = true;
	/* A deadlocked thread never comes back: give them 30 s. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	for (i = 0; i < 3; i++)
		joined += !pthread_timedjoin_np(t[i], NULL, &dl);
	ASSERT_EQ(3, joined) TH_LOG("%d of 3 threads stuck (deadlock?)",
				    3 - joined);
	TH_LOG("%lu removes, %lu writes, %lu maps", rr.removes, rr.writes,
	       rr.maps);
	ASSERT_EQ(0, rr.err) TH_LOG("%s: %s", rr.what, strerror(rr.err));
	ASSERT_LT(0UL, rr.removes);
	ASSERT_LT(0UL, rr.writes);
	ASSERT_LT(0UL, rr.maps);

	/* Memory and file still agree, for everyone. */
	fill(p, RACE_PAGES * PG, 43);
	ASSERT_EQ(-1L, file_mismatch(rr.mfd, 0, RACE_PAGES * PG, 43));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, RACE_PAGES * PG, 43));
	ASSERT_OK(madvise(p, RACE_PAGES * PG, MADV_REMOVE));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, RACE_PAGES * PG, ZERO));
	ASSERT_OK(munmap(p, A));
	close(rr.mfd);
}

TEST_F(madv, free_refused)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, BIG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill_pages(p, BIG, 8);
	fill(p, 4 * PG, 8);
	/* Objects are shared memory, which MADV_FREE does not apply to. */
	ASSERT_FAILS(EINVAL, madvise(p, BIG, MADV_FREE));
	ASSERT_FAILS(EINVAL, madvise(p, 4 * PG, MADV_FREE));
	ASSERT_RSS(fd, BIG);
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 4 * PG, 8));
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, BIG, 8));
	ASSERT_OK(munmap(p, A));
}

TEST_F(madv, hints)
{
	static const struct {
		const char *name;
		int advice;
	} ok[] = {
		{ "MADV_NORMAL", MADV_NORMAL },
		{ "MADV_RANDOM", MADV_RANDOM },
		{ "MADV_SEQUENTIAL", MADV_SEQUENTIAL },
		{ "MADV_WILLNEED", MADV_WILLNEED },
		{ "MADV_COLD", MADV_COLD },
		{ "MADV_PAGEOUT", MADV_PAGEOUT },
		{ "MADV_HUGEPAGE", MADV_HUGEPAGE },
		{ "MADV_NOHUGEPAGE", MADV_NOHUGEPAGE },
		{ "MADV_NORMAL", MADV_NORMAL },
	};
	const unsigned long size = 8 * PG;
	int fd = self->r.fd;
	size_t i;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, PROT_READ, 0));
	fill(p, size, 9);
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		errno = 0;
		ASSERT_EQ(0, madvise(p, size, ok[i].advice))
			TH_LOG("%s: %s", ok[i].name, strerror(errno));
		/* From a read-only attachment too. */
		ASSERT_EQ(0, madvise(q, size, ok[i].advice))
			TH_LOG("%s (read-only): %s", ok[i].name,
			       strerror(errno));
		ASSERT_PATTERN(q, size, 9);
	}
	/* Advice on whole objects leaves them whole. */
	ASSERT_EQ(1L, region_objects(fd));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, size, 9));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

TEST_F(madv, pageout_file)
{
	const unsigned long size = BIG;
	int fd = self->r.fd, dfd;
	char disk[PATH_MAX];
	cpu_set_t cpu;
	char *p, *q;

	/* Faults and advice on one CPU: no page left in another's LRU cache. */
	CPU_ZERO(&cpu);
	CPU_SET(0, &cpu);
	ASSERT_OK(sched_setaffinity(0, sizeof(cpu), &cpu));
	dfd = disk_file(disk, size, 10, O_RDWR);
	ASSERT_LE(0, dfd);
	ASSERT_OK(create_mapping(fd, 0, size, 0, RW, FILEMAP, dfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_PAGES(p, size, 10);
	ASSERT_RSS(fd, size);

	/* Cold only ages the pages. */
	ASSERT_OK(madvise(q, size, MADV_COLD));
	ASSERT_RSS(fd, size);
	/* Clean file pages are dropped: nothing of the region stays mapped. */
	ASSERT_OK(madvise(q, size, MADV_PAGEOUT));
	ASSERT_RSS(fd, 0);
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 4 * PG, 10));
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size, 10));
	ASSERT_PAGES(p, size, 10);
	ASSERT_RSS(fd, size);
	ASSERT_EQ(-1L, file_mismatch(dfd, 0, size, 10));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	close(dfd);
}

TEST_F(madv, pageout_anon)
{
	const unsigned long size = 16 * PG;
	int fd = self->r.fd;
	char *p;

	/* No swap in the test guest: the advice is taken, the data stays. */
	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, size, 11);
	ASSERT_OK(madvise(p, size, MADV_PAGEOUT));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, size, 11));
	ASSERT_PATTERN(p, size, 11);
	ASSERT_OK(munmap(p, A));
}

TEST_F(madv, populate)
{
	const unsigned long size = BIG, o2 = 64 * MIB, o3 = 128 * MIB;
	int fd = self->r.fd, rfd;
	char *p, *q, *r;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_OK(create_anon(fd, o2, size, RW));
	ASSERT_OK(create_anon(fd, o3, PG, PROT_READ));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_EQ(0L, region_rss(fd));

	ASSERT_OK(madvise(p, size, MADV_POPULATE_READ));
	ASSERT_RSS(fd, size);
	ASSERT_OK(madvise(q + o2, size, MADV_POPULATE_WRITE));
	ASSERT_RSS(fd, 2 * size);
	ASSERT_PAGES(p + o2, size, ZERO);
	ASSERT_RSS(fd, 2 * size);

	/* Writing needs a writable attachment and a writable object. */
	ASSERT_FAILS(EINVAL, madvise(r, size, MADV_POPULATE_WRITE));
	ASSERT_FAILS(EINVAL, madvise(p + o3, PG, MADV_POPULATE_WRITE));
	ASSERT_OK(madvise(r + o3, PG, MADV_POPULATE_READ));
	ASSERT_OK(madvise(r, size, MADV_POPULATE_READ));

	/* The page of the PROT_READ object is resident now. */
	ASSERT_RSS(fd, 2 * size + PG);

	/* Holes: what lies before one is populated all the same. */
	ASSERT_OK(madvise(p, size, MADV_DONTNEED));
	ASSERT_RSS(fd, size + PG);
	ASSERT_FAILS(ENOMEM, madvise(p, size + PG, MADV_POPULATE_READ));
	ASSERT_RSS(fd, 2 * size + PG);
	ASSERT_FAILS(ENOMEM, madvise(p + size, PG, MADV_POPULATE_WRITE));
	ASSERT_FAILS(ENOMEM, madvise(r + o3 + PG, PG, MADV_POPULATE_READ));

	fill_pages(p, size, 12);
	fill(q + o2, 4 * PG, 13);
	ASSERT_PAGES(r, size, 12);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size, 12));
	ASSERT_EQ(0, peer_check(&self->r, p, o2, 4 * PG, 13));
	ASSERT_OK(munmap(r, A));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	close(rfd);
}

/* 0 if the attachment at @p is neither mapped nor in maps; 2 if listed. */
static int child_lacks(void *arg)
{
	struct touch *t = arg;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (FAILED(f != NULL))
		return 3;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, MSHARE_DIR "/ops-")) {
			fprintf(stderr, "# child still maps %s", line);
			fclose(f);
			return 2;
		}
	fclose(f);
	return do_read(t);
}

TEST_F(madv, dontfork)
{
	struct touch t;
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, PG, 40);
	t.p = p;
	t.val = pat(40, 0);

	/* Only on the whole attachment: it is all or nothing. */
	ASSERT_FAILS(EINVAL, madvise(p, PG, MADV_DONTFORK));
	ASSERT_FAILS(EINVAL, madvise(p + PG, A - PG, MADV_DONTFORK));
	ASSERT_EQ(0, child_read(p, pat(40, 0)));

	ASSERT_OK(madvise(p, A, MADV_DONTFORK));
	ASSERT_EQ(SEGV, run_child(child_lacks, &t));
	/* The parent and other sharers are unaffected. */
	ASSERT_PATTERN(p, PG, 40);
	/* (Such a child may well attach where the parent did.) */
	ASSERT_EQ(0, peer_check(&self->r, NULL, 0, PG, 40));
	ASSERT_EQ(0, peer_write(&self->r, NULL, PG - 1, 'G'));
	ASSERT_EQ('G', p[PG - 1]);

	ASSERT_FAILS(EINVAL, madvise(p, PG, MADV_DOFORK));
	ASSERT_OK(madvise(p, A, MADV_DOFORK));
	ASSERT_EQ(0, child_read(p, pat(40, 0)));
	ASSERT_EQ(0, child_read(p + PG - 1, 'G'));
	ASSERT_OK(munmap(p, A));
}

TEST_F(madv, refused)
{
	static const struct {
		const char *name;
		int advice;
	} bad[] = {
		{ "MADV_MERGEABLE", MADV_MERGEABLE },
		{ "MADV_UNMERGEABLE", MADV_UNMERGEABLE },
		{ "MADV_WIPEONFORK", MADV_WIPEONFORK },
		{ "MADV_KEEPONFORK", MADV_KEEPONFORK },
		{ "MADV_COLLAPSE", MADV_COLLAPSE },
		{ "MADV_DONTDUMP", MADV_DONTDUMP },
		{ "MADV_DODUMP", MADV_DODUMP },
		{ "MADV_FREE", MADV_FREE },
	};
	int fd = self->r.fd;
	size_t i;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 4 * PG, 14);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_FAILS_MSG(EINVAL, madvise(p, 4 * PG, bad[i].advice),
				 " (%s)", bad[i].name);
		ASSERT_FAILS_MSG(EINVAL, madvise(p, A, bad[i].advice),
				 " (%s, whole attachment)", bad[i].name);
	}
	ASSERT_EQ(1L, region_objects(fd));
	ASSERT_RSS(fd, 4 * PG);
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 4 * PG, 14));
	/* MADV_WIPEONFORK did not take: a child sees the data. */
	ASSERT_EQ(0, child_read(p + PG, pat(14, PG)));
	ASSERT_OK(munmap(p, A));
}

TEST_F(madv, holes)
{
	const unsigned long size = BIG, o2 = BIG + MIB;
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_OK(create_anon(fd, o2, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill_pages(p, size, 15);
	fill_pages(p + o2, size, 16);
	ASSERT_RSS(fd, 2 * size);

	/* The mapped parts are advised, the hole is reported. */
	ASSERT_FAILS(ENOMEM, madvise(p, o2 + size, MADV_DONTNEED));
	ASSERT_RSS(fd, 0);
	ASSERT_FAILS(ENOMEM, madvise(p + size, MIB, MADV_DONTNEED));
	ASSERT_FAILS(ENOMEM, madvise(p + size, MIB, MADV_WILLNEED));
	ASSERT_FAILS(ENOMEM, madvise(p, A, MADV_NORMAL));
	ASSERT_FAILS(ENOMEM, madvise(p + size, MIB, MADV_POPULATE_READ));
	/* Punch the second half of one object and the first of the next. */
	ASSERT_FAILS(ENOMEM, madvise(p + size / 2, o2, MADV_REMOVE));
	ASSERT_PAGES(p, size / 2, 15);
	ASSERT_PAGES(p + size / 2, size / 2, ZERO);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, o2, size / 2, ZERO));
	ASSERT_PAGES_FROM(p + o2 + size / 2, size / 2, 16, size / 2);
	ASSERT_EQ(0, peer_check_pages_from(&self->r, p, o2 + size / 2,
					   size / 2, 16, size / 2));
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size / 2, 15));
	ASSERT_EQ(2L, region_objects(fd));
	ASSERT_OK(munmap(p, A));
}

/* ---- mprotect ------------------------------------------------------------ */

OPS_FIXTURE(mprot)

TEST_F(mprot, read_only_range)
{
	const unsigned long size = 8 * PG;
	int fd = self->r.fd;
	struct fdinfo fi;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	/* Populated writable first: the change must reach existing entries. */
	fill(p, size, 17);

	ASSERT_OK(mprotect(p + 2 * PG, 2 * PG, PROT_READ));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(3L, fi.objects);
	ASSERT_OBJ(&fi.obj[0], 0, 2 * PG, "rw-", 0, "anon");
	ASSERT_OBJ(&fi.obj[1], 2 * PG, 2 * PG, "r--", 2 * PG, "anon");
	ASSERT_OBJ(&fi.obj[2], 4 * PG, 4 * PG, "rw-", 4 * PG, "anon");

	/* For everyone: this process, its other attachment, a peer. */
	ASSERT_EQ(SEGV, child_write(p + 2 * PG, 'x'));
	ASSERT_EQ(SEGV, child_write(q + 3 * PG + 7, 'x'));
	ASSERT_EQ(SEGV, peer_write(&self->r, p, 2 * PG, 'x'));
	ASSERT_EQ(0, child_read(q + 2 * PG, pat(17, 2 * PG)));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, size, 17));
	/* Its neighbours stay writable (with what they hold already). */
	ASSERT_EQ(0, peer_write(&self->r, p, 4 * PG, pat(17, 4 * PG)));
	ASSERT_EQ(0, child_write(q + PG, pat(17, PG)));

	ASSERT_OK(mprotect(q + 2 * PG, 2 * PG, RW));
	ASSERT_FDINFO(fd, &fi);
	ASSERT_EQ(1L, fi.objects);
	ASSERT_OBJ(&fi.obj[0], 0, size, "rw-", 0, "anon");
	ASSERT_EQ(0, peer_write(&self->r, p, 2 * PG, 'y'));
	ASSERT_EQ('y', p[2 * PG]);
	p[2 * PG] = pat(17, 2 * PG);
	ASSERT_PATTERN(q, size, 17);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

TEST_F(mprot, none)
{
	const unsigned long size = 4 * PG;
	int fd = self->r.fd;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	fill(p, size, 18);

	ASSERT_OK(mprotect(p, size, PROT_NONE));
	ASSERT_STREQ("---", obj_prot(fd, 0));
	ASSERT_EQ(SEGV, child_read(p, pat(18, 0)));
	ASSERT_EQ(SEGV, child_read(q + 3 * PG, pat(18, 3 * PG)));
	ASSERT_EQ(SEGV, peer_check(&self->r, p, 0, 1, 18));
	ASSERT_EQ(SEGV, peer_write(&self->r, p, PG, 'x'));

	ASSERT_OK(mprotect(q, size, PROT_READ));
	ASSERT_STREQ("r--", obj_prot(fd, 0));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, size, 18));
	ASSERT_EQ(SEGV, child_write(p, 'x'));
	ASSERT_OK(mprotect(p, size, RW));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_PATTERN(q, size, 18);
	ASSERT_EQ(0, child_write(q, 'z'));
	ASSERT_EQ('z', p[0]);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

TEST_F(mprot, read_only_attachment)
{
	int fd = self->r.fd, rfd;
	char *p, *r, *s;

	ASSERT_OK(create_anon(fd, 0, 2 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 2 * PG, 19);

	/* Region open read-only: no change at all, not even less access. */
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_FAILS(EACCES, mprotect(r, PG, RW));
	ASSERT_FAILS(EACCES, mprotect(r, PG, PROT_WRITE));
	ASSERT_FAILS(EACCES, mprotect(r, PG, PROT_READ));
	ASSERT_FAILS(EACCES, mprotect(r, 2 * PG, PROT_NONE));
	ASSERT_EQ(1L, region_objects(fd));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_EQ(0, peer_write(&self->r, p, PG, pat(19, PG)));

	/*
	 * A read-only attachment of a region open for writing changes the
	 * objects for everyone, but still cannot write itself.
	 */
	ASSERT_MAPS(s, mshare_attach(fd, NULL, PROT_READ, 0));
	ASSERT_OK(mprotect(p, 2 * PG, PROT_READ));
	ASSERT_STREQ("r--", obj_prot(fd, 0));
	ASSERT_OK(mprotect(s, 2 * PG, RW));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_EQ(SEGV, child_write(s, 'x'));
	ASSERT_EQ(0, child_write(p, pat(19, 0)));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 2 * PG, 19));
	ASSERT_PATTERN(r, 2 * PG, 19);
	ASSERT_OK(munmap(s, A));
	ASSERT_OK(munmap(r, A));
	ASSERT_OK(munmap(p, A));
	close(rfd);
}

TEST_F(mprot, exec)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'E';
	ASSERT_FAILS(EACCES, mprotect(p, PG, PROT_EXEC));
	ASSERT_FAILS(EACCES, mprotect(p, PG, PROT_READ | PROT_EXEC));
	ASSERT_FAILS(EACCES, mprotect(p, PG, RW | PROT_EXEC));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_EQ(0, peer_write(&self->r, p, 1, 'e'));
	ASSERT_EQ(0, child_read(p + 1, 'e'));
	ASSERT_OK(munmap(p, A));
}

TEST_F(mprot, read_only_backing)
{
	int fd = self->r.fd, mfd, rfd, dfd;
	char disk[PATH_MAX], path[64], *p;

	mfd = memfd_sized("ops", 0, PG);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(1, pwrite(mfd, "M", 1, 0));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	dfd = disk_file(disk, PG, 20, O_RDONLY);
	ASSERT_LE(0, dfd);
	ASSERT_OK(create_mapping(fd, 0, PG, 0, PROT_READ, FILEMAP, rfd));
	ASSERT_OK(create_mapping(fd, PG, PG, 0, PROT_READ, FILEMAP, dfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));

	/* The backing's open mode still rules. */
	ASSERT_FAILS(EACCES, mprotect(p, PG, RW));
	ASSERT_FAILS(EACCES, mprotect(p + PG, PG, RW));
	ASSERT_FAILS(EACCES, mprotect(p, 2 * PG, RW));
	ASSERT_STREQ("r--", obj_prot(fd, 0));
	ASSERT_STREQ("r--", obj_prot(fd, PG));
	ASSERT_EQ(SEGV, child_write(p, 'x'));
	ASSERT_EQ(SEGV, peer_write(&self->r, p, PG, 'x'));

	/* Less access is fine. */
	ASSERT_OK(mprotect(p, 2 * PG, PROT_NONE));
	ASSERT_EQ(SEGV, child_read(p, 'M'));
	ASSERT_EQ(SEGV, peer_check(&self->r, p, PG, PG, 20));
	ASSERT_OK(mprotect(p, 2 * PG, PROT_READ));
	ASSERT_EQ(0, child_read(p, 'M'));
	ASSERT_EQ(0, peer_check(&self->r, p, PG, PG, 20));
	ASSERT_EQ(2L, region_objects(fd));
	ASSERT_OK(munmap(p, A));
	close(dfd);
	close(rfd);
	close(mfd);
}

TEST_F(mprot, holes)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_OK(create_anon(fd, 8 * PG, 4 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 4 * PG, 21);

	/* Starting in a hole: nothing changes. */
	ASSERT_FAILS(ENOMEM, mprotect(p + 4 * PG, 8 * PG, PROT_READ));
	ASSERT_FAILS(ENOMEM, mprotect(p + A - PG, PG, PROT_READ));
	ASSERT_STREQ("rw-", obj_prot(fd, 8 * PG));
	ASSERT_EQ(2L, region_objects(fd));
	/* As for mprotect() of unmapped memory: up to the hole. */
	ASSERT_FAILS(ENOMEM, mprotect(p, 12 * PG, PROT_READ));
	ASSERT_STREQ("r--", obj_prot(fd, 0));
	ASSERT_STREQ("rw-", obj_prot(fd, 8 * PG));
	ASSERT_FAILS(ENOMEM, mprotect(p, A, RW));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 4 * PG, 21));
	ASSERT_EQ(0, peer_write(&self->r, p, 8 * PG, 'h'));
	ASSERT_EQ('h', p[8 * PG]);
	ASSERT_OK(munmap(p, A));
}

TEST_F(mprot, hugetlb)
{
	int fd = self->r.fd;
	char *p;

	if (meminfo_kb("HugePages_Free") < 1)
		SKIP(return, "no free 2 MiB huge page");
	ASSERT_OK(create_mapping(fd, 0, HPAGE, 0, RW, ANON | MAP_HUGETLB, -1));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, HPAGE, 22);
	/* Huge pages cannot be split. */
	ASSERT_FAILS(EINVAL, mprotect(p + PG, PG, PROT_READ));
	ASSERT_STREQ("rw-", obj_prot(fd, 0));
	ASSERT_OK(mprotect(p, HPAGE, PROT_READ));
	ASSERT_STREQ("r--", obj_prot(fd, 0));
	ASSERT_EQ(SEGV, peer_write(&self->r, p, HPAGE - 1, 'x'));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, HPAGE, 22));
	ASSERT_OK(mprotect(p, HPAGE, RW));
	ASSERT_EQ(0, child_write(p + HPAGE - 1, pat(22, HPAGE - 1)));
	ASSERT_PATTERN(p, HPAGE, 22);
	ASSERT_OK(munmap(p, A));
}

/* ---- mlock ------------------------------------------------------------- */

OPS_FIXTURE(mlock)

TEST_F(mlock, populates_and_locks)
{
	const unsigned long size = BIG;
	int fd = self->r.fd;
	char *p, *q;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(0L, region_rss(fd));

	ASSERT_OK(mlock(p, size));
	ASSERT_RSS(fd, size);
	/* Locked in the region, not counted as this process's. */
	ASSERT_EQ(0L, mshare_proc_value("/proc/self/status", "VmLck"));
	/* Locked for every sharer: the pages cannot be dropped. */
	ASSERT_FAILS(EINVAL, madvise(q, size, MADV_DONTNEED));
	ASSERT_FAILS(EINVAL, madvise(q, size, MADV_PAGEOUT));
	ASSERT_FAILS(EINVAL, madvise(q, size, MADV_COLD));
	ASSERT_RSS(fd, size);
	ASSERT_OK(madvise(q, size / 2, MADV_DONTNEED_LOCKED));
	ASSERT_RSS(fd, size / 2);
	/* Locking again what is locked is fine. */
	ASSERT_OK(mlock(q, size));
	ASSERT_RSS(fd, size);

	fill_pages(q, size, 23);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size, 23));
	ASSERT_OK(munlock(q, size));
	ASSERT_OK(madvise(p, size, MADV_DONTNEED));
	ASSERT_RSS(fd, 0);
	ASSERT_PAGES(p, size, 23);
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
}

static int child_mlocks(void *arg)
{
	char *p = arg;

	return mlock(p, 8 * PG) ? 1 : 0;
}

TEST_F(mlock, outlives_the_locker)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 8 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	fill(p, 8 * PG, 24);
	/* As a thread's mlock() stays after the thread exits. */
	ASSERT_EQ(0, run_child(child_mlocks, p));
	ASSERT_FAILS(EINVAL, madvise(p, 8 * PG, MADV_DONTNEED));
	ASSERT_OK(munlock(p, 8 * PG));
	ASSERT_OK(madvise(p, 8 * PG, MADV_DONTNEED));
	ASSERT_EQ(0, peer_check(&self->r, p, 0, 8 * PG, 24));
	ASSERT_OK(munmap(p, A));
}

TEST_F(mlock, onfault)
{
	const unsigned long size = BIG;
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, size, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_OK(mlock2(p, size, MLOCK_ONFAULT));
	/* Locked (for everyone), but populated only where touched. */
	ASSERT_FAILS(EINVAL, madvise(p, size, MADV_DONTNEED));
	ASSERT_RSS(fd, 0);
	fill_pages(p, size / 2, 41);
	ASSERT_RSS(fd, size / 2);
	ASSERT_OK(munlock(p, size));
	ASSERT_OK(madvise(p, size, MADV_DONTNEED));
	ASSERT_RSS(fd, 0);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, size / 2, 41));
	ASSERT_OK(munmap(p, A));
}

TEST_F(mlock, holes)
{
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_OK(create_anon(fd, 8 * PG, 4 * PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_FAILS(ENOMEM, mlock(p, 12 * PG));
	ASSERT_FAILS(ENOMEM, mlock(p + 4 * PG, PG));
	ASSERT_FAILS(ENOMEM, mlock(p, A));
	ASSERT_FAILS(ENOMEM, mlock2(p + 2 * PG, 8 * PG, MLOCK_ONFAULT));
	ASSERT_FAILS(ENOMEM, munlock(p, 12 * PG));
	ASSERT_OK(munlock(p, 4 * PG));
	ASSERT_OK(munlock(p + 8 * PG, 4 * PG));
	ASSERT_OK(madvise(p, 4 * PG, MADV_DONTNEED));
	ASSERT_OK(madvise(p + 8 * PG, 4 * PG, MADV_DONTNEED));
	ASSERT_EQ(0, peer_write(&self->r, p, 9 * PG, 'l'));
	ASSERT_EQ('l', p[9 * PG]);
	ASSERT_EQ(0, child_read(p + 9 * PG, 'l'));
	ASSERT_OK(munmap(p, A));
}

struct mlockall_arg {
	int fd;
	long want;	/* region rss after mlockall() */
};

static int child_mlockall(void *arg)
{
	struct mlockall_arg *m = arg;
	long rss;

	if (FAILED(mlockall(MCL_CURRENT) == 0))
		return 2;
	rss = region_rss(m->fd);
	if (FAILED(munlockall() == 0))
		return 2;
	if (rss == m->want)
		return 0;
	fprintf(stderr, "# region rss %ld after mlockall, want %ld\n",
		rss, m->want);
	return 1;
}

TEST_F(mlock, mlockall)
{
	struct mlockall_arg m = { self->r.fd, BIG };
	int fd = self->r.fd;
	char *p;

	ASSERT_OK(create_anon(fd, 0, BIG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(0, run_child(child_mlockall, &m));
	/* munlockall() unlocked the region again. */
	ASSERT_OK(madvise(p, BIG, MADV_DONTNEED));
	ASSERT_RSS(fd, 0);
	ASSERT_EQ(0, peer_check_pages(&self->r, p, 0, BIG, ZERO));
	ASSERT_OK(munmap(p, A));
}

TEST_F(mlock, mlockall_after_hole)
{
	struct mlockall_arg m = { self->r.fd, 2 * BIG };
	int fd = self->r.fd;
	char *p;

	/* Every object gets locked, so every object must be made resident. */
	ASSERT_OK(create_anon(fd, 0, BIG, RW));
	ASSERT_OK(create_anon(fd, GIB, BIG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(0, run_child(child_mlockall, &m));
	ASSERT_OK(madvise(p + GIB, BIG, MADV_DONTNEED));
	ASSERT_EQ(0, peer_check_pages(&self->r, p, GIB, BIG, ZERO));
	ASSERT_OK(munmap(p, A));
}

/* ---- msync and fsync --------------------------------------------------- */

OPS_FIXTURE(sync)

TEST_F(sync, file_object)
{
	const unsigned long size = 8 * PG;
	int fd = self->r.fd, dfd, rfd;
	char disk[PATH_MAX];
	char *p, *q, *r;

	dfd = disk_file(disk, size, 25, O_RDWR);
	ASSERT_LE(0, dfd);
	ASSERT_OK(create_anon(fd, 0, 4 * PG, RW));
	ASSERT_OK(create_mapping(fd, MIB, size, 0, RW, FILEMAP, dfd));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_MAPS(q, mshare_attach(fd, NULL, RW, 0));
	rfd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_MAPS(r, mshare_attach(rfd, NULL, PROT_READ, 0));
	ASSERT_PATTERN(q + MIB, size, 25);

	fill(p + MIB, size, 26);
	ASSERT_OK(msync(q + MIB, size, MS_SYNC));
	ASSERT_EQ(-1L, file_mismatch(dfd, 0, size, 26));
	ASSERT_EQ(0, peer_check(&self->r, p, MIB, size, 26));

	/* The other flags, ranges with holes, read-only attachments. */
	fill(q + MIB, size, 27);
	ASSERT_OK(msync(p + MIB, size, MS_ASYNC));
	ASSERT_OK(msync(p + MIB, size, MS_INVALIDATE));
	ASSERT_OK(msync(p + MIB, PG, MS_SYNC | MS_INVALIDATE));
	ASSERT_OK(msync(p, 2 * MIB, MS_SYNC));
	ASSERT_OK(msync(r, A, MS_SYNC));
	ASSERT_OK(msync(r + MIB + PG, PG, MS_SYNC));
	ASSERT_OK(msync(p, 4 * PG, MS_SYNC));
	ASSERT_FAILS(EINVAL, msync(p, PG, MS_SYNC | MS_ASYNC));
	ASSERT_EQ(-1L, file_mismatch(dfd, 0, size, 27));
	ASSERT_PATTERN(r + MIB, size, 27);

	/* fsync() of the region writes back its file objects. */
	fill(p + MIB, size, 28);
	ASSERT_OK(fsync(fd));
	ASSERT_OK(fdatasync(fd));
	ASSERT_OK(fsync(rfd));
	ASSERT_EQ(-1L, file_mismatch(dfd, 0, size, 28));
	ASSERT_EQ(0, peer_check(&self->r, p, MIB, size, 28));
	ASSERT_OK(munmap(r, A));
	ASSERT_OK(munmap(q, A));
	ASSERT_OK(munmap(p, A));
	close(rfd);
	close(dfd);
}

TEST_F(sync, no_file_objects)
{
	int fd = self->r.fd;
	char *p;

	/* Nothing to write back is no error. */
	ASSERT_OK(fsync(fd));
	ASSERT_OK(create_anon(fd, 0, PG, RW));
	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	p[0] = 'S';
	ASSERT_OK(msync(p, PG, MS_SYNC));
	ASSERT_OK(msync(p, A, MS_SYNC | MS_INVALIDATE));
	ASSERT_OK(fsync(fd));
	ASSERT_EQ(0, child_read(p, 'S'));
	ASSERT_OK(munmap(p, A));
}

TEST_HARNESS_MAIN
