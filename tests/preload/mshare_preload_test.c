// SPDX-License-Identifier: GPL-2.0
/*
 * The preload shim's promises: large MAP_SHARED | MAP_ANONYMOUS mappings
 * and System V segments land in msharefs regions at aligned addresses and
 * are shared with fork children; small, private and MAP_FIXED mappings are
 * left alone; munmap of the mapping detaches it, a partial munmap fails
 * with EINVAL; the bytes past the mapping fault; IPC_RMID removes the
 * region. And its fallbacks, each forced: msharefs not mounted, region
 * creation failing (nr_inodes used up), attaching failing (RLIMIT_AS), its
 * table full (MSHARE_PRELOAD_MAX_MAPPINGS) and the address space full:
 * the program still gets working shared memory, not in a region, and the
 * shim says why, once.
 *
 * Built twice from this file (tools/Makefile): mshare_preload_test, static
 * with the shim linked in (--wrap), for the busybox guest; and
 * mshare_preload_so_test, dynamic, run with
 * LD_PRELOAD=libmshare-preload.so on the host's root file system
 * (tests/hostroot/hostroot_test.sh), which refuses to run without the shim.
 *
 * Needs root, msharefs on /sys/fs/mshare and the default threshold
 * (64 MiB; MSHARE_PRELOAD_THRESHOLD must not be set).
 */
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/shm.h>
#ifdef PRELOAD_SO
#include <dlfcn.h>
#endif

#include "mshare_test.h"	/* tools/testing/selftests/msharefs */

#define MIB	(1UL << 20)
#define BIG	(64 * MIB)
/* The alignment, from mshare_info (main()). */
static unsigned long A;
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

/*
 * A munmap wider than a region takes the region and whatever lies around
 * it, in one call of the next munmap: no address of the range is ever
 * free between two calls for another thread's mmap to take and a second
 * call to unmap. Built as the .so's test, an interposer LD_PRELOADed
 * after the shim (libinterposer.so) counts what reaches it: the shim's
 * own mmap and munmap go to the next definition, not to the kernel.
 */
