// SPDX-License-Identifier: GPL-2.0
/*
 * libmshare against the kernel: each function of mshare.h does what
 * libmshare(3) says, on the real msharefs of the guest, including its
 * errors and what it leaves behind when it fails.
 */
/*
 * The kernel's msharefs selftests' header (in the kernel tree, under
 * tools/testing/selftests/msharefs) has region helpers of the same names
 * as libmshare's functions: renamed here, so that this program tests the
 * library's.
 */
#define mshare_region_create	kselftest_mshare_region_create
#define mshare_region_info	kselftest_mshare_region_info
#define mshare_attach		kselftest_mshare_attach
#define mshare_map		kselftest_mshare_map
#define mshare_unmap		kselftest_mshare_unmap
#define mshare_fdinfo_value	kselftest_mshare_fdinfo_value
#define mshare_proc_value	kselftest_mshare_proc_value
#include "mshare_test.h"
#undef mshare_region_create
#undef mshare_region_info
#undef mshare_attach
#undef mshare_map
#undef mshare_unmap
#undef mshare_fdinfo_value
#undef mshare_proc_value

#include "mshare.h"

#include <sys/syscall.h>

static int seq;

FIXTURE(lib) {
	char name[64];		/* under /sys/fs/mshare */
	char tmp[64];		/* a directory on a file system that is not */
	int dirfd;		/* of /sys/fs/mshare */
	unsigned long align;
};

FIXTURE_SETUP(lib)
{
	snprintf(self->name, sizeof(self->name), "lib-%d-%d", getpid(),
		 seq++);
	snprintf(self->tmp, sizeof(self->tmp), "/tmp/lib-%d", getpid());
	ASSERT_OK(mkdir(self->tmp, 0700));
	self->dirfd = open(MSHARE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, self->dirfd);
	self->align = read_align();
	ASSERT_NE(0UL, self->align);
}

FIXTURE_TEARDOWN(lib)
{
	char path[128];

	unlink_tagged(MSHARE_DIR, "lib", getpid());
	snprintf(path, sizeof(path), "%s/" INFO_NAME, self->tmp);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", self->tmp);
	unlink(path);
	snprintf(path, sizeof(path), "%s/file", self->tmp);
	unlink(path);
	rmdir(self->tmp);
	close(self->dirfd);
}

/* Write @len bytes of @s to @dir/@name. */
static int put_file(const char *dir, const char *name, const char *s,
		    size_t len)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	ret = write(fd, s, len) == (ssize_t)len ? 0 : -1;
	close(fd);
	return ret;
}

/* The mount: the default, $MSHARE_MOUNT, and the alignment's format. */
TEST_F(lib, mount_and_alignment)
{
	char proc[128];
	int fd;

	ASSERT_OK(unsetenv("MSHARE_MOUNT"));
	ASSERT_STREQ(MSHARE_DEFAULT_DIR, mshare_mount_dir());
	ASSERT_OK(setenv("MSHARE_MOUNT", "", 1));
	ASSERT_STREQ(MSHARE_DEFAULT_DIR, mshare_mount_dir());
	ASSERT_OK(setenv("MSHARE_MOUNT", self->tmp, 1));
	ASSERT_STREQ(self->tmp, mshare_mount_dir());

	/* Same answer as the tests' own strict reader. */
	ASSERT_EQ(read_align_at(AT_FDCWD, INFO_PATH),
		  mshare_alignment(MSHARE_DIR));

	/* With $MSHARE_MOUNT on a directory without mshare_info: ENOENT. */
	errno = 0;
	ASSERT_EQ(0UL, mshare_alignment(NULL));
	ASSERT_EQ(ENOENT, errno);
	/* Anything but digits and one newline is malformed. */
	ASSERT_OK(put_file(self->tmp, INFO_NAME, "12x\n", 4));
	errno = 0;
	ASSERT_EQ(0UL, mshare_alignment(NULL));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_OK(put_file(self->tmp, INFO_NAME, "4096", 4));
	ASSERT_EQ(0UL, mshare_alignment(self->tmp));
	ASSERT_OK(put_file(self->tmp, INFO_NAME, "0\n", 2));
	ASSERT_EQ(0UL, mshare_alignment(self->tmp));
	ASSERT_OK(put_file(self->tmp, INFO_NAME, "4096\n", 5));
	ASSERT_EQ(4096UL, mshare_alignment(NULL));
	ASSERT_OK(unsetenv("MSHARE_MOUNT"));

	fd = open(MSHARE_DIR, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, mshare_is_msharefs(fd));
	close(fd);
	snprintf(proc, sizeof(proc), "%s", self->tmp);
	fd = open(proc, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mshare_is_msharefs(fd));
	close(fd);
	ASSERT_EQ(-1, mshare_is_msharefs(-1));
	ASSERT_EQ(EBADF, errno);
}

