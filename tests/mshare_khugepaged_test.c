// SPDX-License-Identifier: GPL-2.0
/*
 * khugepaged and msharefs regions: the region's shmem objects are collapsed
 * into huge pages inside the region, where khugepaged finds them once
 * MADV_HUGEPAGE through an attachment has registered the region's mm, and
 * every sharer then maps the huge page; the attachment itself (VM_NOHUGEPAGE,
 * never a THP candidate) is never collapsed, and MADV_COLLAPSE through it is
 * refused.
 *
 * Needs root, CONFIG_MSHARE=y, CONFIG_TRANSPARENT_HUGEPAGE=y and msharefs on
 * /sys/fs/mshare. Saves and restores the THP settings it changes.
 */
#include "mshare_test.h"

#define THP		"/sys/kernel/mm/transparent_hugepage/"
#define SHMEM_ENABLED	THP "shmem_enabled"
#define SCAN_SLEEP	THP "khugepaged/scan_sleep_millisecs"
#define PAGES_TO_SCAN	THP "khugepaged/pages_to_scan"
#define OBJ		(8UL << 20)
#define WAIT_SECONDS	120

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* A sysfs value, the word in [brackets] if there is one. */
static int read_setting(const char *path, char *buf, size_t len)
{
	char raw[256], *l, *r;
	FILE *f = fopen(path, "r");

	if (!f || !fgets(raw, sizeof(raw), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	raw[strcspn(raw, "\n")] = 0;
	l = strchr(raw, '[');
	r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		*r = 0;
		memmove(raw, l + 1, strlen(l + 1) + 1);
	}
	if (strlen(raw) >= len)
		return -1;
	memcpy(buf, raw, strlen(raw) + 1);
	return 0;
}

static int write_setting(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* ShmemPmdMapped of the smaps entry that starts at @p, in kB, or -1. */
static long smaps_pmd_mapped_kb(const void *p)
{
	char line[256], want[32];
	bool in = false;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			in = true;
		else if (in && sscanf(line, "ShmemPmdMapped: %ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* Does the smaps entry that starts at @p have VmFlag @flag? */
static bool smaps_has_flag(const void *p, const char *flag)
{
	char line[512], want[32], tok[8];
	bool in = false, found = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	snprintf(tok, sizeof(tok), " %s", flag);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			in = true;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			found = strstr(line, tok) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

FIXTURE(khugepaged) {
	char shmem_enabled[64], scan_sleep[32], pages_to_scan[32];
	char path[64];
	int fd;
	unsigned long align;
};

FIXTURE_SETUP(khugepaged)
{
	self->fd = -1;
	ASSERT_EQ(0, read_setting(SHMEM_ENABLED, self->shmem_enabled,
				  sizeof(self->shmem_enabled)));
	ASSERT_EQ(0, read_setting(SCAN_SLEEP, self->scan_sleep,
				  sizeof(self->scan_sleep)));
	ASSERT_EQ(0, read_setting(PAGES_TO_SCAN, self->pages_to_scan,
				  sizeof(self->pages_to_scan)));
	self->align = read_align();
	ASSERT_NE(0UL, self->align);
	snprintf(self->path, sizeof(self->path), MSHARE_DIR "/khugepaged-%d",
		 getpid());
	self->fd = mshare_region_create(AT_FDCWD, self->path, 0600,
					self->align);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(khugepaged)
{
	write_setting(SHMEM_ENABLED, self->shmem_enabled);
	write_setting(SCAN_SLEEP, self->scan_sleep);
	write_setting(PAGES_TO_SCAN, self->pages_to_scan);
	if (self->fd >= 0)
		close(self->fd);
	unlink(self->path);
}

/*
 * Small pages first (shmem_enabled=never), then MADV_HUGEPAGE through the
 * attachment with shmem_enabled=advise: khugepaged must collapse the
 * object in the region, the data must survive, and a second attachment
 * (another sharer) must map the huge pages with one PMD each.
 */
TEST_F(khugepaged, collapses_in_region_not_through_attachment)
{
	unsigned long off, a = self->align;
	long before, huge = 0;
	char *p, *q;
	int waited;

	ASSERT_EQ(0, write_setting(SHMEM_ENABLED, "never"));
	ASSERT_EQ(0, create_mapping(self->fd, 0, OBJ, 0,
				    PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1));
	p = mmap(NULL, a, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	for (off = 0; off < OBJ; off += PG)
		p[off] = (char)(off / PG * 7 + 1);
	ASSERT_EQ(0, smaps_pmd_mapped_kb(p));
	/* The attachment itself is never a THP candidate. */
	ASSERT_TRUE(smaps_has_flag(p, "nh"));
	before = meminfo_kb("ShmemHugePages");

	/* khugepaged never collapses through the container. */
	ASSERT_EQ(-1, madvise(p, OBJ, MADV_COLLAPSE));
	ASSERT_EQ(EINVAL, errno);

	ASSERT_EQ(0, write_setting(SHMEM_ENABLED, "advise"));
	ASSERT_EQ(0, write_setting(SCAN_SLEEP, "10"));
	ASSERT_EQ(0, write_setting(PAGES_TO_SCAN, "4096"));
	ASSERT_EQ(0, madvise(p, OBJ, MADV_HUGEPAGE));

	for (waited = 0; waited < WAIT_SECONDS; waited++) {
		huge = meminfo_kb("ShmemHugePages") - before;
		if (huge >= (long)(OBJ >> 10))
			break;
		sleep(1);
	}
	TH_LOG("ShmemHugePages +%ld kB after %d s", huge, waited);
	ASSERT_GE(huge, (long)(OBJ >> 10));

	/* Another sharer maps the collapsed pages with PMDs. */
	q = mmap(NULL, a, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, q);
	for (off = 0; off < OBJ; off += PG)
		ASSERT_EQ((char)(off / PG * 7 + 1), q[off]);
	ASSERT_EQ((long)(OBJ >> 10), smaps_pmd_mapped_kb(q));
	ASSERT_TRUE(smaps_has_flag(q, "nh"));
	for (off = 0; off < OBJ; off += PG)
		ASSERT_EQ((char)(off / PG * 7 + 1), p[off]);

	ASSERT_EQ(0, munmap(q, a));
	ASSERT_EQ(0, munmap(p, a));
}

TEST_HARNESS_MAIN