TEST(munmap_wider_than_region)
{
	char *p, *below, *above;
#ifdef PRELOAD_SO
	unsigned long (*calls)(const char *) =
		(unsigned long (*)(const char *))dlsym(RTLD_DEFAULT,
						       "interposer_calls");
	unsigned long m0, u0;

	ASSERT_NE(NULL, calls)
		TH_LOG("run with LD_PRELOAD=\"libmshare-preload.so libinterposer.so\"");
	m0 = calls("mmap");
#endif
	p = mmap(NULL, BIG, PROT_READ | PROT_WRITE, SHARED_ANON, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_TRUE(in_region(p));
#ifdef PRELOAD_SO
	/* The region's attachment went through the next mmap. */
	ASSERT_LT(m0, calls("mmap"));
#endif
	below = mmap(p - PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p - PG, below);
	above = mmap(p + A, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p + A, above);
#ifdef PRELOAD_SO
	u0 = calls("munmap");
#endif
	ASSERT_EQ(0, munmap(below, A + 2 * PG));
#ifdef PRELOAD_SO
	ASSERT_EQ(u0 + 1, calls("munmap"));
#endif
	EXPECT_STREQ("", maps_line(below));
	EXPECT_STREQ("", maps_line(p));
	EXPECT_STREQ("", maps_line(above));
	/* The shim forgot the region: the same address range maps anew. */
	ASSERT_EQ(p, mmap(p, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			  MAP_FIXED_NOREPLACE, -1, 0));
	ASSERT_EQ(0, munmap(p, PG));
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

/* ---- fallbacks ---------------------------------------------------------
 *
 * The shim reads its settings once per process (the harness's own
 * MAP_SHARED mmap already did in this one): each case sets the scene (a
 * mount namespace, an environment variable), then runs this program again
 * as a probe, a fresh process, which maps and reports on stdout; what the
 * shim says goes to a file.
 */

struct probe {
	int before, in_before;	/* earlier mappings; how many in regions */
	int ok, region, plain, shared;	/* the mapping that tells */
	int ok2, region2;	/* one more after it */
	int again;		/* after munmap of an earlier one: in a region */
	int shmat_err;		/* errno of a failed shmat */
	int sysv_region;	/* the segment got its preload-sysv-ID region */
	int left;		/* the probe's region files left in the mount */
	char err[4096];		/* the shim's stderr */
};

/* Is @p's mapping plain shared memory (/dev/zero or a SysV segment)? */
static bool plain(void *p)
{
	const char *l = maps_line(p);

	return strstr(l, "/dev/zero") || strstr(l, "/SYSV");
}

static int shared_child(char *p)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		p[0] = 'c';
		p[BIG / 2] = 'c';
		p[BIG - 1] = 'c';
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return 0;
	return p[0] == 'c' && p[BIG / 2] == 'c' && p[BIG - 1] == 'c';
}

static void *map_big(void)
{
	return mmap(NULL, BIG, PROT_READ | PROT_WRITE, SHARED_ANON, -1, 0);
}

/* Region files named after this process (PREFIX-<pid>-<n>) in the mount. */
static int regions_left(void)
{
	char prefix[32];
	struct dirent *e;
	DIR *d = opendir(MSHARE_DIR);
	int n = 0;

	snprintf(prefix, sizeof(prefix), "preload-%d-", getpid());
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static void limit_address_space(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");
	struct rlimit rl;

	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "VmSize: %lu kB", &kb);
	if (f)
		fclose(f);
	/* Room for plain mappings, none for a 512 GiB attachment. */
	rl.rlim_cur = rl.rlim_max = (kb << 10) + (1UL << 30);
	if (!kb || setrlimit(RLIMIT_AS, &rl))
		exit(3);
}

/*
 * --probe mmap|sysv|aslimit|fill BEFORE: BEFORE mappings kept, then the
 * one that tells (for fill: as many as it takes to get one not in a
 * region), then one more; then munmap of the first and a new one.
 */
static int probe(const char *what, int before)
{
	struct probe r = { .before = before, .shmat_err = 0 };
	char *first = NULL, *p = NULL, *q;
	int i, id;

	if (!strcmp(what, "aslimit"))
		limit_address_space();
	for (i = 0; i < before || !strcmp(what, "fill"); i++) {
		p = map_big();
		if (p == MAP_FAILED)
			return 4;
		if (!in_region(p))
			break;
		r.in_before++;
		if (!first)
			first = p;
		if (i >= 1000)
			return 5;
	}
	if (!strcmp(what, "fill")) {
		r.before = i;
	} else if (!strcmp(what, "sysv")) {
		char path[64];
		struct stat st;

		id = shmget(IPC_PRIVATE, BIG, IPC_CREAT | 0600);
		if (id < 0)
			return 6;
		snprintf(path, sizeof(path), MSHARE_DIR "/preload-sysv-%d", id);
		r.sysv_region = !stat(path, &st);
		p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			r.shmat_err = errno;
			p = MAP_FAILED;
		}
		shmctl(id, IPC_RMID, NULL);
	} else {
		p = map_big();
	}
	r.ok = p != MAP_FAILED;
	if (r.ok) {
		r.region = in_region(p);
		r.plain = plain(p);
		r.shared = shared_child(p);
	}
	if (strcmp(what, "sysv")) {
		q = map_big();
		r.ok2 = q != MAP_FAILED;
		r.region2 = r.ok2 && in_region(q);
		if (first && !munmap(first, BIG)) {
			q = map_big();
			r.again = q != MAP_FAILED && in_region(q);
		}
	}
	r.left = regions_left();
	printf("%d %d %d %d %d %d %d %d %d %d %d %d\n", r.before, r.in_before,
	       r.ok, r.region, r.plain, r.shared, r.ok2, r.region2, r.again,
	       r.shmat_err, r.sysv_region, r.left);
	return 0;
}

