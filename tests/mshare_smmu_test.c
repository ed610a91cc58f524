// SPDX-License-Identifier: GPL-2.0
/*
 * Secondary MMUs on msharefs attachments. A process whose mm has mmu
 * notifiers (a KVM host, a device mirroring it through HMM) may map the
 * region's pages through its attachment; the region relays its changes
 * to the process's notifiers, so the secondary MMU drops what changed.
 *
 * The secondary MMU here is the kernel's HMM test driver (lib/test_hmm.c,
 * CONFIG_TEST_HMM): /dev/hmm_dmirror0 mirrors the opening process through
 * hmm_range_fault() and an interval notifier, and its READ and WRITE
 * commands copy through that mirror, faulting only what the mirror lacks
 * (counted in cmd.faults). So:
 *
 *  - the device reads and writes the region through an attachment, and a
 *    second read is served from its mirror (no fault);
 *  - MSHAREFS_UNMAP and a new object by another process, at its own
 *    address, invalidate the mirror: the device reads the new data, never
 *    the old; so does MADV_DONTNEED by another sharer (a fault again, the
 *    same data), and a stream of replacements raced against device reads;
 *  - a read-only attachment gives the device no write: WRITE is EPERM,
 *    the snapshot shows read-only pages, the data stays;
 *  - GUP without a pin (/proc/self/mem) works for a process with notifiers;
 *  - detaching, or closing the device, while relayed leaves nothing behind.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y and CONFIG_TEST_HMM=y, and
 * msharefs on /sys/fs/mshare.
 *
 * Build: make -C tests, or
 *   gcc -static -O2 -Wall -Wextra -I<linux>/tools/testing/selftests \
 *       -iquote <linux>/lib -I<uapi headers> -o mshare_smmu_test \
 *       mshare_smmu_test.c -lmshare -lpthread
 * Run:   ./mshare_smmu_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <stdint.h>
#include <time.h>

#include "test_hmm_uapi.h"

#include "mshare_test.h"

#define DMIRROR		"/dev/hmm_dmirror0"
#define OBJ		(1UL << 20)		/* the object, at offset 0 */
#define NPAGES		(OBJ / PG)
#define RACE_MS		1500

/* The alignment (and size of every region here), from mshare_info. */
static unsigned long A;

struct region {
	char path[64];
	int fd;		/* O_RDWR */
	pid_t pid;	/* of the test process */
};

FIXTURE(smmu) {
	struct region r;
	char *p;	/* a writer's attachment */
	char *buf;	/* the device's bounce buffer */
	int dev;	/* /dev/hmm_dmirror0, mirroring this process */
};

/* A memfd of OBJ bytes, each 8-byte word holding @gen; -1 on error. */
static int memfd_gen(uint64_t gen)
{
	int fd = memfd_sized("smmu", MFD_CLOEXEC, OBJ);
	uint64_t *w;
	size_t i;

	if (fd < 0)
		return -1;
	w = mmap(NULL, OBJ, RW, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED) {
		close(fd);
		return -1;
	}
	for (i = 0; i < OBJ / sizeof(*w); i++)
		w[i] = gen;
	munmap(w, OBJ);
	return fd;
}

/* Replace the object at offset 0 by a memfd holding @gen. */
static int replace_object(int rfd, uint64_t gen)
{
	struct mshare_unmap u = { .region_offset = 0, .size = OBJ };
	int mfd = memfd_gen(gen), ret;

	if (mfd < 0)
		return -1;
	ret = ioctl(rfd, MSHAREFS_UNMAP, &u);
	if (!ret)
		ret = create_mapping(rfd, 0, OBJ, 0, RW, FILEMAP, mfd);
	close(mfd);
	return ret;
}

/*
 * The device's command @req on @npages at @addr, with @buf as its data;
 * 0 or -errno. @faults gets the pages the device had to fault in.
 */
static int dmirror(int dev, unsigned long req, void *addr, void *buf,
		   unsigned long npages, uint64_t *faults)
{
	struct hmm_dmirror_cmd cmd = {
		.addr	= (uintptr_t)addr,
		.ptr	= (uintptr_t)buf,
		.npages	= npages,
	};

	if (ioctl(dev, req, &cmd))
		return -errno;
	if (faults)
		*faults = cmd.faults;
	return cmd.cpages == npages ? 0 : -EIO;
}

/* Page index of the first page of @p not all @gen, or -1. */
static long first_not_gen(const char *p, uint64_t gen)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t i;

	for (i = 0; i < OBJ / sizeof(*w); i++)
		if (w[i] != gen)
			return i * sizeof(*w) / PG;
	return -1;
}

/* Is the page at @p one generation, all its words equal? */
static bool page_uniform(const char *p)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t i;

	for (i = 1; i < PG / sizeof(*w); i++)
		if (w[i] != w[0])
			return false;
	return true;
}

/* The access a snapshot shows, without the page-size bits. */
#define SNAP_ACCESS(prot)	((prot) & (HMM_DMIRROR_PROT_READ |	\
					   HMM_DMIRROR_PROT_WRITE))