/*
 * A region is created with exactly the mode asked for, whatever the
 * umask, and a failed creation leaves no region behind.
 */
TEST_F(lib, create_mode_and_failure)
{
	struct mshare_info info;
	mode_t old = umask(077);
	struct stat st;
	int fd;

	fd = mshare_region_create(self->dirfd, self->name, 0664, 0);
	umask(old);
	ASSERT_LE(0, fd);
	ASSERT_OK(fstat(fd, &st));
	ASSERT_EQ(0664U, st.st_mode & 07777);
	ASSERT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	ASSERT_OK(mshare_region_info(fd, &info));
	ASSERT_EQ(0UL, info.size);
	ASSERT_EQ(0UL, info.start);

	/* Taken name: EEXIST, and the region there is untouched. */
	ASSERT_FAILS(EEXIST, mshare_region_create(self->dirfd, self->name,
						  0600, self->align));
	ASSERT_OK(fstat(fd, &st));
	ASSERT_EQ(0664U, st.st_mode & 07777);
	ASSERT_EQ(0, st.st_size);

	/* Size and setting it once. */
	ASSERT_FAILS(EINVAL, mshare_region_set_size(fd, 1ULL << 63));
	ASSERT_OK(mshare_region_set_size(fd, self->align));
	ASSERT_OK(mshare_region_info(fd, &info));
	ASSERT_EQ(self->align, info.size);
	close(fd);

	/* A size the kernel refuses: EINVAL and no region of that name. */
	ASSERT_OK(mshare_region_remove(self->dirfd, self->name));
	ASSERT_FAILS(EINVAL, mshare_region_create(self->dirfd, self->name,
						  0600, self->align / 2));
	ASSERT_FAILS(ENOENT, faccessat(self->dirfd, self->name, F_OK, 0));

	/* Not on msharefs: ENOTTY, and the file it made is gone again. */
	fd = open(self->tmp, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, fd);
	ASSERT_FAILS(ENOTTY, mshare_region_create(fd, "file", 0600, 0));
	ASSERT_FAILS(ENOENT, faccessat(fd, "file", F_OK, 0));
	close(fd);
}

/* Opening: only msharefs files, always close-on-exec, in the mode asked. */
TEST_F(lib, open)
{
	int fd, rfd;

	ASSERT_FAILS(ENOENT, mshare_region_open(self->dirfd, self->name,
						O_RDWR));
	fd = mshare_region_create(self->dirfd, self->name, 0600, self->align);
	ASSERT_LE(0, fd);
	rfd = mshare_region_open(self->dirfd, self->name, O_RDONLY);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(O_RDONLY, fcntl(rfd, F_GETFL) & O_ACCMODE);
	ASSERT_EQ(FD_CLOEXEC, fcntl(rfd, F_GETFD) & FD_CLOEXEC);
	/* A reader cannot place objects: the kernel's rule, seen through. */
	ASSERT_FAILS(EBADF, mshare_map_anon(rfd, 0, PG));
	/* The mount's root is on msharefs, but no region. */
	ASSERT_FAILS(EISDIR, mshare_region_open(AT_FDCWD, MSHARE_DIR,
						O_RDONLY));
	ASSERT_FAILS(ENOTTY, mshare_region_open(AT_FDCWD, "/proc/self/status",
						O_RDONLY));
	close(rfd);
	close(fd);
}