/* Run the probe in a new process; its report in @r. */
static void run_probe(struct __test_metadata *_metadata, const char *what,
		      int before, struct probe *r)
{
	int out[2], err = memfd_create("shim-stderr", 0), status, n;
	char arg[16], buf[256] = "";
	pid_t pid;
	ssize_t got;

	memset(r, 0, sizeof(*r));
	ASSERT_LE(0, err);
	ASSERT_EQ(0, pipe(out));
	snprintf(arg, sizeof(arg), "%d", before);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err, 2);
		execl("/proc/self/exe", "mshare_preload_probe", "--probe",
		      what, arg, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	got = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	got = pread(err, r->err, sizeof(r->err) - 1, 0);
	r->err[got > 0 ? got : 0] = 0;
	close(err);
	ASSERT_EQ(0, status) TH_LOG("probe %s: status %#x, stderr: %s", what,
				    status, r->err);
	n = sscanf(buf, "%d %d %d %d %d %d %d %d %d %d %d %d", &r->before,
		   &r->in_before, &r->ok, &r->region, &r->plain, &r->shared,
		   &r->ok2, &r->region2, &r->again, &r->shmat_err,
		   &r->sysv_region, &r->left);
	ASSERT_EQ(12, n) TH_LOG("probe %s said '%s'", what, buf);
	TH_LOG("probe %s %d: %s  shim: %s", what, before, buf,
	       r->err[0] ? r->err : "(nothing)");
}

static bool has(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

/* How many lines the shim wrote. */
static int said(const struct probe *r)
{
	const char *s = r->err;
	int n = 0;

	while ((s = strstr(s, "mshare-preload[")))
		n++, s++;
	return n;
}

/* The mapping that tells is plain shared memory that works. */
#define ASSERT_PLAIN(r) do {						\
	ASSERT_TRUE((r)->ok);						\
	EXPECT_FALSE((r)->region);					\
	EXPECT_TRUE((r)->plain);					\
	EXPECT_TRUE((r)->shared);					\
	EXPECT_EQ(0, (r)->left);					\
} while (0)

/* The probe works, and the shim is in it: mappings in regions, quietly. */
TEST(fallback_control)
{
	struct probe r;

	run_probe(_metadata, "mmap", 1, &r);
	EXPECT_EQ(1, r.in_before);
	ASSERT_TRUE(r.ok);
	EXPECT_TRUE(r.region);
	EXPECT_FALSE(r.plain);
	EXPECT_TRUE(r.shared);
	EXPECT_TRUE(r.region2);
	EXPECT_TRUE(r.again);
	EXPECT_EQ(0, r.left);
	EXPECT_STREQ("", r.err);
	run_probe(_metadata, "sysv", 0, &r);
	EXPECT_TRUE(r.sysv_region);
	ASSERT_TRUE(r.ok);
	EXPECT_TRUE(r.region);
	EXPECT_TRUE(r.shared);
	EXPECT_STREQ("", r.err);
}

TEST(fallback_msharefs_not_mounted)
{
	struct probe r;

	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_EQ(0, umount2(MSHARE_DIR, MNT_DETACH));
	ASSERT_NE(0, access(INFO_PATH, F_OK));

	run_probe(_metadata, "mmap", 0, &r);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(r.ok2 && !r.region2);
	EXPECT_EQ(1, said(&r)) TH_LOG("%s", r.err);
	EXPECT_TRUE(has(r.err, ": " INFO_PATH ": No such file or directory; not using regions\n"))
		TH_LOG("%s", r.err);

	run_probe(_metadata, "sysv", 0, &r);
	EXPECT_FALSE(r.sysv_region);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(has(r.err, ": " INFO_PATH ": No such file or directory; not using regions\n"))
		TH_LOG("%s", r.err);
}

/* nr_inodes=2: the root and mshare_info; no region can be made. */
TEST(fallback_region_creation_fails)
{
	struct probe r;

	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_EQ(0, mount("none", MSHARE_DIR, "msharefs", 0, "nr_inodes=2"));
	ASSERT_NE(0UL, read_align());

	run_probe(_metadata, "mmap", 0, &r);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(r.ok2 && !r.region2);
	EXPECT_EQ(1, said(&r)) TH_LOG("%s", r.err);
	EXPECT_TRUE(has(r.err, ": region " MSHARE_DIR "/preload-") &&
		    has(r.err, ": No space left on device; this mapping stays plain\n"))
		TH_LOG("%s", r.err);

	run_probe(_metadata, "sysv", 0, &r);
	EXPECT_FALSE(r.sysv_region);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(has(r.err, ": region " MSHARE_DIR "/preload-sysv-") &&
		    has(r.err, ": No space left on device; segment ") &&
		    has(r.err, " stays plain\n"))
		TH_LOG("%s", r.err);
}

