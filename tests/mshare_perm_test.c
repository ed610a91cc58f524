// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions and isolation of msharefs regions:
 *
 *  - a region made 0600 by one user is out of reach of another: no open
 *    (EACCES), so no attach, size or ioctl, and no unlink or rename in the
 *    sticky 01777 mount root; not even through an O_PATH descriptor;
 *  - root has the powers it has on tmpfs, no more and no less: each
 *    operation on another user's 0600 region gives what it gives on a
 *    tmpfs file of the same owner and mode in a sticky directory;
 *  - a read-only attachment cannot write, by any path: stores, mprotect,
 *    madvise, process_vm_writev, /proc/self/mem, ptrace, read(2) and
 *    O_DIRECT reads into it, the region's ioctls and sizing calls all
 *    fail and the data stays as it was;
 *  - two msharefs mounts are independent instances: names, sizes,
 *    objects and data of one are invisible to the other, and an instance
 *    with an attached region cannot be unmounted.
 *
 * Needs root, a kernel with CONFIG_MSHARE=y, msharefs on /sys/fs/mshare,
 * a tmpfs /tmp and (for the O_DIRECT case) a disk file system on
 * /mnt/disk.
 *
 * Build: make -C tests
 * Run:   ./mshare_perm_test [-f FIXTURE] [-t TEST]   (prints KTAP)
 */
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "mshare_test.h"

#define UID_A		1000U
#define UID_B		1001U
#define OBJ_PAGES	4
#define OBJ_SIZE	(OBJ_PAGES * PG)
#define SEGV		(128 + SIGSEGV)
#define DISK_FILE	"/mnt/disk/mshare-perm-odirect"
#define TMP_TEMPLATE	"/tmp/mshare-perm-XXXXXX"

/* The byte at @i of the pattern every object here is filled with. */
static char obj_pat(size_t i)
{
	return (char)(0x5a ^ (i >> 12) ^ (i * 7));
}

static void obj_fill(char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = obj_pat(i);
}

/* Index of the first byte of @p that is not the pattern, or -1. */
static long obj_mismatch(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != obj_pat(i))
			return i;
	return -1;
}

static bool failed_with(long ret, int err)
{
	return ret == -1 && errno == err;
}

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

/*
 * Every test names its regions "perm-PID-..." in /sys/fs/mshare, PID being
 * the test process's, for the teardown to remove what a failed test left.
 */
FIXTURE(perm) {
	unsigned long align;
	pid_t pid;
	char a_path[64];	/* uid A's 0600 region, sized, one object */
	char b_path[64];	/* uid A's 0600 region, unsized */
};

/* What uid A does: make both regions and fill the first. */
static int make_a_regions(void *arg)
{
	FIXTURE_DATA(perm) *self = arg;
	int fd, ufd;
	char *p;

	if (FAILED(become_user(UID_A, UID_A) == 0))
		return 1;
	umask(022);
	fd = mshare_region_create(AT_FDCWD, self->a_path, 0600, self->align);
	ufd = mshare_region_create(AT_FDCWD, self->b_path, 0600, 0);
	if (FAILED(fd >= 0) || FAILED(ufd >= 0))
		return 1;
	if (FAILED(create_mapping(fd, 0, OBJ_SIZE, 0, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS,
				  -1) == 0))
		return 1;
	p = mmap(NULL, self->align, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	if (FAILED(p != MAP_FAILED))
		return 1;
	obj_fill(p, OBJ_SIZE);
	/* The region and its data outlive the creator. */
	return 0;
}

FIXTURE_SETUP(perm)
{
	self->pid = getpid();
	self->align = read_align();
	if (!self->align)
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	ASSERT_EQ(0U, geteuid());
	snprintf(self->a_path, sizeof(self->a_path),
		 MSHARE_DIR "/perm-%d-a", self->pid);
	snprintf(self->b_path, sizeof(self->b_path),
		 MSHARE_DIR "/perm-%d-b", self->pid);
	ASSERT_EQ(0, run_child(make_a_regions, self));
}

FIXTURE_TEARDOWN_PARENT(perm)
{
	if (self->pid)
		unlink_tagged(MSHARE_DIR, "perm", self->pid);
}

/*
 * Region @path is as uid A left it: owner, mode, @size, and (when sized)
 * its object with the pattern, checked through a new attachment.
 */
static void assert_untouched(struct __test_metadata *_metadata,
			     const char *path, unsigned long size)
{
	struct mshare_info info;
	struct stat st;
	char *p;
	int fd;

	ASSERT_EQ(0, stat(path, &st));
	ASSERT_EQ(UID_A, st.st_uid);
	ASSERT_EQ(UID_A, st.st_gid);
	ASSERT_EQ((mode_t)(S_IFREG | 0600), st.st_mode);
	ASSERT_EQ((off_t)size, st.st_size);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mshare_region_info(fd, &info));
	ASSERT_EQ((__u64)size, info.size);
	if (size) {
		p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(-1L, obj_mismatch(p, OBJ_SIZE));
		/* Nothing was placed after the object. */
		ASSERT_EQ(SEGV, run_child(do_store, p + OBJ_SIZE));
		ASSERT_EQ(0, munmap(p, size));
	}
	close(fd);
}