/* The first page of a snapshot without access @want, or -1. */
static long first_access_not(const unsigned char *prot, unsigned int want)
{
	size_t i;

	for (i = 0; i < NPAGES; i++)
		if (SNAP_ACCESS(prot[i]) != want)
			return i;
	return -1;
}

#define ASSERT_GEN(p, gen) do {						\
	long _at = first_not_gen(p, gen);				\
									\
	ASSERT_EQ(-1L, _at) TH_LOG("page %ld: %#lx, want %#lx", _at,	\
				   (unsigned long)*(uint64_t *)((p) +	\
				   (_at > 0 ? _at : 0) * PG),		\
				   (unsigned long)(gen));		\
} while (0)

FIXTURE_SETUP(smmu)
{
	static int seq;
	struct region *r = &self->r;
	int mfd;

	r->fd = -1;
	r->pid = getpid();
	ASSERT_NE(0UL, A) TH_LOG("msharefs is not mounted on " MSHARE_DIR);
	self->dev = open(DMIRROR, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev) TH_LOG(DMIRROR ": %s (CONFIG_TEST_HMM=y?)",
				       strerror(errno));
	snprintf(r->path, sizeof(r->path), MSHARE_DIR "/sm-%d-%d",
		 getpid(), seq++);
	r->fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ASSERT_LE(0, r->fd) TH_LOG("%s: %s", r->path, strerror(errno));
	ASSERT_OK(ftruncate(r->fd, A));
	mfd = memfd_gen(1);
	ASSERT_LE(0, mfd);
	ASSERT_OK(create_mapping(r->fd, 0, OBJ, 0, RW, FILEMAP, mfd));
	close(mfd);
	ASSERT_MAPS(self->p, mshare_attach(r->fd, NULL, RW, 0));
	ASSERT_MAPS(self->buf, mmap(NULL, OBJ, RW,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}

FIXTURE_TEARDOWN_PARENT(smmu)
{
	if (self->r.pid)
		unlink_tagged(MSHARE_DIR, "sm", self->r.pid);
}

/* What a child sharer does to the region, at an address of its own. */
struct change {
	int fd;
	uint64_t gen;		/* replace the object by this, if not 0 */
	int advice;		/* or give this advice, if not 0 */
};

static int change_child(void *arg)
{
	const struct change *c = arg;
	char *q = mshare_attach(c->fd, NULL, RW, 0);

	if (FAILED(q != MAP_FAILED))
		return 1;
	if (c->gen && FAILED(!replace_object(c->fd, c->gen)))
		return 1;
	if (c->advice && FAILED(!madvise(q, OBJ, c->advice)))
		return 1;
	/* The change is seen through this attachment too. */
	if (FAILED(first_not_gen(q, c->gen ? c->gen : 1) == -1))
		return 1;
	return 0;
}

/* The device reads the region; a second read needs no fault. */
TEST_F(smmu, read_through_attachment)
{
	uint64_t faults = 0;

	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, &faults));
	ASSERT_GEN(self->buf, 1);
	ASSERT_LT(0UL, faults);
	memset(self->buf, 0, OBJ);
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, &faults));
	ASSERT_GEN(self->buf, 1);
	ASSERT_EQ(0UL, faults) TH_LOG("the mirror kept nothing");
}

/*
 * Another sharer replaces the object (MSHAREFS_UNMAP, a new object, at
 * its own address): the device's mirror was invalidated, so it faults
 * and reads the new data, never the old.
 */
TEST_F(smmu, unmap_invalidates_mirror)
{
	struct change c = { .fd = self->r.fd, .gen = 2 };
	uint64_t faults = 0;

	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, NULL));
	ASSERT_GEN(self->buf, 1);
	ASSERT_EQ(0, run_child(change_child, &c));
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, &faults));
	ASSERT_GEN(self->buf, 2);
	ASSERT_LT(0UL, faults) TH_LOG("read from a stale mirror");
	ASSERT_GEN(self->p, 2);
}

/* MADV_DONTNEED by another sharer zaps the region's PTEs: a fault again. */
TEST_F(smmu, zap_invalidates_mirror)
{
	struct change c = { .fd = self->r.fd, .advice = MADV_DONTNEED };
	uint64_t faults = 0;

	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, NULL));
	ASSERT_EQ(0, run_child(change_child, &c));
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, &faults));
	ASSERT_GEN(self->buf, 1);
	ASSERT_LT(0UL, faults) TH_LOG("the zap was not relayed");
}

/*
 * The device writes through a writer's attachment; every sharer sees it,
 * and the snapshot shows the pages writable.
 */
TEST_F(smmu, write_through_writer)
{
	unsigned char prot[NPAGES];
	char *q;

	memset(self->buf, 0x5a, OBJ);
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_WRITE, self->p, self->buf,
			  NPAGES, NULL));
	ASSERT_MAPS(q, mshare_attach(self->r.fd, NULL, PROT_READ, 0));
	ASSERT_GEN(q, 0x5a5a5a5a5a5a5a5aULL);
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_SNAPSHOT, self->p, prot,
			  NPAGES, NULL));
	ASSERT_EQ(-1L, first_access_not(prot, HMM_DMIRROR_PROT_WRITE));
}

