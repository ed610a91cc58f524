// SPDX-License-Identifier: GPL-2.0
/*
 * The preload shim's promises, with the shim linked in statically (see
 * tools/Makefile): large MAP_SHARED | MAP_ANONYMOUS mappings and System V
 * segments land in msharefs regions at aligned addresses and are shared
 * with fork children; small, private and MAP_FIXED mappings are left
 * alone; munmap of the mapping detaches it, a partial munmap fails with
 * EINVAL; the bytes past the mapping fault; IPC_RMID removes the region.
 *
 * Needs root, msharefs on /sys/fs/mshare and the default threshold
 * (64 MiB; MSHARE_PRELOAD_THRESHOLD must not be set).
 */
#include <sys/ipc.h>
#include <sys/shm.h>

#include "../mshare_test.h"

#define MIB	(1UL << 20)
#define BIG	(64 * MIB)
#define A	549755813888UL
#define SHARED_ANON	(MAP_SHARED | MAP_ANONYMOUS)

/* The /proc/self/maps line of the mapping at @p, "" if none. */
static const char *maps_line(void *p)
{
	static char line[512];
	unsigned long start;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-", &start) == 1 &&
		    start == (unsigned long)p) {
			fclose(f);
			return line;
		}
	if (f)
		fclose(f);
	return "";
}

static bool in_region(void *p)
{
	return strstr(maps_line(p), "/sys/fs/mshare/") != NULL;
}

/* A child runs @fn(@p); its exit status, or 128 + the signal. */
static int in_child(void (*fn)(char *), char *p)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		fn(p);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
	       WEXITSTATUS(status);
}

static void write_child(char *p)
{
	memset(p, 'c', BIG);
}

static void past_end(char *p)
{
	p[BIG] = 1;
}

TEST(big_shared_anon_in_region)
{
	char *p = mmap(NULL, BIG, PROT_READ | PROT_WRITE, SHARED_ANON, -1, 0);
	int fd;

	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0UL, (unsigned long)p % A);
	EXPECT_TRUE(in_region(p)) TH_LOG("maps: %s", maps_line(p));
	/* Unlinked at once: nothing left in the mount. */
	EXPECT_TRUE(strstr(maps_line(p), "(deleted)") != NULL);
	/* Shared with a fork child, which writes all of it. */
	memset(p, 'p', BIG);
	EXPECT_EQ(0, in_child(write_child, p));
	EXPECT_EQ('c', p[0]);
	EXPECT_EQ('c', p[BIG - 1]);
	/* Past the mapping's length: SIGSEGV, as past any mapping. */
	EXPECT_EQ(128 + SIGSEGV, in_child(past_end, p));
	ASSERT_EQ(0, munmap(p, BIG));
	EXPECT_STREQ("", maps_line(p));
	fd = open("/sys/fs/mshare/mshare_info", O_RDONLY);
	EXPECT_LE(0, fd);
	close(fd);
}

TEST(partial_munmap_refused)
{
	char *p = mmap(NULL, BIG + 100, PROT_READ | PROT_WRITE, SHARED_ANON,
		       -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_TRUE(in_region(p));
	errno = 0;
	EXPECT_EQ(-1, munmap(p + 4096, 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(p, 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(in_region(p));
	/* The length as asked, unrounded, detaches it. */
	EXPECT_EQ(0, munmap(p, BIG + 100));
	EXPECT_STREQ("", maps_line(p));
}

TEST(munmap_of_region_size)
{
	char *p = mmap(NULL, BIG, PROT_READ, SHARED_ANON, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_TRUE(in_region(p));
	EXPECT_EQ(0, p[BIG - 1]);
	EXPECT_EQ(0, munmap(p, A));
	EXPECT_STREQ("", maps_line(p));
}

TEST(left_alone)
{
	char *small = mmap(NULL, MIB, PROT_READ | PROT_WRITE, SHARED_ANON,
			   -1, 0);
	char *priv = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = mmap(NULL, BIG, PROT_NONE, SHARED_ANON, -1, 0);
	char *fixed;

	ASSERT_NE(MAP_FAILED, small);
	ASSERT_NE(MAP_FAILED, priv);
	ASSERT_NE(MAP_FAILED, none);
	EXPECT_FALSE(in_region(small));
	EXPECT_FALSE(in_region(priv));
	EXPECT_FALSE(in_region(none));
	/* MAP_FIXED: plain memory where asked. */
	fixed = mmap(none, BIG, PROT_READ | PROT_WRITE,
		     SHARED_ANON | MAP_FIXED, -1, 0);
	EXPECT_EQ(none, fixed);
	EXPECT_FALSE(in_region(fixed));
	fixed[0] = 1;
	EXPECT_EQ(0, munmap(small, MIB));
	EXPECT_EQ(0, munmap(priv, BIG));
	EXPECT_EQ(0, munmap(fixed, BIG));
}

static void sysv_child(char *p)
{
	p[0] = 's';
	if (shmdt(p))
		_exit(1);
}

TEST(sysv_segment_in_region)
{
	char path[64];
	struct stat st;
	char *p, *q;
	int id;

	id = shmget(IPC_PRIVATE, BIG, IPC_CREAT | 0640);
	ASSERT_LE(0, id);
	snprintf(path, sizeof(path), "/sys/fs/mshare/preload-sysv-%d", id);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0640U, st.st_mode & 07777);
	EXPECT_EQ(A, (unsigned long)st.st_size);
	p = shmat(id, NULL, 0);
	ASSERT_NE((void *)-1, p);
	EXPECT_EQ(0UL, (unsigned long)p % A);
	EXPECT_TRUE(in_region(p));
	EXPECT_EQ(0, in_child(sysv_child, p));
	EXPECT_EQ('s', p[0]);
	/* A second attachment sees the same memory. */
	q = shmat(id, NULL, SHM_RDONLY);
	ASSERT_NE((void *)-1, q);
	EXPECT_NE(p, q);
	EXPECT_EQ('s', q[0]);
	EXPECT_EQ(0, shmdt(q));
	/* Unaligned addresses cannot be honoured. */
	errno = 0;
	EXPECT_EQ((void *)-1, shmat(id, (void *)0x10000000, 0));
	EXPECT_EQ(EINVAL, errno);
	/* IPC_RMID removes the region; the memory stays while attached. */
	EXPECT_EQ(0, shmctl(id, IPC_RMID, NULL));
	EXPECT_EQ(-1, stat(path, &st));
	EXPECT_EQ('s', p[0]);
	EXPECT_EQ(0, shmdt(p));
	EXPECT_STREQ("", maps_line(p));
}

TEST(sysv_small_left_alone)
{
	char path[64];
	struct stat st;
	int id = shmget(IPC_PRIVATE, MIB, IPC_CREAT | 0600);
	char *p;

	ASSERT_LE(0, id);
	snprintf(path, sizeof(path), "/sys/fs/mshare/preload-sysv-%d", id);
	EXPECT_EQ(-1, stat(path, &st));
	p = shmat(id, NULL, 0);
	ASSERT_NE((void *)-1, p);
	EXPECT_FALSE(in_region(p));
	EXPECT_EQ(0, shmdt(p));
	EXPECT_EQ(0, shmctl(id, IPC_RMID, NULL));
}

TEST_HARNESS_MAIN
