// SPDX-License-Identifier: GPL-2.0
/*
 * mshare_stress: a race and stress tester for msharefs.
 *
 * A supervisor forks W worker processes of T threads each. For a given time
 * every thread does random operations on a small pool of region names in
 * /sys/fs/mshare/stress: create, size, unlink, rename, read, fdinfo, attach
 * (at NULL, at a hint, MAP_FIXED, MAP_FIXED_NOREPLACE) and detach, place
 * objects (anonymous, memfd, ext4 file, hugetlbfs file, MAP_HUGETLB) and
 * remove them, touch and verify their data, fork children that touch and
 * exit or are SIGKILLed mid-touch, exec with an attachment, and every
 * operation msharefs.rst lists as refused on an attachment. The supervisor
 * also SIGKILLs whole workers and starts new ones.
 *
 * Data check. Every object starts with a header (magic, seed, size, check)
 * and every other 64-bit word i holds pat(seed, i). A creator fills the
 * pattern first and writes the header last, so a reader that sees a valid
 * header may check any word against it. Object memory is only written under
 * an OFD lock on (region inode, slot): exclusive to place and fill, shared
 * to touch (which rewrites the expected values). Readers take no lock: a
 * SIGSEGV (object removed by MSHAREFS_UNMAP) or a header that changed
 * between the first read and the mismatch (object replaced) is tolerated;
 * a wrong word under a header that did not change is corruption.
 *
 * Further checks: right after a successful MSHAREFS_UNMAP under the slot
 * lock, the unmapped range must fault in the caller (no stale TLB entry);
 * writes through read-only attachments and to read-only objects must fault;
 * every operation on an attachment must give one of the results
 * msharefs.rst documents for it (see documented()): a refused one must fail
 * with its errno, and its success fails the run as much as another errno;
 * exec must leave no attachment behind.
 *
 * With -b the supervisor runs a short warm-up, then records MemFree,
 * SUnreclaim, PageTables and free huge pages, runs the stress, removes
 * every region and compares (see check_baseline()).
 *
 * Usage: mshare_stress [-s SECONDS] [-w WORKERS] [-t THREADS] [-k KILL_S]
 *                      [-m MARGIN_S] [-b]
 * SECONDS defaults to $STRESS_SECONDS or 60. Exit status 0: pass.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <linux/msharefs.h>
#include <linux/userfaultfd.h>
#include <linux/futex.h>

#include "mshare.h"
#include "test_hmm_uapi.h"

#define DMIRROR_PATH	"/dev/hmm_dmirror0"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT		0x01
#endif

#define DIR_PATH	"/sys/fs/mshare/stress"
#define INFO_PATH	"/sys/fs/mshare/mshare_info"
#define DISK_DIR	"/mnt/disk"
#define HUGE_DIR	"/dev/hugepages"
#define NAMES		6
#define NSLOTS		6
#define MAX_ATT		4		/* attachments per thread */
#define MAX_WORKERS	64
#define MAX_THREADS	16
#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define TIB		(1024 * GIB)
#define PAGE		4096UL
#define HPAGE		(2 * MIB)
#define SLOT_SPAN	(16 * MIB)	/* an object never exceeds 8 MiB */
#define MAGIC		0x4d53485253545231ULL	/* "MSHRSTR1" */
#define LOWMEM_KB	(640 * 1024)	/* stop placing objects below this */
#define CHILD_WAIT_S	60		/* a fork/exec child must end by then */

/* ---- statistics, in memory shared by every process of the run ---- */

enum op {
	OP_NEW, OP_SIZE, OP_UNLINK, OP_RENAME, OP_READ, OP_FDINFO,
	OP_ATTACH, OP_DETACH, OP_MAP, OP_UNMAP, OP_VERIFY, OP_TOUCH,
	OP_FORK, OP_EXEC, OP_REFUSED, NR_OPS
};
static const char *const op_name[NR_OPS] = {
	"create", "size", "unlink", "rename", "read", "fdinfo",
	"attach", "detach", "map", "unmap", "verify", "touch",
	"fork", "exec", "refused-op",
};
static const int op_weight[NR_OPS] = {
	4, 3, 3, 3, 2, 2, 10, 6, 12, 6, 20, 12, 3, 1, 12,
};

enum kind { K_ANON, K_MEMFD, K_DISK, K_HUGEFILE, K_ANONHUGE, NR_KINDS };
static const char *const kind_name[NR_KINDS] = {
	"anon", "memfd", "disk", "hugetlbfs", "anon-hugetlb",
};

/* Operations msharefs.rst refuses or defines on an attachment. */
enum refused {
	R_MUNMAP_PART, R_MPROTECT, R_MPROTECT_PART, R_PKEY_MPROTECT,
	R_MREMAP_SHRINK, R_MREMAP_GROW, R_MREMAP_MOVE, R_MADVISE,
	R_MADVISE_PART, R_MADV_REMOVE_HOLE,
	R_PROCESS_MADVISE, R_MLOCK, R_MLOCK2, R_MLOCKALL, R_MSYNC_ASYNC,
	R_MSYNC_SYNC, R_MINCORE, R_MBIND, R_MBIND_PART, R_MOVE_PAGES, R_PVM_READV,
	R_PROC_MEM, R_ODIRECT, R_VMSPLICE, R_FUTEX, R_UFFD, R_PROC_READ,
	R_CLEAR_REFS, R_HMM_READ, R_HMM_WRITE, R_MIGRATE_PAGES, NR_REFUSED
};

/*
 * Documented result of each (msharefs.rst, "Operations on an
 * attachment"), and the errnos its rules allow: ranges holding holes fail
 * ENOMEM as unmapped memory does (EFAULT or EIO for GUP users), changing
 * protections needs the region open for writing (EACCES). Success is
 * allowed only where .err is 0: the refused operations (.err an errno)
 * must fail. madvise depends on the advice and the caller: documented().
 */
static const struct {
	const char *name;
	int err;		/* documented: 0 or an errno */
	int alt, alt2;		/* also accepted */
} refused_doc[NR_REFUSED] = {
	[R_MUNMAP_PART]		= { "munmap-part", EINVAL },
	[R_MPROTECT]		= { "mprotect", 0, ENOMEM, EACCES },
	[R_MPROTECT_PART]	= { "mprotect-part", 0, ENOMEM, EACCES },
	[R_PKEY_MPROTECT]	= { "pkey_mprotect", 0, ENOMEM, EACCES },
	[R_MREMAP_SHRINK]	= { "mremap-shrink", EINVAL },
	[R_MREMAP_GROW]		= { "mremap-grow", EINVAL },
	[R_MREMAP_MOVE]		= { "mremap-move", EINVAL },
	[R_MADVISE]		= { "madvise", 0 },	/* see documented() */
	[R_MADVISE_PART]	= { "madvise-part", 0 },
	[R_MADV_REMOVE_HOLE]	= { "madv-remove-hole", ENOMEM },
	[R_PROCESS_MADVISE]	= { "process_madvise", 0, ENOMEM, EINVAL },
	[R_MLOCK]		= { "mlock", 0, ENOMEM },
	[R_MLOCK2]		= { "mlock2", 0, ENOMEM },
	[R_MLOCKALL]		= { "mlockall", 0 },
	[R_MSYNC_ASYNC]		= { "msync-async", 0 },
	[R_MSYNC_SYNC]		= { "msync-sync", 0, ENOMEM },
	[R_MINCORE]		= { "mincore", 0 },
	[R_MBIND]		= { "mbind", 0, EFAULT },	/* holes */
	[R_MBIND_PART]		= { "mbind-part", 0, EFAULT },
	/* Status checked; a move can fail as for any mapping: no free
	 * (huge) page on the target node, or the page not migrated. */
	[R_MOVE_PAGES]		= { "move_pages", 0, ENOMEM, EBUSY },
	[R_PVM_READV]		= { "process_vm_readv", 0, EFAULT },
	[R_PROC_MEM]		= { "proc-mem", 0, EIO },
	[R_ODIRECT]		= { "odirect-write", 0, EFAULT },
	[R_VMSPLICE]		= { "vmsplice", 0, EFAULT },
	[R_FUTEX]		= { "futex", 0, EFAULT, EAGAIN },
	/* Registered and at once unregistered: a range with no object, or
	 * a file userfaultfd does not take, is EINVAL; an object another
	 * process's userfaultfd registered meanwhile, EBUSY. */
	[R_UFFD]		= { "uffd-register", 0, EINVAL, EBUSY },
	[R_PROC_READ]		= { "smaps/pagemap", 0 },
	[R_CLEAR_REFS]		= { "clear_refs", 0 },
	/* A device mirroring the process (the HMM test driver): a hole or
	 * an unreadable attachment is EFAULT; invalidated all through the
	 * driver's retries, EBUSY. It writes only through a reader's: EPERM. */
	[R_HMM_READ]		= { "hmm-read", 0, EFAULT, EBUSY },
	[R_HMM_WRITE]		= { "hmm-write", EPERM },
	/* The whole process, region pages behind its writer's attachments
	 * included: pages not moved are counted, not errors. */
	[R_MIGRATE_PAGES]	= { "migrate_pages", 0 },
};

struct stats {
	long ops[NR_OPS];
	long ref_try[NR_REFUSED], ref_doc[NR_REFUSED], ref_ok[NR_REFUSED];
	long ref_alt[NR_REFUSED];
	long objects[NR_KINDS];
	long map_exist, map_nomem, map_lowmem, fill_fault;
	long faults;		/* SIGSEGV/SIGBUS tolerated: object gone */
	long replaced;		/* mismatch explained by a new header */
	long empty;		/* no valid header at a slot */
	long words;		/* words verified */
	long ro_denied;		/* writes refused as they must be */
	long unmap_checked;	/* ranges seen faulting after UNMAP */
	long mincore_resident, pagemap_present;
	long sigbus;		/* of the faults: none expected, shown */
	long worker_kills, child_kills, child_timeouts, execs_ok;
	/* failures */
	long corrupt, stale, ro_violation, unexpected, child_fail, hangs;
	int stop;
	long heartbeat[MAX_WORKERS][MAX_THREADS];
	int have_first;		/* first_fail holds the first failure */
	char first_fail[400];
};