/*
 * A read-only attachment (a descriptor opened O_RDONLY): the device may
 * read through it, not write, though the region's pages are writable for
 * its writers; the snapshot shows them read-only there.
 */
TEST_F(smmu, reader_cannot_write)
{
	unsigned char prot[NPAGES];
	char *ro;
	int rofd;

	/* The region's PTEs become writable: a writer writes. */
	memset(self->p, 7, OBJ);
	rofd = open(self->r.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rofd);
	ASSERT_MAPS(ro, mshare_attach(rofd, NULL, PROT_READ, 0));
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, ro, self->buf, NPAGES,
			  NULL));
	ASSERT_GEN(self->buf, 0x0707070707070707ULL);
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_SNAPSHOT, ro, prot, NPAGES,
			  NULL));
	ASSERT_EQ(-1L, first_access_not(prot, HMM_DMIRROR_PROT_READ));
	memset(self->buf, 0x33, OBJ);
	ASSERT_EQ(-EPERM, dmirror(self->dev, HMM_DMIRROR_WRITE, ro, self->buf,
				  NPAGES, NULL));
	ASSERT_GEN(self->p, 0x0707070707070707ULL);
	close(rofd);
}

/*
 * GUP without a pin, by a process with mmu notifiers (the device's), of
 * its attachment: /proc/self/mem reads the region.
 */
TEST_F(smmu, unpinned_gup_with_notifiers)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)OBJ, pread(fd, self->buf, OBJ,
				      (off_t)(uintptr_t)self->p))
		TH_LOG("%s", strerror(errno));
	ASSERT_GEN(self->buf, 1);
	close(fd);
}

/*
 * Detaching a relayed attachment, and closing the device while another
 * is relayed, with changes after each: nothing is left behind (the debug
 * kernel checks the rest), and a new attachment is mirrored afresh.
 */
TEST_F(smmu, detach_and_close_while_relayed)
{
	struct change c = { .fd = self->r.fd, .gen = 3 };
	char *q;

	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			  NPAGES, NULL));
	ASSERT_OK(munmap(self->p, A));
	ASSERT_EQ(0, run_child(change_child, &c));
	ASSERT_MAPS(q, mshare_attach(self->r.fd, NULL, RW, 0));
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, q, self->buf, NPAGES,
			  NULL));
	ASSERT_GEN(self->buf, 3);
	ASSERT_OK(close(self->dev));
	c.gen = 4;
	ASSERT_EQ(0, run_child(change_child, &c));
	ASSERT_GEN(q, 4);
	self->dev = open(DMIRROR, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_OK(dmirror(self->dev, HMM_DMIRROR_READ, q, self->buf, NPAGES,
			  NULL));
	ASSERT_GEN(self->buf, 4);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * A sharer replaces the object again and again, each time with the next
 * generation, and publishes it once in place; the device reads all the
 * while. A read that worked holds whole pages of one generation, none
 * older than what was published when the read began: a mirror that
 * missed an invalidation would serve an older (or freed) page.
 */
TEST_F(smmu, replace_race)
{
	volatile uint64_t *published;
	uint64_t gen, before, g;
	long reads = 0, refused = 0;
	double end;
	size_t i;
	pid_t pid;
	int ret;

	ASSERT_MAPS(published, mmap(NULL, PG, RW, MAP_SHARED | MAP_ANONYMOUS,
				    -1, 0));
	*published = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		end = now_ms() + RACE_MS;
		for (gen = 2; now_ms() < end; gen++) {
			if (FAILED(!replace_object(self->r.fd, gen)))
				_exit(1);
			*published = gen;
		}
		_exit(0);
	}
	end = now_ms() + RACE_MS;
	while (now_ms() < end) {
		before = *published;
		ret = dmirror(self->dev, HMM_DMIRROR_READ, self->p, self->buf,
			      NPAGES, NULL);
		if (ret) {
			/*
			 * Between MSHAREFS_UNMAP and the new object, a hole;
			 * or invalidated throughout the device's retries.
			 */
			ASSERT_TRUE(ret == -EFAULT || ret == -EBUSY)
				TH_LOG("read: %s", strerror(-ret));
			refused++;
			continue;
		}
		reads++;
		for (i = 0; i < NPAGES; i++) {
			g = *(uint64_t *)(self->buf + i * PG);
			ASSERT_LE(before, g) TH_LOG("page %zu: generation %lu, %lu published",
						     i, (unsigned long)g,
						     (unsigned long)before);
			ASSERT_TRUE(page_uniform(self->buf + i * PG))
				TH_LOG("page %zu mixes generations", i);
		}
	}
	ASSERT_EQ(0, wait_exit(pid));
	TH_LOG("%ld reads, %ld refused, %lu generations", reads, refused,
	       (unsigned long)*published);
	ASSERT_LT(0L, reads);
	ASSERT_LT(2UL, *published);
}

__attribute__((constructor)) static void setup_globals(void)
{
	A = read_align();
}

TEST_HARNESS_MAIN