/* uid B against uid A's two 0600 regions. */
static int other_user(void *arg)
{
	FIXTURE_DATA(perm) *self = arg;
	const char *paths[] = { self->a_path, self->b_path };
	char mine[80], proc[64];
	unsigned int i;
	int fd, pfd;

	if (FAILED(become_user(UID_B, UID_B) == 0))
		return 1;
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		const char *path = paths[i];

		if (FAILED(failed_with(open(path, O_RDONLY), EACCES)) ||
		    FAILED(failed_with(open(path, O_WRONLY), EACCES)) ||
		    FAILED(failed_with(open(path, O_RDWR), EACCES)) ||
		    FAILED(failed_with(open(path, O_RDWR | O_CREAT, 0666),
				       EACCES)) ||
		    FAILED(failed_with(truncate(path, self->align),
				       EACCES)) ||
		    FAILED(failed_with(unlink(path), EPERM)) ||
		    FAILED(failed_with(chmod(path, 0666), EPERM)) ||
		    FAILED(failed_with(chown(path, UID_B, UID_B), EPERM)) ||
		    FAILED(failed_with(rename(path, MSHARE_DIR "/stolen"),
				       EPERM)))
			return 1;

		/* O_PATH needs no permission, and gives no access. */
		pfd = open(path, O_PATH);
		if (FAILED(pfd >= 0))
			return 1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		if (FAILED(failed_with(open(proc, O_RDWR), EACCES)) ||
		    FAILED(failed_with(open(proc, O_RDONLY), EACCES)) ||
		    FAILED(mmap(NULL, self->align, PROT_READ, MAP_SHARED,
				pfd, 0) == MAP_FAILED && errno == EBADF) ||
		    FAILED(failed_with(create_mapping(pfd, 0, PG, 0,
						      PROT_READ | PROT_WRITE,
						      MAP_SHARED | MAP_FIXED |
						      MAP_ANONYMOUS, -1), EBADF)) ||
		    FAILED(failed_with(mshare_unmap(pfd, 0, PG), EBADF)) ||
		    FAILED(failed_with(ftruncate(pfd, self->align), EBADF)) ||
		    FAILED(failed_with(fallocate(pfd, 0, 0, self->align),
				       EBADF)) ||
		    FAILED(failed_with(read(pfd, proc, 16), EBADF)))
			return 1;
		close(pfd);
	}

	/* Nor can B replace A's region with one of its own. */
	snprintf(mine, sizeof(mine), "%s-b-own", self->a_path);
	fd = mshare_region_create(AT_FDCWD, mine, 0600, 0);
	if (FAILED(fd >= 0))
		return 1;
	close(fd);
	if (FAILED(failed_with(rename(mine, self->a_path), EPERM)) ||
	    FAILED(failed_with(rename(mine, self->b_path), EPERM)) ||
	    FAILED(unlink(mine) == 0))
		return 1;
	return 0;
}

TEST_F(perm, other_user_0600)
{
	struct stat st;

	/* The mount root is sticky and world-writable, like /tmp. */
	ASSERT_EQ(0, stat(MSHARE_DIR, &st));
	ASSERT_EQ((mode_t)(S_IFDIR | 01777), st.st_mode);
	ASSERT_EQ(0, run_child(other_user, self));
	assert_untouched(_metadata, self->a_path, self->align);
	assert_untouched(_metadata, self->b_path, 0);
}

/*
 * Root against another user's 0600 file: the outcome (0 or an errno) of
 * each operation, in order. Run on an msharefs region and on a tmpfs file.
 */
#define ROOT_OPS	6

static void root_ops(const char *path, const char *renamed, int *res)
{
	int i = 0, fd;

#define RES(call) (res[i++] = (call) < 0 ? errno : 0)
	fd = open(path, O_RDONLY);
	RES(fd);
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDWR);
	RES(fd);
	if (fd >= 0)
		close(fd);
	RES(chmod(path, 0640));
	RES(chown(path, UID_A, 0));
	RES(rename(path, renamed));
	RES(rename(renamed, path));