static struct stats *st;
static int stats_fd = -1;
static unsigned long align;
static double deadline;

#define CNT(x)		__atomic_fetch_add(&st->x, 1, __ATOMIC_RELAXED)
#define ADD(x, n)	__atomic_fetch_add(&st->x, (n), __ATOMIC_RELAXED)
#define GET(x)		__atomic_load_n(&st->x, __ATOMIC_RELAXED)

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* One write(2), so lines of concurrent processes do not mix. */
	if (write(2, buf, n) < 0)
		return;
}

/*
 * Say a failure, and keep the first one so the last line of the run can
 * repeat it: CI shows only the tail of a log.
 */
static void __attribute__((format(printf, 1, 2))) fail_say(const char *fmt, ...)
{
	char buf[sizeof(st->first_fail)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("%s", buf);
	if (!__atomic_exchange_n(&st->have_first, 1, __ATOMIC_ACQ_REL))
		memcpy(st->first_fail, buf, sizeof(buf));
}

#define FAIL(counter, fmt, ...) do {					\
	CNT(counter);							\
	fail_say("stress: FAIL %s: pid %d: " fmt, #counter, getpid(),	\
		 ##__VA_ARGS__);					\
} while (0)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- randomness and the data pattern ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static __thread uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return mix64(rng_state);
}

static unsigned int rn(unsigned int n)
{
	return rnd() % n;
}

static uint64_t pat(uint64_t seed, uint64_t i)
{
	return mix64(seed ^ (i * 0x9e3779b97f4a7c15ULL));
}

struct hdr {
	uint64_t magic;
	uint64_t seed;
	uint64_t size;
	uint64_t check;		/* hdr_check(); bit 0 of seed: read-only */
};
#define HDR_WORDS	(sizeof(struct hdr) / 8)

static uint64_t hdr_check(uint64_t seed, uint64_t size)
{
	return mix64(seed * 3 + size + MAGIC);
}

static int hdr_valid(const struct hdr *h)
{
	return h->magic == MAGIC && h->size >= PAGE && h->size <= 8 * MIB &&
	       h->check == hdr_check(h->seed, h->size);
}

static uint64_t new_seed(int ro)
{
	static uint64_t counter;
	uint64_t s = mix64(rnd() ^ ((uint64_t)getpid() << 32) ^
			   __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));

	return (s & ~1ULL) | !!ro;
}

/* Pattern words and header of an object, in a buffer or in place. */
static void fill_words(volatile uint64_t *w, uint64_t seed, uint64_t from,
		       uint64_t to)
{
	uint64_t i;

	for (i = from; i < to; i++)
		w[i] = pat(seed, i);
}

static void put_hdr(volatile uint64_t *w, uint64_t seed, uint64_t size)
{
	w[1] = seed;
	w[2] = size;
	w[3] = hdr_check(seed, size);
	__atomic_store_n((uint64_t *)&w[0], MAGIC, __ATOMIC_RELEASE);
}

static void get_hdr(volatile uint64_t *w, struct hdr *h)
{
	h->magic = __atomic_load_n((uint64_t *)&w[0], __ATOMIC_ACQUIRE);
	h->seed = w[1];
	h->size = w[2];
	h->check = w[3];
}

/* ---- faults inside the region ---- */

/* volatile: the stores must not be moved around the guarded accesses */
static __thread sigjmp_buf *volatile fault_jmp;
static __thread volatile int fault_sig;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (fault_jmp) {
		fault_sig = sig;
		if (sig == SIGBUS)
			CNT(sigbus);
		siglongjmp(*fault_jmp, 1);
	}
	/* A fault outside a guarded access is a bug of ours: die of it. */
	signal(sig, SIG_DFL);
}

static void install_handlers(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault,
				.sa_flags = SA_SIGINFO | SA_NODEFER };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * GUARD(jb) runs the following block with faults turned into a jump back
 * that makes GUARD true: if (GUARD(jb)) { fault } else { accesses; UNGUARD; }
 */
#define GUARD(jb)	(sigsetjmp(jb, 1) ? (fault_jmp = NULL, 1) :	\
			 (fault_jmp = &(jb), 0))
#define UNGUARD()	(fault_jmp = NULL)

/* ---- per-thread state ---- */

struct att {
	char *addr;		/* NULL: free */
	int fd;
	int rw;
};

struct tctx {
	int w, t;
	struct att att[MAX_ATT];
	unsigned long window;	/* MAP_FIXED addresses owned by this thread */
};

static unsigned long slot_off(int slot)
{
	/* Three slots share a PMD table, the others have PUD entries each. */
	return slot < 3 ? slot * SLOT_SPAN : (slot - 2) * 64 * GIB;
}

static void name_path(char *buf, size_t len, int n)
{
	snprintf(buf, len, DIR_PATH "/r%d", n);
}

static long mem_available_kb(void)
{
	return mshare_proc_value("/proc/meminfo", "MemAvailable");
}

static struct att *pick_att(struct tctx *c, int need_rw)
{
	int i, start = rn(MAX_ATT);

	for (i = 0; i < MAX_ATT; i++) {
		struct att *a = &c->att[(start + i) % MAX_ATT];

		if (a->addr && (a->rw || !need_rw))
			return a;
	}
	return NULL;
}

/* An OFD lock on one byte per slot of the attachment's region inode. */
static int slot_lock(struct att *a, int slot, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = slot, .l_len = 1 };
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", a->fd);
	fd = open(path, (type == F_WRLCK ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		FAIL(unexpected, "reopen region fd %d: %s", a->fd,
		     strerror(errno));
		return -1;
	}
	while (fcntl(fd, F_OFD_SETLKW, &fl)) {
		if (errno == EINTR)
			continue;
		FAIL(unexpected, "F_OFD_SETLKW: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- region names ---- */

static void op_new(struct tctx *c)
{
	char path[64];
	int fd;

	(void)c;
	name_path(path, sizeof(path), rn(NAMES));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno != EEXIST)
			FAIL(unexpected, "create %s: %s", path,
			     strerror(errno));
		return;
	}
	/* Mostly sized at once; some stay unsized for others to meet. */
	if (rn(5)) {
		int r = rn(2) ? ftruncate(fd, align) :
				fallocate(fd, 0, 0, align);
		if (r)
			FAIL(unexpected, "size new %s: %s", path,
			     strerror(errno));
	}
	close(fd);
}

static void expect_err(int r, int err, const char *what)
{
	if (r == -1 && errno == err)
		return;
	FAIL(unexpected, "%s: %d/%s, want %s", what, r,
	     r ? strerror(errno) : "success", strerror(err));
}

static void op_size(struct tctx *c)
{
	struct stat sb;
	char path[64];
	int fd, ro;

	(void)c;
	name_path(path, sizeof(path), rn(NAMES));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &sb)) {
		FAIL(unexpected, "fstat %s: %s", path, strerror(errno));
	} else if (sb.st_size == 0) {
		if (ftruncate(fd, align) && errno != EINVAL)
			FAIL(unexpected, "ftruncate: %s", strerror(errno));
	} else if (sb.st_size != (off_t)align) {
		FAIL(unexpected, "%s has size %lld", path,
		     (long long)sb.st_size);
	} else {
		if (ftruncate(fd, align))
			FAIL(unexpected, "same size: %s", strerror(errno));
		expect_err(ftruncate(fd, 2 * align), EINVAL, "grow");
		expect_err(ftruncate(fd, align / 2), EINVAL, "shrink");
		expect_err(fallocate(fd, 1, 0, align), EINVAL,
			   "fallocate mode");
		expect_err(write(fd, "x", 1), EINVAL, "write region");
	}
	close(fd);
	/* The ioctls need the region open for writing. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ro = mshare_map(fd, 0, PAGE, PROT_READ, 0, -1, 0);
	expect_err(ro, EBADF, "CREATE_MAPPING on O_RDONLY");
	close(fd);
}

static void op_unlink(struct tctx *c)
{
	char path[64];

	(void)c;
	name_path(path, sizeof(path), rn(NAMES));
	if (unlink(path) && errno != ENOENT)
		FAIL(unexpected, "unlink %s: %s", path, strerror(errno));
}

static void op_rename(struct tctx *c)
{
	static const unsigned int flags[] = { 0, 0, RENAME_NOREPLACE,
					      RENAME_EXCHANGE };
	char from[64], to[64];
	unsigned int f = flags[rn(4)];
	int a = rn(NAMES), b = rn(NAMES);

	(void)c;
	if (a == b)
		return;
	name_path(from, sizeof(from), a);
	name_path(to, sizeof(to), b);
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, f) &&
	    errno != ENOENT && !(errno == EEXIST && f == RENAME_NOREPLACE))
		FAIL(unexpected, "rename %s %s (%u): %s", from, to, f,
		     strerror(errno));
}

static void op_read(struct tctx *c)
{
	struct mshare_info info;
	uint64_t size;
	struct dirent *de;
	char path[64];
	DIR *d;
	int fd;
	ssize_t n;

	(void)c;
	d = opendir(DIR_PATH);
	while (d && (de = readdir(d)))
		;
	if (d)
		closedir(d);
	name_path(path, sizeof(path), rn(NAMES));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, &info, sizeof(info));
	if (n != sizeof(info))
		FAIL(unexpected, "read info: %zd %s", n, strerror(errno));
	else if (info.size && info.size != align)
		FAIL(unexpected, "info.size %llu", (unsigned long long)info.size);
	else if (info.start % align)
		FAIL(unexpected, "info.start %llx unaligned",
		     (unsigned long long)info.start);
	/* Another worker may size the region in between, never resize it. */
	n = pread(fd, &size, 8, 8);
	if (n != 8 || (size != info.size && !(!info.size && size == align)))
		FAIL(unexpected, "pread size: %zd (%llu, was %llu)", n,
		     (unsigned long long)size, (unsigned long long)info.size);
	if (pread(fd, &size, 8, 16) != 0)
		FAIL(unexpected, "read past the info is not EOF");
	close(fd);
}