/* RLIMIT_AS leaves no room for the 512 GiB attachment: attaching fails. */
TEST(fallback_attach_fails)
{
	struct probe r;

	run_probe(_metadata, "aslimit", 0, &r);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(r.ok2 && !r.region2);
	EXPECT_EQ(1, said(&r)) TH_LOG("%s", r.err);
	EXPECT_TRUE(has(r.err, ": attach " MSHARE_DIR "/preload-") &&
		    has(r.err, ": Cannot allocate memory; this mapping stays plain\n"))
		TH_LOG("%s", r.err);
}

/*
 * A table of two: the third mapping is plain, and so is the fourth; a
 * munmap frees a place. shmat of a segment in a region cannot fall back to
 * the segment's own memory (the others see the region): ENOMEM.
 */
TEST(fallback_table_full)
{
	struct probe r;

	ASSERT_EQ(0, setenv("MSHARE_PRELOAD_MAX_MAPPINGS", "2", 1));
	run_probe(_metadata, "mmap", 2, &r);
	EXPECT_EQ(2, r.in_before);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(r.ok2 && !r.region2);
	EXPECT_TRUE(r.again);
	EXPECT_EQ(1, said(&r)) TH_LOG("%s", r.err);
	EXPECT_TRUE(has(r.err, ": more than 2 regions\n")) TH_LOG("%s", r.err);

	run_probe(_metadata, "sysv", 2, &r);
	EXPECT_EQ(2, r.in_before);
	EXPECT_TRUE(r.sysv_region);
	EXPECT_FALSE(r.ok);
	EXPECT_EQ(ENOMEM, r.shmat_err);
	EXPECT_TRUE(has(r.err, ": more than 2 regions\n")) TH_LOG("%s", r.err);
}

/*
 * With the default table (512), the address space (128 TiB on x86_64, 256
 * TiB on arm64, 512 GiB a mapping) runs out first: the mapping that finds
 * no aligned room is plain.
 * (Not checked: that a region fits again after munmap of one. It does not:
 * the kernel looks for a gap of the size plus the alignment, so a freed
 * 512 GiB slot between two others is not found without a hint.)
 */
TEST(fallback_address_space_full)
{
	struct probe r;

	run_probe(_metadata, "fill", 0, &r);
	EXPECT_EQ(r.before, r.in_before);
	/* All but the units the program's own mappings and the base take. */
	EXPECT_LT((int)(USER_VA_END / A) - 56, r.before);
	EXPECT_GT((int)(USER_VA_END / A), r.before);
	ASSERT_PLAIN(&r);
	EXPECT_TRUE(r.ok2 && !r.region2);
	EXPECT_EQ(1, said(&r)) TH_LOG("%s", r.err);
	EXPECT_TRUE(has(r.err, ": attach " MSHARE_DIR "/preload-") &&
		    has(r.err, ": Cannot allocate memory; this mapping stays plain\n"))
		TH_LOG("%s", r.err);
}

int main(int argc, char **argv)
{
#ifdef PRELOAD_SO
	Dl_info info = { 0 };

	/* The tests are about the shim: without it they would prove nothing. */
	if (!dladdr(dlsym(RTLD_DEFAULT, "mmap"), &info) || !info.dli_fname ||
	    !strstr(info.dli_fname, "libmshare-preload.so")) {
		printf("Bail out! mmap is %s's, not the shim's: run with LD_PRELOAD=libmshare-preload.so\n",
		       info.dli_fname ? info.dli_fname : "nobody");
		return 1;
	}
#endif
	/* A probe may run where msharefs is not mounted: it needs no A. */
	if (argc == 4 && !strcmp(argv[1], "--probe"))
		return probe(argv[2], atoi(argv[3]));
	A = read_align();
	if (!A) {
		printf("Bail out! no alignment in %s/mshare_info\n", MSHARE_DIR);
		return 1;
	}
	return test_harness_run(argc, argv);
}