#undef RES
}

TEST_F(perm, root_is_as_on_tmpfs)
{
	static const char * const what[ROOT_OPS] = {
		"open(O_RDONLY)", "open(O_RDWR)", "chmod", "chown",
		"rename", "rename back",
	};
	int on_mshare[ROOT_OPS], on_tmpfs[ROOT_OPS];
	char dir[] = TMP_TEMPLATE, file[64], renamed[80];
	struct mshare_info info;
	struct stat st;
	int fd, i;
	char *p;

	/* A tmpfs file like A's region, in a sticky world-writable dir. */
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, chmod(dir, 01777));
	snprintf(file, sizeof(file), "%s/f", dir);
	fd = open(file, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, chown(file, UID_A, UID_A));

	snprintf(renamed, sizeof(renamed), "%s-renamed", self->a_path);
	root_ops(self->a_path, renamed, on_mshare);
	snprintf(renamed, sizeof(renamed), "%s-renamed", file);
	root_ops(file, renamed, on_tmpfs);
	for (i = 0; i < ROOT_OPS; i++) {
		TH_LOG("root %s: msharefs %s, tmpfs %s", what[i],
		       strerror(on_mshare[i]), strerror(on_tmpfs[i]));
		EXPECT_EQ(on_tmpfs[i], on_mshare[i]);
		/* CAP_DAC_OVERRIDE and CAP_FOWNER: everything works. */
		EXPECT_EQ(0, on_mshare[i]);
	}
	ASSERT_EQ(0, stat(self->a_path, &st));
	ASSERT_EQ((mode_t)(S_IFREG | 0640), st.st_mode);
	ASSERT_EQ(0, chmod(self->a_path, 0600));
	ASSERT_EQ(0, chown(self->a_path, UID_A, UID_A));

	/* Root can attach A's region read-write and use its object. */
	fd = open(self->a_path, O_RDWR);
	ASSERT_LE(0, fd);
	p = mmap(NULL, self->align, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(-1L, obj_mismatch(p, OBJ_SIZE));
	p[0] = 'r';
	ASSERT_EQ(0, mshare_region_info(fd, &info));
	ASSERT_EQ((__u64)self->align, info.size);
	p[0] = obj_pat(0);
	ASSERT_EQ(0, munmap(p, self->align));
	close(fd);
	assert_untouched(_metadata, self->a_path, self->align);

	/* And remove it from the sticky root, as on tmpfs. */
	ASSERT_EQ(0, unlink(file));
	ASSERT_EQ(0, rmdir(dir));
	ASSERT_EQ(0, unlink(self->b_path));
}

/*
 * A file on the disk file system whose first page is not the pattern,
 * opened O_DIRECT; -1 if there is none.
 */
static int odirect_file(void)
{
	static char buf[PG] __attribute__((aligned(PG)));
	int fd;

	memset(buf, 0xee, sizeof(buf));
	fd = open(DISK_FILE, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (pwrite(fd, buf, PG, 0) != PG || fsync(fd)) {
		close(fd);
		return -1;
	}
	close(fd);
	fd = open(DISK_FILE, O_RDONLY | O_DIRECT);
	unlink(DISK_FILE);
	return fd;
}

/* A traced child with a read-only attachment, for PTRACE_POKEDATA. */
static pid_t traced_child(const char *path, unsigned long size, char **at)
{
	int fds[2];
	pid_t pid;
	char *p;

	if (pipe(fds))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int fd = open(path, O_RDONLY);

		p = fd < 0 ? MAP_FAILED :
		    mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		if (write(fds[1], &p, sizeof(p)) != sizeof(p))
			_exit(1);
		if (p == MAP_FAILED || ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], at, sizeof(*at)) != sizeof(*at))
		*at = MAP_FAILED;
	close(fds[0]);
	return pid;
}