static void op_fdinfo(struct tctx *c)
{
	struct att *a = pick_att(c, 0);
	char path[64], line[256];
	unsigned long v, objects = 0, lines = 0;
	int have_size = 0;
	FILE *f;

	if (!a)
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", a->fd);
	f = fopen(path, "r");
	if (!f) {
		FAIL(unexpected, "%s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "mshare-size: %lu", &v) == 1) {
			have_size = 1;
			if (v != align)
				FAIL(unexpected, "fdinfo size %lu", v);
		}
		sscanf(line, "mshare-objects: %lu", &objects);
		if (!strncmp(line, "mshare-object:", 14))
			lines++;
	}
	fclose(f);
	/* Objects may come and go between the two passes of the kernel. */
	if (!have_size)
		FAIL(unexpected, "fdinfo without mshare-size");
	(void)lines;
	(void)objects;
}

/* ---- attach and detach ---- */

static void attach_bad(int fd, int rw)
{
	void *p;

	p = mmap(NULL, align / 2, PROT_READ, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED)
		munmap(p, align / 2);
	expect_err(p == MAP_FAILED ? -1 : 0, EINVAL, "attach short length");
	p = mmap(NULL, align, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED)
		munmap(p, align);
	expect_err(p == MAP_FAILED ? -1 : 0, EINVAL, "attach MAP_PRIVATE");
	p = mmap(NULL, align, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED)
		munmap(p, align);
	expect_err(p == MAP_FAILED ? -1 : 0, EPERM, "attach PROT_EXEC");
	if (!rw) {
		p = mmap(NULL, align, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (p != MAP_FAILED)
			munmap(p, align);
		expect_err(p == MAP_FAILED ? -1 : 0, EACCES,
			   "attach RW on O_RDONLY");
	}
}

#define WINDOWS		(32 * TIB)

static int in_windows(void *p)
{
	unsigned long x = (unsigned long)p;

	return x >= WINDOWS && x < WINDOWS + MAX_THREADS * MAX_ATT * align;
}

static void op_attach(struct tctx *c)
{
	struct att *a = NULL;
	struct mshare_info info;
	struct stat sb;
	char path[64];
	int i, fd, rw = rn(8) != 0, mode = rn(5), flags = MAP_SHARED;
	unsigned long want = 0;
	void *p;

	for (i = 0; i < MAX_ATT; i++)
		if (!c->att[i].addr) {
			a = &c->att[i];
			break;
		}
	if (!a)
		return;
	name_path(path, sizeof(path), rn(NAMES));
	fd = open(path, rw ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) || (!sb.st_size &&
			       (!rw || ftruncate(fd, align)))) {
		close(fd);
		return;
	}
	if (!rn(10))
		attach_bad(fd, rw);
	switch (mode) {
	case 1:		/* an aligned free hint in our window */
	case 2:		/* MAP_FIXED in our window */
	case 3:		/* MAP_FIXED_NOREPLACE in our window */
		want = c->window + (a - c->att) * align;
		flags |= mode == 2 ? MAP_FIXED :
			 mode == 3 ? MAP_FIXED_NOREPLACE : 0;
		break;
	case 4:		/* where the first attacher did, if free */
		/*
		 * Not if that is in the MAP_FIXED windows: a hint taken
		 * there would, until it is moved below, sit in another
		 * thread's slot, whose MAP_FIXED_NOREPLACE would fail with
		 * EEXIST and whose MAP_FIXED would replace it.
		 */
		if (read(fd, &info, sizeof(info)) == sizeof(info) &&
		    !in_windows((void *)(unsigned long)info.start))
			want = info.start;
		break;
	}
	p = mmap((void *)want, align, PROT_READ | (rw ? PROT_WRITE : 0),
		 flags, fd, 0);
	/* The windows are for MAP_FIXED: a hint may not land in them. */
	if (mode == 4 && p != MAP_FAILED && in_windows(p)) {
		munmap(p, align);
		p = mmap(NULL, align, PROT_READ | (rw ? PROT_WRITE : 0),
			 MAP_SHARED, fd, 0);
	}
	if (p == MAP_FAILED) {
		if (errno != ENOMEM)
			FAIL(unexpected, "attach %s mode %d at %lx: %s", path,
			     mode, want, strerror(errno));
		close(fd);
		return;
	}
	if ((unsigned long)p % align || (mode && mode < 4 &&
					  (unsigned long)p != want))
		FAIL(unexpected, "attach mode %d at %p, wanted %lx", mode, p,
		     want);
	a->addr = p;
	a->fd = fd;
	a->rw = rw;
}

static void detach(struct att *a)
{
	if (munmap(a->addr, align))
		FAIL(unexpected, "munmap attachment %p: %s", a->addr,
		     strerror(errno));
	close(a->fd);
	a->addr = NULL;
}

static void op_detach(struct tctx *c)
{
	struct att *a = pick_att(c, 0);

	if (a)
		detach(a);
}

/* ---- objects ---- */

static unsigned long pick_size(int kind)
{
	unsigned long max = kind == K_ANON ? 8 * MIB :
			    kind == K_DISK ? 1 * MIB : 4 * MIB;

	if (kind == K_HUGEFILE || kind == K_ANONHUGE)
		return HPAGE * (1 + rn(2));
	/* Log-uniform from 64 KiB. */
	return ((64 * KIB) << rn(__builtin_ctzl(max / (64 * KIB)) + 1)) -
	       rn(8) * PAGE;
}