/*
 * Objects placed through the library are what the kernel reports, and
 * an attachment in another process sees the same memory at the address
 * of the first.
 */
TEST_F(lib, map_attach_inspect)
{
	struct mshare_object *objs;
	struct mshare_stats st;
	struct mshare_info info;
	char *p, *q;
	size_t n;
	int fd, mfd, status;
	pid_t pid;

	fd = mshare_region_create(self->dirfd, self->name, 0600, self->align);
	ASSERT_LE(0, fd);
	ASSERT_OK(mshare_region_stats(fd, &st));
	ASSERT_EQ(self->align, st.size);
	ASSERT_EQ(0UL, st.start);
	ASSERT_EQ(0UL, st.attachments);
	ASSERT_EQ(0UL, st.objects);
	ASSERT_OK(mshare_region_objects(fd, &objs, &n));
	ASSERT_EQ(0UL, n);
	ASSERT_EQ(NULL, objs);

	ASSERT_OK(mshare_map_anon(fd, 0, 4 * PG));
	mfd = memfd_sized("lib-memfd", 0, 2 * PG);
	ASSERT_LE(0, mfd);
	ASSERT_OK(mshare_map(fd, HPAGE, PG, PROT_READ, 0, mfd, PG));
	/* @flags reach the kernel, which refuses MAP_POPULATE for now. */
	ASSERT_FAILS(EINVAL, mshare_map(fd, 2 * HPAGE, PG, PROT_READ,
					MAP_POPULATE, -1, 0));
	ASSERT_EQ(2, mshare_fdinfo_value(fd, "objects"));

	ASSERT_MAPS(p, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(0UL, (unsigned long)p % self->align);
	fill(p, 4 * PG, 5);
	ASSERT_OK(mshare_region_info(fd, &info));
	ASSERT_EQ((unsigned long)p, info.start);

	ASSERT_OK(mshare_region_stats(fd, &st));
	ASSERT_EQ((unsigned long)p, st.start);
	ASSERT_EQ(1UL, st.attachments);
	ASSERT_EQ(2UL, st.objects);
	ASSERT_LE(4 * PG, st.rss);
	ASSERT_LT(0UL, st.pgtables);
	ASSERT_EQ(2, mshare_fdinfo_value(fd, "objects"));
	ASSERT_EQ((int64_t)(unsigned long)p, mshare_fdinfo_value(fd, "start"));
	ASSERT_EQ(-1, mshare_fdinfo_value(fd, "no-such-line"));
	ASSERT_EQ(ENOENT, errno);

	ASSERT_OK(mshare_region_objects(fd, &objs, &n));
	ASSERT_EQ(2UL, n);
	ASSERT_EQ(0UL, objs[0].region_offset);
	ASSERT_EQ(4 * PG, objs[0].size);
	ASSERT_EQ(PROT_READ | PROT_WRITE, objs[0].prot);
	ASSERT_STREQ("anon", objs[0].backing);
	ASSERT_EQ(HPAGE, objs[1].region_offset);
	ASSERT_EQ(PG, objs[1].size);
	ASSERT_EQ(PG, objs[1].file_offset);
	ASSERT_EQ(PROT_READ, objs[1].prot);
	ASSERT_NE(NULL, strstr(objs[1].backing, "lib-memfd"));
	mshare_objects_free(objs, n);

	/* Another process, the region opened by name, attaches at p. */
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int rfd = mshare_region_open(self->dirfd, self->name,
					     O_RDONLY);
		char *c;

		munmap(p, self->align);
		c = mshare_attach_start(rfd, PROT_READ);
		if (FAILED(c == p) || FAILED(mismatch(c, 4 * PG, 5) == -1) ||
		    FAILED(mshare_fdinfo_value(rfd, "attachments") == 2) ||
		    FAILED(!mshare_detach(c, self->align)))
			_exit(1);
		/* Something in the way: EEXIST, nothing replaced. */
		c = mmap(p, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED, -1, 0);
		if (FAILED(c == p) ||
		    FAILED(mshare_attach_start(rfd, PROT_READ) == MAP_FAILED &&
			   errno == EEXIST) ||
		    FAILED(*c == 0))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);

	/* A second attachment here, where the kernel puts it. */
	ASSERT_MAPS(q, mshare_attach(fd, NULL, PROT_READ, 0));
	ASSERT_NE(p, q);
	ASSERT_PATTERN(q, 4 * PG, 5);
	ASSERT_EQ(2, mshare_fdinfo_value(fd, "attachments"));
	ASSERT_OK(mshare_detach(q, self->align));

	ASSERT_OK(mshare_unmap(fd, 0, self->align));
	ASSERT_OK(mshare_region_stats(fd, &st));
	ASSERT_EQ(0UL, st.objects);
	ASSERT_OK(mshare_detach(p, self->align));
	ASSERT_EQ(0, mshare_fdinfo_value(fd, "attachments"));

	ASSERT_OK(mshare_region_remove(self->dirfd, self->name));
	ASSERT_FAILS(ENOENT, mshare_region_open(self->dirfd, self->name,
						O_RDONLY));
	ASSERT_FAILS(ENOENT, mshare_region_remove(self->dirfd, self->name));
	close(mfd);
	close(fd);
}