TEST_F(perm, readonly_attachment_cannot_write)
{
	struct iovec local, remote;
	char buf[PG], *p, *at;
	int fd, mem, dfd, tmp, status;
	pid_t pid;

	fd = open(self->a_path, O_RDONLY);
	ASSERT_LE(0, fd);
	p = mmap(NULL, self->align, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(-1L, obj_mismatch(p, OBJ_SIZE));
	memset(buf, 'w', sizeof(buf));

	/* Stores. */
	ASSERT_EQ(SEGV, run_child(do_store, p));
	ASSERT_EQ(SEGV, run_child(do_store, p + OBJ_SIZE - 1));

	/*
	 * mprotect changes the objects' protection for everyone: never
	 * through a read-only attachment (more than it allows), nor through
	 * a region file not open for writing (any change): EACCES.
	 */
	ASSERT_FAILS(EACCES, mprotect(p, OBJ_SIZE, PROT_READ | PROT_WRITE));
	ASSERT_FAILS(EACCES, mprotect(p, PG, PROT_WRITE));
	ASSERT_FAILS(HAVE_PKEYS ? EACCES : ENOSYS,
		     pkey_mprotect(p, OBJ_SIZE, PROT_READ | PROT_WRITE, 0));
	ASSERT_FAILS(EACCES, mprotect(p, OBJ_SIZE, PROT_READ));
	ASSERT_FAILS(EACCES, mprotect(p, OBJ_SIZE, PROT_NONE));
	ASSERT_EQ(0, run_child(do_load, p + OBJ_SIZE - 1));

	/*
	 * madvise: advice that acts on the region for everyone is a
	 * writer's (EPERM through this reader's attachment, whatever the
	 * advice); populating for writing is refused as on any read-only
	 * mapping (EINVAL). The data must survive every attempt.
	 * mshare_trust_test checks each advice in detail.
	 */
	ASSERT_FAILS(EPERM, madvise(p, OBJ_SIZE, MADV_REMOVE));
	ASSERT_FAILS(EPERM, madvise(p, OBJ_SIZE, MADV_FREE));
	ASSERT_FAILS(EINVAL, madvise(p, OBJ_SIZE, MADV_POPULATE_WRITE));
	ASSERT_FAILS(EPERM, madvise(p, OBJ_SIZE, MADV_DONTNEED));
	ASSERT_FAILS(EPERM, madvise(p, OBJ_SIZE, MADV_PAGEOUT));
	ASSERT_EQ(-1L, obj_mismatch(p, OBJ_SIZE));

	/* process_vm_writev into ourselves. */
	local.iov_base = buf;
	local.iov_len = PG;
	remote.iov_base = p;
	remote.iov_len = PG;
	ASSERT_FAILS(EFAULT, process_vm_writev(getpid(), &local, 1, &remote,
					       1, 0));

	/* /proc/self/mem, which writes with FOLL_FORCE. */
	mem = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, mem);
	ASSERT_FAILS(EIO, pwrite(mem, buf, PG, (off_t)p));
	ASSERT_FAILS(EIO, pwrite(mem, buf, 1, (off_t)(p + PG + 1)));
	close(mem);

	/* ptrace(POKEDATA) of a tracee's read-only attachment. */
	pid = traced_child(self->a_path, self->align, &at);
	ASSERT_LT(0, pid);
	ASSERT_NE(MAP_FAILED, at);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_FAILS(EIO, ptrace(PTRACE_POKEDATA, pid, at, 0x7777777777L));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	/* read(2) from a file into it. */
	tmp = open("/proc/self/exe", O_RDONLY);
	ASSERT_LE(0, tmp);
	ASSERT_FAILS(EFAULT, read(tmp, p, PG));
	close(tmp);

	/* O_DIRECT read from a disk file into it. */
	dfd = odirect_file();
	if (dfd >= 0) {
		ASSERT_FAILS(EFAULT, pread(dfd, p, PG, 0));
		ASSERT_FAILS(EFAULT, pread(dfd, p + PG, PG, 0));
		close(dfd);
	} else {
		TH_LOG("no O_DIRECT file on /mnt/disk (%s): case skipped",
		       strerror(errno));
	}

	/* The region file itself, opened read-only. */
	ASSERT_FAILS(EBADF, mshare_unmap(fd, 0, OBJ_SIZE));
	ASSERT_FAILS(EBADF, create_mapping(fd, OBJ_SIZE, PG, 0,
					   PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_FIXED |
					   MAP_ANONYMOUS, -1));
	ASSERT_FAILS(EBADF, write(fd, buf, 16));
	ASSERT_FAILS(EINVAL, ftruncate(fd, 2 * self->align));
	ASSERT_FAILS(EBADF, fallocate(fd, FALLOC_FL_PUNCH_HOLE |
				      FALLOC_FL_KEEP_SIZE, 0, OBJ_SIZE));

	ASSERT_EQ(-1L, obj_mismatch(p, OBJ_SIZE));
	ASSERT_EQ(0, munmap(p, self->align));
	close(fd);
	assert_untouched(_metadata, self->a_path, self->align);
}