/* A backing file written with a valid object before it is placed. */
static int prefilled_file(int kind, unsigned long size, uint64_t seed,
			  char *path, size_t len)
{
	static int serial;
	uint64_t *buf;
	int fd;

	if (kind == K_MEMFD) {
		fd = memfd_create("stress", MFD_CLOEXEC);
		path[0] = 0;
	} else {
		snprintf(path, len, DISK_DIR "/stress-%d-%d", getpid(),
			 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -1;
	buf = malloc(size);
	if (!buf)
		goto fail;
	fill_words(buf, seed, HDR_WORDS, size / 8);
	put_hdr(buf, seed, size);
	/* Written, not mapped: ext4 allocates the blocks now, no SIGBUS. */
	if (pwrite(fd, buf, size, 0) != (ssize_t)size) {
		free(buf);
		goto fail;
	}
	free(buf);
	return fd;
fail:
	if (path[0])
		unlink(path);
	close(fd);
	return -1;
}

static int huge_file(unsigned long size, char *path, size_t len)
{
	static int serial;
	int fd;

	snprintf(path, len, HUGE_DIR "/stress-%d-%d", getpid(),
		 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, size)) {
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

static int unmap_range(struct att *a, unsigned long off, unsigned long len)
{
	return mshare_unmap(a->fd, off, len);
}

/* Fill an object in place, header last. Runs under the slot's lock. */
static void fill_in_place(struct att *a, int slot, uint64_t seed,
			  unsigned long size)
{
	volatile uint64_t *w = (uint64_t *)(a->addr + slot_off(slot));
	sigjmp_buf jb;

	if (GUARD(jb)) {
		CNT(fill_fault);
		return;
	}
	w[0] = 0;
	fill_words(w, seed, HDR_WORDS, size / 8);
	put_hdr(w, seed, size);
	UNGUARD();
}

static void op_map(struct tctx *c)
{
	struct att *a = pick_att(c, 1);
	int slot = rn(NSLOTS), kind = rn(NR_KINDS), lk, bfd = -1, r;
	unsigned long size = pick_size(kind);
	int ro = (kind == K_MEMFD || kind == K_DISK) && !rn(4);
	uint64_t seed = new_seed(ro);
	int prot = PROT_READ | (ro ? 0 : PROT_WRITE), flags = 0;
	char path[96] = "";

	if (!a)
		return;
	if (mem_available_kb() < (long)LOWMEM_KB) {
		CNT(map_lowmem);
		return;
	}
	if (kind == K_MEMFD || kind == K_DISK)
		bfd = prefilled_file(kind, size, seed, path, sizeof(path));
	else if (kind == K_HUGEFILE)
		bfd = huge_file(size, path, sizeof(path));
	if (kind == K_ANONHUGE) {
		flags = MAP_HUGETLB;
	} else if (kind != K_ANON && bfd < 0) {
		CNT(map_nomem);
		return;
	}
	lk = slot_lock(a, slot, F_WRLCK);
	if (lk < 0)
		goto out;
	/* Sometimes replace whatever is there. */
	if (!rn(3) && unmap_range(a, slot_off(slot), SLOT_SPAN))
		FAIL(unexpected, "UNMAP slot %d: %s", slot, strerror(errno));
	r = mshare_map(a->fd, slot_off(slot), size, prot, flags, bfd, 0);
	if (r) {
		if (errno == EEXIST)
			CNT(map_exist);
		else if (errno == ENOMEM || errno == ENOSPC)
			CNT(map_nomem);
		else
			FAIL(unexpected, "CREATE_MAPPING %s size %lx: %s",
			     kind_name[kind], size, strerror(errno));
	} else {
		CNT(objects[kind]);
		if (bfd < 0 || kind == K_HUGEFILE)
			fill_in_place(a, slot, seed, size);
	}
	close(lk);
out:
	if (path[0])
		unlink(path);
	if (bfd >= 0)
		close(bfd);
}

/* The header of the object at @obj: 0 if valid, 1 if not, 2 on a fault. */
static int read_hdr(char *obj, struct hdr *h)
{
	sigjmp_buf jb;

	if (GUARD(jb)) {
		h->magic = 0;
		return 2;
	}
	get_hdr((uint64_t *)obj, h);
	UNGUARD();
	return !hdr_valid(h);
}

/* Touch the start of a range that must be empty: it has to fault. */
static void check_gone(struct att *a, unsigned long off)
{
	volatile char *p = a->addr + off;
	sigjmp_buf jb;

	if (GUARD(jb)) {
		CNT(unmap_checked);
		return;
	}
	(void)*p;
	UNGUARD();
	FAIL(stale, "read at region offset %lx after MSHAREFS_UNMAP works",
	     off);
}

static void op_unmap(struct tctx *c)
{
	struct att *a = pick_att(c, 1);
	int slot = rn(NSLOTS), locked = rn(5) != 0, lk = -1;
	unsigned long off = slot_off(slot), len = SLOT_SPAN;

	if (!a)
		return;
	if (rn(5) < 2) {	/* a part: head, middle or tail */
		off += rn(2048) * PAGE;
		len = (1 + rn(512)) * PAGE;
	}
	if (locked) {
		lk = slot_lock(a, slot, F_WRLCK);
		if (lk < 0)
			return;
	}
	if (unmap_range(a, off, len)) {
		/* A range cutting a huge page in two is refused. */
		if (errno != EINVAL || len == SLOT_SPAN)
			FAIL(unexpected, "UNMAP %lx+%lx: %s", off, len,
			     strerror(errno));
	} else if (locked && a->rw) {
		check_gone(a, off);
		check_gone(a, off + rn((len < 8 * MIB ? len : 8 * MIB) /
				       PAGE) * PAGE);
	}
	if (lk >= 0)
		close(lk);
}

/* Compare words of an object with its header; 0 ok, 1 fault/replaced. */
static int verify_slot(struct att *a, int slot, int full)
{
	volatile uint64_t *w = (uint64_t *)(a->addr + slot_off(slot));
	volatile uint64_t i, n, pg, checked = 0;
	struct hdr h, h2;
	uint64_t v;
	sigjmp_buf jb;

	if (GUARD(jb)) {
		CNT(faults);
		ADD(words, checked);
		return 1;
	}
	get_hdr(w, &h);
	if (!hdr_valid(&h)) {
		UNGUARD();
		CNT(empty);
		return 1;
	}
	n = h.size / 8;
	for (pg = 0; pg < n; pg += PAGE / 8) {
		uint64_t from = pg ? pg : HDR_WORDS, to = pg + PAGE / 8;

		if (!full && rn(4)) {	/* one random word of this page */
			from = pg + HDR_WORDS + rn(PAGE / 8 - HDR_WORDS);
			to = from + 1;
		}
		for (i = from; i < to; i++) {
			v = w[i];
			checked++;
			if (v == pat(h.seed, i))
				continue;
			get_hdr(w, &h2);
			if (memcmp(&h, &h2, sizeof(h))) {
				UNGUARD();
				CNT(replaced);
				ADD(words, checked);
				return 1;
			}
			UNGUARD();
			FAIL(corrupt, "slot %d word %lu of %lu: %016lx, want %016lx (seed %016lx, again %016lx)",
			     slot, (unsigned long)i, (unsigned long)n,
			     (unsigned long)v,
			     (unsigned long)pat(h.seed, i),
			     (unsigned long)h.seed, (unsigned long)w[i]);
			ADD(words, checked);
			return 1;
		}
	}
	UNGUARD();
	ADD(words, checked);
	return 0;
}

static void op_verify(struct tctx *c)
{
	struct att *a = pick_att(c, 0);

	if (a)
		verify_slot(a, rn(NSLOTS), !rn(8));
}

/* A write that must fault: the value is the expected one, so no harm. */
static void write_must_fault(volatile uint64_t *p, uint64_t v,
			     const char *why)
{
	sigjmp_buf jb;

	if (GUARD(jb)) {
		CNT(ro_denied);
		return;
	}
	*p = v;
	UNGUARD();
	FAIL(ro_violation, "write through %s at %p worked", why, p);
}

/* Rewrite expected values at random places: write faults, dirty pages. */
static void touch_words(struct att *a, int slot)
{
	volatile uint64_t *w = (uint64_t *)(a->addr + slot_off(slot));
	struct hdr h;
	uint64_t i;
	sigjmp_buf jb;
	int k;

	if (GUARD(jb)) {
		CNT(faults);
		return;
	}
	get_hdr(w, &h);
	UNGUARD();
	if (!hdr_valid(&h)) {
		CNT(empty);
		return;
	}
	for (k = 0; k < 16; k++) {
		i = HDR_WORDS + rnd() % (h.size / 8 - HDR_WORDS);
		if (!a->rw) {
			write_must_fault(&w[i], pat(h.seed, i),
					 "a read-only attachment");
			continue;
		}
		if (h.seed & 1) {
			write_must_fault(&w[i], pat(h.seed, i),
					 "a read-only object");
			continue;
		}
		if (GUARD(jb)) {
			CNT(faults);
			return;
		}
		w[i] = pat(h.seed, i);
		UNGUARD();
	}
}

/*
 * Touch under the shared slot lock, which keeps creators and fillers out
 * (so the header stays the object's), then verify.
 */
static void op_touch(struct tctx *c)
{
	struct att *a = pick_att(c, 0);
	int slot = rn(NSLOTS), lk;

	if (!a)
		return;
	lk = slot_lock(a, slot, F_RDLCK);
	if (lk < 0)
		return;
	touch_words(a, slot);
	close(lk);
	verify_slot(a, slot, 0);
}

/* ---- fork and exec ---- */

/* A child keeps only the given fds: inherited OFD locks would block it. */
static void close_others(struct tctx *c)
{
	int keep[MAX_ATT + 1], n = 0, i, j, lo = 3;

	keep[n++] = stats_fd;
	for (i = 0; i < MAX_ATT; i++)
		if (c->att[i].addr)
			keep[n++] = c->att[i].fd;
	/* sort the few kept fds, then close the gaps */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];

				keep[i] = keep[j];
				keep[j] = t;
			}
	for (i = 0; i < n; i++) {
		if (keep[i] > lo)
			syscall(SYS_close_range, lo, keep[i] - 1, 0);
		if (keep[i] + 1 > lo)
			lo = keep[i] + 1;
	}
	syscall(SYS_close_range, lo, ~0U, 0);
}

static int wait_child(pid_t pid, int kill_after_ms)
{
	double t0 = now(), limit = CHILD_WAIT_S;
	int status, killed = 0;
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	if (kill_after_ms >= 0) {
		usleep(kill_after_ms * 1000);
		kill(pid, SIGKILL);
		killed = 1;
		CNT(child_kills);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0) {
			FAIL(unexpected, "waitpid %d: %s", pid,
			     strerror(errno));
			return -1;
		}
		if (now() - t0 > limit) {
			if (killed) {
				FAIL(hangs, "child %d not reaped %d s after SIGKILL",
				     pid, CHILD_WAIT_S);
				return -1;
			}
			say("stress: child %d still running after %d s: SIGKILL",
			    pid, CHILD_WAIT_S);
			CNT(child_timeouts);
			kill(pid, SIGKILL);
			killed = 1;
			t0 = now();
		}
		nanosleep(&ts, NULL);
	}
	if (killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		FAIL(child_fail, "child %d: status %#x", pid, status);
		return -1;
	}
	return 0;
}

static void child_body(struct tctx *c)
{
	int i, n = 2 + rn(6);

	for (i = 0; i < n; i++) {
		switch (rn(4)) {
		case 0:
			op_touch(c);
			break;
		case 1:
			op_attach(c);
			break;
		default:
			op_verify(c);
			break;
		}
	}
	if (!rn(4))
		op_detach(c);
}

static void op_fork(struct tctx *c)
{
	pid_t pid = fork();

	if (pid < 0) {
		if (errno != EAGAIN && errno != ENOMEM)
			FAIL(unexpected, "fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_others(c);
		rng_state ^= mix64(getpid());
		child_body(c);
		_exit(0);
	}
	wait_child(pid, rn(2) ? (int)rn(30) : -1);
}

static char self_exe[PATH_MAX];

static void op_exec(struct tctx *c)
{
	struct att *a = pick_att(c, 0);
	char fds[16], addr[32], sfd[16];
	pid_t pid;

	if (!a)
		return;
	snprintf(fds, sizeof(fds), "%d", a->fd);
	snprintf(addr, sizeof(addr), "%lx", (unsigned long)a->addr);
	snprintf(sfd, sizeof(sfd), "%d", stats_fd);
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_others(c);
		execl(self_exe, "mshare_stress", "--exec-child", fds, addr,
		      sfd, (char *)NULL);
		_exit(126);
	}
	wait_child(pid, -1);
}

/* After exec: no attachment may be left; attach the fd anew, verify. */
static int exec_child(char **argv)
{
	struct tctx c = { 0 };
	char line[512];
	unsigned long old = strtoul(argv[3], NULL, 16);
	int fd = atoi(argv[2]), bad = 0, i;
	FILE *f;
	void *p;

	stats_fd = atoi(argv[4]);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  stats_fd, 0);
	if (st == MAP_FAILED)
		return 2;
	rng_state = mix64(getpid() ^ (uint64_t)time(NULL));
	install_handlers();
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/sys/fs/mshare") ||
		    strtoul(line, NULL, 16) == old) {
			fail_say("stress: FAIL after exec: %s", line);
			bad = 1;
		}
	if (f)
		fclose(f);
	if (bad)
		CNT(unexpected);
	p = mmap(NULL, align, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		FAIL(unexpected, "attach after exec: %s", strerror(errno));
		return 1;
	}
	c.att[0].addr = p;
	c.att[0].fd = fd;
	for (i = 0; i < NSLOTS; i++)
		verify_slot(&c.att[0], i, 0);
	CNT(execs_ok);
	return bad;
}