/*
 * An unsized region attaches nowhere: the library says so itself, and so
 * does the kernel for a mapping of the alignment's length; a bad fd is
 * EBADF.
 */
TEST_F(lib, attach_errors)
{
	int fd = mshare_region_create(self->dirfd, self->name, 0600, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(MAP_FAILED, mshare_attach(fd, NULL, RW, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->align, RW, MAP_SHARED, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mshare_attach_start(-1, RW));
	ASSERT_EQ(EBADF, errno);
	close(fd);
}

/*
 * The /proc reader: decimal and 0x numbers, the first matching line,
 * lines longer than its buffer skipped, a last line without a newline,
 * ENOENT for a missing key; the same numbers as the kernel's files.
 */
TEST_F(lib, proc_value)
{
	static char text[3 * 4096];
	char path[128];
	size_t len = 0;

	len += sprintf(text + len, "A:\t12 kB\nBb: 0x1f\n");
	/*
	 * A line that fills the reader's 4 KiB buffer and goes on with
	 * "C: 5": skipped whole, so the C that counts is the next one.
	 */
	len += sprintf(text + len, "L:");
	memset(text + len, 'a', 4096 - 2);
	len += 4096 - 2;
	len += sprintf(text + len, "C: 5\nAa: 1\nC: 3\nNeg: -4\nBig: "
		       "99999999999999999999\nLast:\t42");
	ASSERT_OK(put_file(self->tmp, "proc", text, len));
	snprintf(path, sizeof(path), "%s/proc", self->tmp);
	ASSERT_EQ(12, mshare_proc_value(path, "A"));
	ASSERT_EQ(31, mshare_proc_value(path, "Bb"));
	ASSERT_EQ(1, mshare_proc_value(path, "Aa"));
	ASSERT_EQ(3, mshare_proc_value(path, "C"));
	ASSERT_EQ(-1, mshare_proc_value(path, "L"));
	ASSERT_EQ(42, mshare_proc_value(path, "Last"));
	ASSERT_EQ(-1, mshare_proc_value(path, "B"));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(-1, mshare_proc_value(path, "Neg"));
	ASSERT_EQ(-1, mshare_proc_value(path, "Big"));
	ASSERT_EQ(-1, mshare_proc_value("/nonexistent", "A"));
	ASSERT_EQ(ENOENT, errno);

	ASSERT_LE(0, mshare_proc_value("/proc/self/status", "VmPTE"));
	ASSERT_EQ(0, mshare_proc_value("/proc/self/status", "VmMsharePTE"));
	ASSERT_LT(0, mshare_proc_value("/proc/meminfo", "MemTotal"));
}

TEST_HARNESS_MAIN