/* ---- two instances ------------------------------------------------------ */

FIXTURE(instances) {
	char dir[sizeof(TMP_TEMPLATE)];
	char name[32];
	unsigned long align;
	bool mounted;
};

FIXTURE_SETUP(instances)
{
	self->mounted = false;
	self->align = read_align();
	if (!self->align)
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	snprintf(self->name, sizeof(self->name), "iso-%d", getpid());
	/* Whatever this test mounts dies with its mount namespace. */
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	memcpy(self->dir, TMP_TEMPLATE, sizeof(TMP_TEMPLATE));
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, mount("none", self->dir, "msharefs", 0, NULL))
		TH_LOG("mount: %s", strerror(errno));
	self->mounted = true;
}

FIXTURE_TEARDOWN(instances)
{
	char path[128];

	if (!self->align)
		return;
	snprintf(path, sizeof(path), MSHARE_DIR "/%s", self->name);
	unlink(path);
	if (self->mounted)
		umount2(self->dir, MNT_DETACH);
	rmdir(self->dir);
}

/* Create @name under @dir with @size, place a 4-page object, fill it. */
static int instance_region(const char *dir, const char *name,
			   unsigned long size, char c, char **p)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = mshare_region_create(AT_FDCWD, path, 0600, size);
	if (fd < 0)
		return -1;
	if (create_mapping(fd, 0, OBJ_SIZE, 0, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1))
		return -1;
	*p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*p == MAP_FAILED)
		return -1;
	memset(*p, c, OBJ_SIZE);
	return fd;
}

TEST_F(instances, are_independent)
{
	unsigned long a = self->align;
	char p1[128], p2[128], *m1, *m2;
	struct stat st;
	int fd1, fd2;

	snprintf(p1, sizeof(p1), MSHARE_DIR "/%s", self->name);

	/* The new instance has its own mshare_info, and no region. */
	ASSERT_TRUE(is_msharefs(self->dir));
	snprintf(p2, sizeof(p2), "%s/" INFO_NAME, self->dir);
	ASSERT_EQ(a, read_align_at(AT_FDCWD, p2));
	snprintf(p2, sizeof(p2), "%s/%s", self->dir, self->name);

	/* The same name in both: different sizes, objects and data. */
	fd1 = instance_region(MSHARE_DIR, self->name, a, '1', &m1);
	ASSERT_LE(0, fd1) TH_LOG("%s: %s", p1, strerror(errno));
	ASSERT_FAILS(ENOENT, stat(p2, &st));
	fd2 = instance_region(self->dir, self->name, 2 * a, '2', &m2);
	ASSERT_LE(0, fd2) TH_LOG("%s: %s", p2, strerror(errno));
	ASSERT_EQ(0, stat(p1, &st));
	ASSERT_EQ((off_t)a, st.st_size);
	ASSERT_EQ(0, stat(p2, &st));
	ASSERT_EQ((off_t)(2 * a), st.st_size);
	ASSERT_NE(m1, m2);
	ASSERT_EQ('1', m1[0]);
	ASSERT_EQ('2', m2[0]);
	ASSERT_EQ('1', m1[OBJ_SIZE - 1]);
	ASSERT_EQ('2', m2[OBJ_SIZE - 1]);

	/* An object in one is not in the other. */
	ASSERT_EQ(0, create_mapping(fd2, a, PG, 0, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS,
				    -1));
	m2[a] = 'x';
	ASSERT_EQ(0, mshare_unmap(fd1, 0, OBJ_SIZE));
	ASSERT_EQ(SEGV, run_child(do_store, m1));
	ASSERT_EQ('2', m2[0]);

	/* A region of one instance is no backing for the other. */
	ASSERT_FAILS(EINVAL, create_mapping(fd1, 0, PG, 0, PROT_READ,
					    MAP_SHARED | MAP_FIXED, fd2));

	/* The attached instance cannot go away; then it can. */
	ASSERT_FAILS(EBUSY, umount(self->dir));
	ASSERT_EQ(0, munmap(m2, 2 * a));
	close(fd2);
	ASSERT_EQ(0, umount(self->dir));
	self->mounted = false;
	ASSERT_FAILS(ENOENT, stat(p2, &st));
	ASSERT_EQ(0, stat(p1, &st));
	ASSERT_EQ((off_t)a, st.st_size);

	/* Unlinking in one instance left the other alone. */
	ASSERT_EQ(0, unlink(p1));
	ASSERT_EQ(0, munmap(m1, a));
	close(fd1);
}

TEST_HARNESS_MAIN