/* ---- operations msharefs refuses on an attachment ---- */

/*
 * Not MADV_DONTFORK: it is allowed on an attachment, and a fork by another
 * thread before the MADV_DOFORK would leave a child without it. Not
 * MADV_HWPOISON and MADV_SOFT_OFFLINE (documented EFAULT): where they work,
 * they take pages out of service for good and the baseline cannot come
 * back.
 */
static const int advices[] = {
	MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
	MADV_DONTNEED, MADV_FREE, MADV_DOFORK,
	MADV_MERGEABLE, MADV_UNMERGEABLE, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
	MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK, MADV_KEEPONFORK,
	MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
	MADV_COLLAPSE,
};

static const char *advice_name(int advice)
{
	static const char *const names[] = {
		[MADV_NORMAL] = "NORMAL", [MADV_RANDOM] = "RANDOM",
		[MADV_SEQUENTIAL] = "SEQUENTIAL", [MADV_WILLNEED] = "WILLNEED",
		[MADV_DONTNEED] = "DONTNEED", [MADV_FREE] = "FREE",
		[MADV_DOFORK] = "DOFORK", [MADV_DONTFORK] = "DONTFORK",
		[MADV_MERGEABLE] = "MERGEABLE",
		[MADV_UNMERGEABLE] = "UNMERGEABLE",
		[MADV_HUGEPAGE] = "HUGEPAGE", [MADV_NOHUGEPAGE] = "NOHUGEPAGE",
		[MADV_DONTDUMP] = "DONTDUMP", [MADV_DODUMP] = "DODUMP",
		[MADV_WIPEONFORK] = "WIPEONFORK",
		[MADV_KEEPONFORK] = "KEEPONFORK", [MADV_COLD] = "COLD",
		[MADV_PAGEOUT] = "PAGEOUT",
		[MADV_POPULATE_READ] = "POPULATE_READ",
		[MADV_POPULATE_WRITE] = "POPULATE_WRITE",
		[MADV_COLLAPSE] = "COLLAPSE",
	};

	return advice >= 0 && advice < (int)(sizeof(names) / sizeof(*names)) &&
	       names[advice] ? names[advice] : "?";
}

/*
 * mprotect() may become region-wide: then it sets the protection of the
 * objects in the range for everyone. Ask only for what the object at the
 * slot already has (its header says), under the slot's exclusive lock,
 * and over the whole attachment only from slot 0: the region-wide call
 * stops at the first hole, so it never reaches another slot's object.
 */
static int mprotect_same(struct att *a, int r, int slot)
{
	char *obj;
	unsigned long len = HPAGE;
	int lk, ret, prot = PROT_READ;
	struct hdr h;

	if (r == R_MPROTECT)
		slot = 0;
	obj = a->addr + slot_off(slot);
	lk = slot_lock(a, slot, a->rw ? F_WRLCK : F_RDLCK);
	if (lk < 0)
		return 1;
	if (!read_hdr(obj, &h)) {
		len = h.size;
		if (a->rw && !(h.seed & 1))
			prot |= PROT_WRITE;
	}
	if (r == R_MPROTECT)
		len = align;
	ret = r == R_PKEY_MPROTECT ?
		syscall(SYS_pkey_mprotect, obj, len, prot, -1) :
		mprotect(obj, len, prot);
	ret = ret ? -errno : 0;
	close(lk);
	return ret;
}

/* The advice the last R_MADVISE or R_MADVISE_PART of this thread gave. */
static __thread int last_advice;

/*
 * What a reader may not do to everyone else (msharefs.rst, "Who may do
 * what, and who pays"): the errno it must get, 0 if the rule is not one
 * of those. Reading ahead and populating are anyone's, and so is
 * MADV_DOFORK, which is the attachment's own.
 */
static int reader_refusal(int r)
{
	switch (r) {
	case R_MPROTECT:
	case R_MPROTECT_PART:
	case R_PKEY_MPROTECT:
		return EACCES;
	case R_PROCESS_MADVISE:
	case R_MLOCK:
	case R_MLOCK2:
	case R_MBIND:
	case R_MBIND_PART:
	case R_HMM_WRITE:
	case R_UFFD:
		return EPERM;
	case R_MADVISE:
	case R_MADVISE_PART:
		switch (last_advice) {
		case MADV_WILLNEED:
		case MADV_POPULATE_READ:
		case MADV_POPULATE_WRITE:
		case MADV_DOFORK:
		case MADV_DONTFORK:
			return 0;
		}
		return EPERM;
	}
	return 0;
}

/*
 * Is @status what msharefs.rst documents for move_pages() of a region
 * page through a writer's (@rw) or reader's attachment, asked to @move
 * it to @node or where it is?
 */
static int move_status_ok(int rw, int move, int node, int status)
{
	/* A reader may not move a page: one on another node stays. */
	if (move && !rw && status != node && status != -ENOENT &&
	    status != -EFAULT)
		return status == -EACCES;
	if (status >= 0)
		return move ? status == node : status == 0 || status == 1;
	switch (-status) {
	case ENOENT:
	case EFAULT:
		return 1;
	case EBUSY:
	case ENOMEM:
		return move;
	}
	return 0;
}

/*
 * This process's handle on the HMM test driver, which mirrors the process
 * that opened it: so each process opens its own, and its mm then has mmu
 * notifiers, to which the regions relay their changes. -1 on error.
 */
static int dmirror_fd(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static pid_t owner;
	static int fd = -1;
	int ret;

	pthread_mutex_lock(&lock);
	if (owner != getpid()) {
		if (fd >= 0)
			close(fd);	/* the parent's */
		fd = open(DMIRROR_PATH, O_RDWR | O_CLOEXEC);
		owner = getpid();
		if (fd < 0)
			FAIL(unexpected, "open " DMIRROR_PATH ": %s",
			     strerror(errno));
	}
	ret = fd;
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The device reads or writes the page at @obj from or to @buf. */
static int dmirror_page(unsigned long req, void *obj, char *buf)
{
	struct hmm_dmirror_cmd cmd = {
		.addr = (unsigned long)obj,
		.ptr = (unsigned long)buf,
		.npages = 1,
	};
	int fd = dmirror_fd();

	if (fd < 0)
		return 1;
	return ioctl(fd, req, &cmd);
}

/*
 * Returns 0 or -errno of one refused operation, 1 if it does not apply;
 * may fix up @a.
 */
static int refused_op(struct att *a, int r, int slot)
{
	char *base = a->addr, *obj = base + slot_off(slot);
	unsigned long len = align;
	char buf[PAGE];
	void *p;
	int fd, ret = 0;

	switch (r) {
	case R_MUNMAP_PART:
		ret = munmap(obj, HPAGE);
		if (!ret) {	/* given a meaning: drop the rest */
			munmap(base, align);
			close(a->fd);
			a->addr = NULL;
		}
		break;
	case R_MPROTECT:
	case R_MPROTECT_PART:
	case R_PKEY_MPROTECT:
		return mprotect_same(a, r, slot);
	case R_MREMAP_SHRINK:
	case R_MREMAP_GROW:
		p = mremap(base, align, r == R_MREMAP_GROW ? 2 * align :
			   align / 2, 0);
		if (p != MAP_FAILED) {
			munmap(p, r == R_MREMAP_GROW ? 2 * align : align);
			close(a->fd);
			a->addr = NULL;
		}
		ret = p == MAP_FAILED ? -1 : 0;
		break;
	case R_MREMAP_MOVE: {
		char *res, *to;

		/* An aligned free target inside a reservation of ours. */
		res = mmap(NULL, 2 * align, PROT_NONE, MAP_PRIVATE |
			   MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (res == MAP_FAILED)
			return 0;
		to = (char *)(((unsigned long)res + align - 1) & ~(align - 1));
		p = mremap(base, align, align, MREMAP_MAYMOVE | MREMAP_FIXED,
			   to);
		ret = p == MAP_FAILED ? -1 : 0;
		if (ret) {
			int e = errno;

			munmap(res, 2 * align);
			errno = e;
			break;
		}
		a->addr = p;
		if (to > res)
			munmap(res, to - res);
		munmap(to + align, res + align - to);
		break;
	}
	case R_MADVISE:
	case R_MADVISE_PART:
		if (r == R_MADVISE_PART)
			len = HPAGE, base = obj;
		last_advice = advices[rn(sizeof(advices) / sizeof(int))];
		/* Safe on a part only: it must fail. */
		if (r == R_MADVISE_PART && last_advice == MADV_DOFORK && rn(2))
			last_advice = MADV_DONTFORK;
		ret = madvise(base, len, last_advice);
		break;
	case R_MADV_REMOVE_HOLE:	/* destructive: only on a hole */
		if (!a->rw)
			return 1;
		ret = madvise(base + align - GIB, HPAGE, MADV_REMOVE);
		break;
	case R_PROCESS_MADVISE: {
		struct iovec iov = { obj, HPAGE };
		int pfd = syscall(SYS_pidfd_open, getpid(), 0);

		if (pfd < 0)
			return 0;
		ret = syscall(SYS_process_madvise, pfd, &iov, 1,
			      rn(2) ? MADV_COLD : MADV_PAGEOUT, 0);
		if (ret > 0)
			ret = 0;
		close(pfd);
		break;
	}
	case R_MLOCK:
		ret = mlock(obj, HPAGE);
		if (!ret)
			munlock(obj, HPAGE);
		break;
	case R_MLOCK2:
		ret = syscall(SYS_mlock2, base, align, MLOCK_ONFAULT);
		if (!ret)
			munlock(base, align);
		break;
	case R_MLOCKALL:
		ret = mlockall(MCL_CURRENT | MCL_ONFAULT);
		munlockall();
		break;
	case R_MSYNC_ASYNC:
		ret = msync(base, align, MS_ASYNC);
		break;
	case R_MSYNC_SYNC:
		ret = msync(obj, HPAGE, MS_SYNC);
		break;
	case R_MINCORE: {
		unsigned char vec[HPAGE / PAGE];
		unsigned int i;

		ret = mincore(obj, HPAGE, vec);
		for (i = 0; !ret && i < sizeof(vec); i++)
			if (vec[i] & 1) {
				CNT(mincore_resident);
				break;
			}
		break;
	}
	case R_MBIND:
	case R_MBIND_PART: {
		unsigned long mask;

		mask = 1UL << rn(2);
		if (r == R_MBIND_PART)
			len = HPAGE, base = obj;
		ret = syscall(SYS_mbind, base, len, MPOL_BIND, &mask, 64,
			      rn(2) ? MPOL_MF_MOVE : 0);
		break;
	}
	case R_MOVE_PAGES: {
		void *pages[1] = { obj };
		int status[1] = { 0 }, node[1] = { (int)rn(2) };

		int move = rn(2);

		ret = syscall(SYS_move_pages, 0, 1, pages,
			      move ? node : NULL, status, 0);
		/* The number of pages not migrated: status not set. */
		if (ret > 0 && move) {
			errno = EBUSY;
			ret = -1;
		}
		/*
		 * The region's page, as for any mapping: asked, its node or
		 * ENOENT (none) or EFAULT (a hole); moved, the node asked
		 * for or why not, EACCES through a reader's attachment.
		 */
		if (!ret && !move_status_ok(a->rw, move, node[0], status[0]))
			FAIL(unexpected, "move_pages (%s) on %s attachment: "
			     "status %d", move ? "move" : "query",
			     a->rw ? "a writer's" : "a reader's", status[0]);
		break;
	}
	case R_PVM_READV: {
		struct iovec l = { buf, PAGE }, rem = { obj, PAGE };

		ret = process_vm_readv(getpid(), &l, 1, &rem, 1, 0) < 0 ?
		      -1 : 0;
		break;
	}
	case R_PROC_MEM:
		fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ret = pread(fd, buf, PAGE, (off_t)(unsigned long)obj) < 0 ?
		      -1 : 0;
		close(fd);
		break;
	case R_ODIRECT:
		snprintf(buf, sizeof(buf), DISK_DIR "/stress-dio-%d-%d",
			 getpid(), gettid());
		fd = open(buf, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT |
			  O_CLOEXEC, 0600);
		unlink(buf);
		if (fd < 0)
			return 0;
		ret = write(fd, obj, PAGE) < 0 ? -1 : 0;
		close(fd);
		break;
	case R_VMSPLICE: {
		struct iovec iov = { obj, PAGE };
		int pfd[2];

		if (pipe2(pfd, O_NONBLOCK | O_CLOEXEC))
			return 0;
		ret = vmsplice(pfd[1], &iov, 1, SPLICE_F_NONBLOCK) < 0 ?
		      -1 : 0;
		close(pfd[0]);
		close(pfd[1]);
		break;
	}
	case R_FUTEX: {
		struct timespec ts = { 0, 1000 * 1000 };
		int wake = rn(2), op = (wake ? FUTEX_WAKE : FUTEX_WAIT) |
				       (rn(2) ? FUTEX_PRIVATE_FLAG : 0);

		/*
		 * 0x5a5a5a5a is rarely the value there; a wait that does
		 * block times out after 1 ms.
		 */
		ret = syscall(SYS_futex, obj + 64, op, wake ? 1 : 0x5a5a5a5a,
			      &ts, NULL, 0) < 0 ? -1 : 0;
		if (ret && (errno == EAGAIN || errno == ETIMEDOUT))
			ret = 0;	/* the futex worked */
		break;
	}
	case R_UFFD: {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = {
			.range = { (unsigned long)obj, HPAGE },
			.mode = UFFDIO_REGISTER_MODE_MISSING };

		fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || ioctl(fd, UFFDIO_API, &api)) {
			if (fd >= 0)
				close(fd);
			return 0;
		}
		ret = ioctl(fd, UFFDIO_REGISTER, &reg);
		if (!ret) {
			/*
			 * Fill the first page if it is missing, with the zeros
			 * a fault would read there: EEXIST if it is there,
			 * EINVAL for huge pages, ENOENT if the object changed.
			 */
			struct uffdio_zeropage z = {
				.range = { (unsigned long)obj, PAGE } };

			if (ioctl(fd, UFFDIO_ZEROPAGE, &z) && errno != EEXIST &&
			    errno != EINVAL && errno != ENOENT &&
			    errno != EAGAIN)
				FAIL(unexpected, "UFFDIO_ZEROPAGE: %s",
				     strerror(errno));
			ioctl(fd, UFFDIO_UNREGISTER, &reg.range);
		}
		close(fd);
		break;
	}
	case R_PROC_READ: {
		static const char *const files[] = { "/proc/self/smaps",
			"/proc/self/smaps_rollup", "/proc/self/numa_maps",
			"/proc/self/maps" };
		uint64_t ent;

		fd = open(files[rn(4)], O_RDONLY | O_CLOEXEC);
		while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
			;
		if (fd >= 0)
			close(fd);
		fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ret = pread(fd, &ent, 8, (unsigned long)obj / PAGE * 8) == 8 ?
		      0 : -1;
		/* Documented: no pages; counted while that may change. */
		if (!ret && (ent & (1ULL << 63)))
			CNT(pagemap_present);
		close(fd);
		break;
	}
	case R_CLEAR_REFS:
		fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ret = write(fd, rn(2) ? "1" : "4", 1) == 1 ? 0 : -1;
		close(fd);
		break;
	case R_MIGRATE_PAGES: {
		unsigned long from = 1UL << rn(2), to = 3 & ~from;

		ret = syscall(SYS_migrate_pages, 0, 64, &from, &to) < 0 ?
		      -1 : 0;
		break;
	}
	case R_HMM_READ:
		ret = dmirror_page(HMM_DMIRROR_READ, obj, buf);
		if (ret == 1)
			return 1;
		break;
	case R_HMM_WRITE:
		/* A writer's device write could race a check of the data. */
		if (a->rw)
			return 1;
		memset(buf, 0xee, PAGE);
		ret = dmirror_page(HMM_DMIRROR_WRITE, obj, buf);
		if (ret == 1)
			return 1;
		break;
	}
	return ret ? -errno : 0;
}

/*
 * The results msharefs.rst documents for refused operation @r through
 * @a, in @res (0: success), the first the one counted as "documented";
 * their number. madvise's depend on the advice and the caller; the rest
 * are refused_doc's, or a reader's refusal.
 */
static int documented(struct att *a, int r, int *res)
{
	int n = 0;

	if (!a->rw && reader_refusal(r)) {
		res[n++] = reader_refusal(r);
		return n;
	}
	if (r != R_MADVISE && r != R_MADVISE_PART) {
		res[n++] = refused_doc[r].err;
		if (refused_doc[r].alt)
			res[n++] = refused_doc[r].alt;
		if (refused_doc[r].alt2)
			res[n++] = refused_doc[r].alt2;
		return n;
	}
	switch (last_advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
	case MADV_POPULATE_READ:
		/* Applied to the objects; holes are ENOMEM. */
		res[n++] = 0;
		res[n++] = ENOMEM;
		break;
	case MADV_DONTNEED:
	case MADV_COLD:
	case MADV_PAGEOUT:
		/*
		 * Applied to the objects as in any process: madvise(2) refuses
		 * these on locked and hugetlb memory (EINVAL).
		 */
		res[n++] = 0;
		res[n++] = ENOMEM;
		res[n++] = EINVAL;
		break;
	case MADV_POPULATE_WRITE:
		/* EINVAL as on any read-only mapping: always a reader's. */
		res[n++] = a->rw ? 0 : EINVAL;
		if (a->rw) {
			res[n++] = ENOMEM;
			res[n++] = EINVAL;	/* a read-only object */
		}
		break;
	case MADV_FREE:
		/* Objects are shared memory; a range of holes is ENOMEM. */
		res[n++] = EINVAL;
		res[n++] = ENOMEM;
		break;
	case MADV_DOFORK:
		/*
		 * The attachment's own. It is never MADV_DONTFORK here, so
		 * there is nothing to change, which succeeds on a part too,
		 * as on any VMA.
		 */
		res[n++] = 0;
		break;
	case MADV_DONTFORK:
		/* A part: EINVAL (it would split the attachment). */
		res[n++] = EINVAL;
		break;
	default:
		/* KSM, WIPEONFORK, COLLAPSE, DONTDUMP, ...: no meaning. */
		res[n++] = EINVAL;
		break;
	}
	return n;
}

static void op_refused(struct tctx *c)
{
	struct att *a = pick_att(c, 0);
	int r = rn(NR_REFUSED), slot = rn(NSLOTS), ret, res[4], n, i;
	char want[64];

	if (!a)
		return;
	ret = refused_op(a, r, slot);
	if (ret == 1)
		return;
	CNT(ref_try[r]);
	n = documented(a, r, res);
	for (i = 0; i < n && ret != -res[i]; i++)
		;
	if (i == 0)
		CNT(ref_doc[r]);
	else if (i < n && !ret)
		CNT(ref_ok[r]);
	else if (i < n)
		CNT(ref_alt[r]);
	else {
		want[0] = 0;
		for (i = 0; i < n; i++)
			snprintf(want + strlen(want), sizeof(want) -
				 strlen(want), "%s%s", i ? " or " : "",
				 res[i] ? strerrorname_np(res[i]) : "success");
		FAIL(unexpected, "%s on %s attachment%s%s: %s, documented %s",
		     refused_doc[r].name, a->rw ? "a writer's" : "a reader's",
		     r == R_MADVISE || r == R_MADVISE_PART ? ", advice " : "",
		     r == R_MADVISE || r == R_MADVISE_PART ?
		     advice_name(last_advice) : "",
		     ret ? strerrorname_np(-ret) : "success", want);
	}
	/* Whatever happened, the data must still be right. */
	if (a->addr)
		verify_slot(a, slot, 0);
}

/* ---- workers ---- */

typedef void (*op_fn)(struct tctx *);
static const op_fn ops[NR_OPS] = {
	op_new, op_size, op_unlink, op_rename, op_read, op_fdinfo,
	op_attach, op_detach, op_map, op_unmap, op_verify, op_touch,
	op_fork, op_exec, op_refused,
};

static int pick_op(void)
{
	static int total;
	int i, x;

	if (!total)
		for (i = 0; i < NR_OPS; i++)
			total += op_weight[i];
	x = rn(total);
	for (i = 0; x >= op_weight[i]; i++)
		x -= op_weight[i];
	return i;
}

static void *thread_main(void *arg)
{
	struct tctx *c = arg;
	int i, op;

	rng_state = mix64(((uint64_t)getpid() << 20) ^ (c->t << 8) ^
			  (uint64_t)(now() * 1e9));
	while (now() < deadline && !__atomic_load_n(&st->stop,
						    __ATOMIC_RELAXED)) {
		op = pick_op();
		ops[op](c);
		CNT(ops[op]);
		ADD(heartbeat[c->w][c->t], 1);
	}
	for (i = 0; i < MAX_ATT; i++)
		if (c->att[i].addr)
			detach(&c->att[i]);
	return NULL;
}

static void worker(int w, int threads)
{
	struct tctx ctx[MAX_THREADS] = { 0 };
	pthread_t tid[MAX_THREADS];
	int t;

	install_handlers();
	for (t = 0; t < threads; t++) {
		ctx[t].w = w;
		ctx[t].t = t;
		ctx[t].window = WINDOWS + t * MAX_ATT * align;
		if (pthread_create(&tid[t], NULL, thread_main, &ctx[t])) {
			FAIL(unexpected, "pthread_create");
			_exit(1);
		}
	}
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	_exit(0);
}

static pid_t spawn(int w, int threads)
{
	pid_t pid = fork();

	if (!pid)
		worker(w, threads);
	if (pid < 0) {
		perror("fork worker");
		exit(2);
	}
	return pid;
}

/* Tell what a worker that does not exit is doing, then kill it. */
static void report_hang(pid_t pid)
{
	char path[PATH_MAX], buf[4096];
	struct dirent *de;
	DIR *d;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid,
			 de->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			say("stress: hung task %s: %s", de->d_name, buf);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid,
			 de->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			say("%s", buf);
		}
	}
	if (d)
		closedir(d);
	/* Blocked tasks to the kernel log as well. */
	fd = open("/proc/sysrq-trigger", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "w", 1) < 0)
			say("stress: sysrq-trigger: %s", strerror(errno));
		close(fd);
	}
}

/* Wait for the workers until @limit; return how many did not exit. */
static int reap(pid_t *pids, int n, double limit)
{
	int i, left, status;

	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (!pids[i])
				continue;
			if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
				if (!WIFEXITED(status) ||
				    WEXITSTATUS(status)) {
					FAIL(child_fail, "worker %d: status %#x",
					     pids[i], status);
				}
				pids[i] = 0;
				continue;
			}
			left++;
		}
		if (!left || now() > limit)
			return left;
		usleep(100 * 1000);
	}
}

/* A SIGKILLed worker must be gone within a minute; 0 if it is. */
static int reap_killed(pid_t pid)
{
	double limit = now() + 60;
	int status;

	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (now() > limit) {
			FAIL(hangs, "worker %d not reaped 60 s after SIGKILL",
			     pid);
			report_hang(pid);
			return -1;
		}
		usleep(10 * 1000);
	}
	return 0;
}

static void run_phase(double seconds, int workers, int threads,
		      double kill_every, double margin)
{
	pid_t pids[MAX_WORKERS] = { 0 };
	double start = now(), next_kill = start + kill_every;
	int i, left;

	deadline = start + seconds;
	__atomic_store_n(&st->stop, 0, __ATOMIC_RELAXED);
	for (i = 0; i < workers; i++)
		pids[i] = spawn(i, threads);
	while (now() < deadline) {
		usleep(100 * 1000);
		if (kill_every <= 0 || now() < next_kill)
			continue;
		/* SIGKILL a worker in the middle of whatever it does. */
		next_kill += kill_every;
		i = rn(workers);
		if (!pids[i])
			continue;
		kill(pids[i], SIGKILL);
		CNT(worker_kills);
		pids[i] = reap_killed(pids[i]) ? 0 : spawn(i, threads);
	}
	left = reap(pids, workers, deadline + margin);
	if (!left)
		return;
	for (i = 0; i < workers; i++) {
		if (!pids[i])
			continue;
		FAIL(hangs, "worker %d did not exit %.0f s after the end",
		     pids[i], margin);
		report_hang(pids[i]);
		kill(pids[i], SIGKILL);
	}
	left = reap(pids, workers, now() + 60);
	if (left)
		FAIL(hangs, "%d workers survive SIGKILL for 60 s", left);
}

/* ---- setup, clean-up, baseline ---- */

static void remove_matching(const char *dir, const char *prefix)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path))
			say("stress: unlink %s: %s", path, strerror(errno));
	}
	if (d)
		closedir(d);
}

static void cleanup(void)
{
	remove_matching(DIR_PATH, "r");
	remove_matching(DISK_DIR, "stress-");
	remove_matching(HUGE_DIR, "stress-");
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, s, strlen(s)) < 0)
		say("stress: write %s: %s", path, strerror(errno));
	close(fd);
}

/*
 * Give back what can be given back: page cache, reclaimable slab, empty
 * slabs and, with KASAN, each cache's quarantine (kmem_cache_shrink()).
 */
static void settle(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
	d = opendir("/sys/kernel/slab");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 de->d_name);
		write_file(path, "1");
	}
	if (d)
		closedir(d);
	write_file("/proc/sys/vm/compact_memory", "1");
	sleep(2);
}

#define MAX_CACHES 512

/* One line of /proc/slabinfo: a cache, its objects in use, its slabs. */
struct cache_use {
	char name[64];
	long active, kb;
};

struct snap {
	long memfree, sunreclaim, pagetables, huge_total, huge_free, huge_rsvd;
	long kmemleak_kb;	/* kmemleak's own metadata caches */
	int nr_caches;
	struct cache_use caches[MAX_CACHES];
};

static void snapshot_slabs(struct snap *s)
{
	long slabs, pages, page_kb = sysconf(_SC_PAGESIZE) / 1024;
	char line[512];
	FILE *f = fopen("/proc/slabinfo", "r");
	struct cache_use *c;

	s->nr_caches = 0;
	s->kmemleak_kb = 0;
	while (f && fgets(line, sizeof(line), f) && s->nr_caches < MAX_CACHES) {
		c = &s->caches[s->nr_caches];
		/* name active_objs num_objs size per_slab pages_per_slab
		 * : tunables l b s : slabdata active_slabs num_slabs avail */
		if (sscanf(line, "%63s %ld %*d %*d %*d %ld : tunables %*d %*d %*d : slabdata %*d %ld",
			   c->name, &c->active, &pages, &slabs) != 4)
			continue;
		c->kb = slabs * pages * page_kb;
		if (!strncmp(c->name, "kmemleak_", 9))
			s->kmemleak_kb += c->kb;
		s->nr_caches++;
	}
	if (f)
		fclose(f);
}

static const struct cache_use *find_cache(const struct snap *s,
					  const char *name)
{
	static const struct cache_use none;
	int i;

	for (i = 0; i < s->nr_caches; i++)
		if (!strcmp(s->caches[i].name, name))
			return &s->caches[i];
	return &none;
}

/*
 * Name the slab caches that grew most since the baseline, so a baseline
 * that did not come back says where the memory went, and whether the
 * objects are still in use or only their slabs are left (fragmentation).
 */
static void show_slab_growth(const struct snap *b, const struct snap *a)
{
	int shown[MAX_CACHES] = { 0 };
	const struct cache_use *was;
	int n, i, best;
	long d, best_d;

	printf("stress: slab caches that grew most (kB before, after; objects in use before, after)\n");
	for (n = 0; n < 12; n++) {
		best = -1;
		best_d = 0;
		for (i = 0; i < a->nr_caches; i++) {
			d = a->caches[i].kb - find_cache(b, a->caches[i].name)->kb;
			if (!shown[i] && d > best_d) {
				best = i;
				best_d = d;
			}
		}
		if (best < 0)
			break;
		shown[best] = 1;
		was = find_cache(b, a->caches[best].name);
		printf("stress:   %-24s %6ld %6ld kB  %7ld %7ld objects\n",
		       a->caches[best].name, was->kb, a->caches[best].kb,
		       was->active, a->caches[best].active);
	}
}

static void snapshot(struct snap *s)
{
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	memset(s, 0, sizeof(*s));
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "MemFree: %ld", &s->memfree);
		sscanf(line, "SUnreclaim: %ld", &s->sunreclaim);
		sscanf(line, "PageTables: %ld", &s->pagetables);
		sscanf(line, "HugePages_Total: %ld", &s->huge_total);
		sscanf(line, "HugePages_Free: %ld", &s->huge_free);
		sscanf(line, "HugePages_Rsvd: %ld", &s->huge_rsvd);
	}
	if (f)
		fclose(f);
	snapshot_slabs(s);
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? atol(v) : def;
}

/*
 * Tolerances (kB), overridable by the environment: page tables must come
 * back to within 64 KiB, unreclaimable slab within 4 MiB, free memory
 * within 16 MiB, huge pages exactly. Freeing may lag (RCU, workqueues):
 * retry for a minute. Free memory does not come back exactly: per-CPU
 * page lists, KASAN's stack depot, and the vmalloc space of exited
 * tasks' stacks, which vfree() gives back lazily (up to 96 MiB of it
 * with 4 CPUs, lazy_max_pages()), with its KASAN shadow pages (1/8 of
 * it) and a vmap_area object each until the lazy purge runs.
 *
 * kmemleak's own metadata (kmemleak_object, one per object it tracks,
 * freed after an RCU grace period) is left out of slab and free memory:
 * after a 30-minute run its cache held 10 MB more slabs, while all the
 * other caches together had grown by less than 1 MB. What it tracks is counted in the caches it lives in,
 * and whatever kmemleak finds unreferenced fails the run on its own.
 */
static int check_baseline(const struct snap *b, char *why, size_t len)
{
	long tol_pt = env_long("STRESS_TOL_PAGETABLES_KB", 64);
	long tol_slab = env_long("STRESS_TOL_SUNRECLAIM_KB", 4096);
	long tol_free = env_long("STRESS_TOL_MEMFREE_KB", 16384);
	static struct snap a;
	long leak_meta = 0;
	int tries, ok = 0;

	for (tries = 0; tries < 20 && !ok; tries++) {
		settle();
		snapshot(&a);
		leak_meta = a.kmemleak_kb - b->kmemleak_kb;
		ok = a.pagetables - b->pagetables <= tol_pt &&
		     a.sunreclaim - leak_meta - b->sunreclaim <= tol_slab &&
		     b->memfree - leak_meta - a.memfree <= tol_free &&
		     a.huge_total == b->huge_total &&
		     a.huge_free == b->huge_free &&
		     a.huge_rsvd == b->huge_rsvd;
	}
	printf("stress: baseline (kB)  before  after  delta  tolerance\n");
	printf("stress:   kmemleak's own slabs %ld %ld %+ld  (left out below)\n",
	       b->kmemleak_kb, a.kmemleak_kb, leak_meta);
	printf("stress:   MemFree      %ld %ld %+ld  -%ld\n", b->memfree,
	       a.memfree + leak_meta, a.memfree + leak_meta - b->memfree,
	       tol_free);
	printf("stress:   SUnreclaim   %ld %ld %+ld  +%ld\n", b->sunreclaim,
	       a.sunreclaim - leak_meta, a.sunreclaim - leak_meta - b->sunreclaim,
	       tol_slab);
	printf("stress:   PageTables   %ld %ld %+ld  +%ld\n", b->pagetables,
	       a.pagetables, a.pagetables - b->pagetables, tol_pt);
	printf("stress:   HugePages Total %ld %ld, Free %ld %ld, Rsvd %ld %ld (exact)\n",
	       b->huge_total, a.huge_total, b->huge_free, a.huge_free,
	       b->huge_rsvd, a.huge_rsvd);
	printf("stress: baseline %s after %d settle rounds\n",
	       ok ? "restored" : "NOT restored", tries);
	snprintf(why, len, "baseline not restored: MemFree %+ld kB, SUnreclaim %+ld kB, PageTables %+ld kB, HugePages free %+ld rsvd %+ld",
		 a.memfree + leak_meta - b->memfree,
		 a.sunreclaim - leak_meta - b->sunreclaim,
		 a.pagetables - b->pagetables, a.huge_free - b->huge_free,
		 a.huge_rsvd - b->huge_rsvd);
	show_slab_growth(b, &a);
	if (!ok && system("cat /proc/meminfo; ls -la " HUGE_DIR " " DISK_DIR
			  " /sys/fs/mshare; ps -o pid,stat,comm"))
		say("stress: could not show the state");
	return ok;
}

static unsigned long read_align(void)
{
	unsigned long v = 0;
	FILE *f = fopen(INFO_PATH, "r");

	if (!f || fscanf(f, "%lu", &v) != 1) {
		perror(INFO_PATH);
		exit(2);
	}
	fclose(f);
	return v;
}

static long nr_fails(void)
{
	return st->corrupt + st->stale + st->ro_violation + st->unexpected +
	       st->child_fail + st->hangs;
}

static long summary(double secs, int workers, int threads)
{
	long total = 0, fails;
	int i;

	for (i = 0; i < NR_OPS; i++)
		total += st->ops[i];
	printf("stress: %.0f s, %d workers x %d threads, %ld ops (%.0f/s)\n",
	       secs, workers, threads, total, total / secs);
	printf("stress: ops:");
	for (i = 0; i < NR_OPS; i++)
		printf(" %s=%ld", op_name[i], st->ops[i]);
	printf("\nstress: objects placed:");
	for (i = 0; i < NR_KINDS; i++)
		printf(" %s=%ld", kind_name[i], st->objects[i]);
	printf(" (exists=%ld nomem=%ld lowmem-skip=%ld fill-fault=%ld)\n",
	       st->map_exist, st->map_nomem, st->map_lowmem, st->fill_fault);
	printf("stress: attachment ops (tries/documented/succeeded/other tolerated errno):");
	for (i = 0; i < NR_REFUSED; i++)
		printf(" %s=%ld/%ld/%ld/%ld", refused_doc[i].name,
		       st->ref_try[i], st->ref_doc[i], st->ref_ok[i],
		       st->ref_alt[i]);
	printf("\nstress: data: words-verified=%ld faults=%ld (SIGBUS %ld) replaced=%ld empty=%ld ro-denied=%ld unmap-checked=%ld\n",
	       st->words, st->faults, st->sigbus, st->replaced, st->empty,
	       st->ro_denied, st->unmap_checked);
	/* msharefs.rst: mincore() and pagemap show no page (yet). */
	printf("stress: pages shown: mincore-resident=%ld pagemap-present=%ld\n",
	       st->mincore_resident, st->pagemap_present);
	printf("stress: kills: workers=%ld children=%ld child-timeouts=%ld execs-ok=%ld\n",
	       st->worker_kills, st->child_kills, st->child_timeouts,
	       st->execs_ok);
	fails = nr_fails();
	printf("stress: corruption=%ld stale=%ld ro-violation=%ld unexpected=%ld child-fail=%ld hangs=%ld\n",
	       st->corrupt, st->stale, st->ro_violation, st->unexpected,
	       st->child_fail, st->hangs);
	return fails;
}

int main(int argc, char **argv)
{
	double secs = env_long("STRESS_SECONDS", 60), kill_every = 5;
	double margin = -1, t0;
	int workers = 8, threads = 2, baseline = 0, opt, ok;
	static struct snap base;
	long fails, warm_fails = 0;
	char first[sizeof(st->first_fail)], why[256] = "";

	align = read_align();
	if (argc == 5 && !strcmp(argv[1], "--exec-child"))
		return exec_child(argv);
	while ((opt = getopt(argc, argv, "s:w:t:k:m:b")) != -1) {
		switch (opt) {
		case 's':
			secs = atof(optarg);
			break;
		case 'w':
			workers = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'k':
			kill_every = atof(optarg);
			break;
		case 'm':
			margin = atof(optarg);
			break;
		case 'b':
			baseline = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SECONDS] [-w WORKERS] [-t THREADS] [-k KILL_S] [-m MARGIN_S] [-b]\n",
				argv[0]);
			return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS || threads < 1 ||
	    threads > MAX_THREADS || secs <= 0)
		return 2;
	if (margin < 0)
		margin = 120 + secs / 10;
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		return 2;
	stats_fd = memfd_create("stress-stats", 0);
	if (stats_fd < 0 || ftruncate(stats_fd, sizeof(*st)))
		return 2;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  stats_fd, 0);
	if (st == MAP_FAILED)
		return 2;
	rng_state = mix64(getpid() ^ (uint64_t)time(NULL));
	setvbuf(stdout, NULL, _IOLBF, 0);
	install_handlers();
	if (mkdir(DIR_PATH, 0755) && errno != EEXIST) {
		perror(DIR_PATH);
		return 2;
	}
	cleanup();
	if (baseline) {
		/* One-time allocations (caches, stack depot) come first. */
		run_phase(secs < 50 ? secs / 10 : 5, workers, threads, 0, 60);
		cleanup();
		settle();
		settle();
		snapshot(&base);
		warm_fails = nr_fails();
		if (warm_fails)
			printf("stress: %ld failures in the warm-up\n",
			       warm_fails);
		memcpy(first, st->first_fail, sizeof(first));
		memset(st, 0, sizeof(*st));
		st->have_first = !!warm_fails;
		memcpy(st->first_fail, first, sizeof(first));
	}
	printf("stress: running %.0f s: %d workers x %d threads, kill every %.0f s\n",
	       secs, workers, threads, kill_every);
	t0 = now();
	run_phase(secs, workers, threads, kill_every, margin);
	t0 = now() - t0;
	cleanup();
	rmdir(DIR_PATH);
	fails = summary(t0, workers, threads) + warm_fails;
	ok = baseline ? check_baseline(&base, why, sizeof(why)) : 1;
	if (!fails && ok) {
		printf("stress: PASS\n");
		return 0;
	}
	/* The reasons come last: CI shows only the tail of the log. */
	if (fails)
		printf("stress: %ld failures; the first: %s\n", fails,
		       st->first_fail[0] ? st->first_fail : "(not kept)");
	if (!ok)
		printf("stress: %s\n", why);
	printf("stress: FAIL\n");
	return 1;
}
