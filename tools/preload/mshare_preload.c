// SPDX-License-Identifier: GPL-2.0
/*
 * mshare_preload: move a program's large shared memory into msharefs
 * regions, so that the processes sharing it share its page tables too,
 * without changing the program.
 *
 * Dynamic programs:  LD_PRELOAD=libmshare-preload.so PROGRAM
 * Static programs:   link with libmshare-preload.a and
 *     -Wl,--wrap=mmap,--wrap=mmap64,--wrap=munmap,--wrap=shmget \
 *     -Wl,--wrap=shmat,--wrap=shmdt,--wrap=shmctl
 * (this file built with -DMSHARE_PRELOAD_STATIC: it then defines
 * __wrap_mmap etc. and calls the C library through __real_mmap etc.)
 * The .so calls the next definition of each function it wraps
 * (dlsym(RTLD_NEXT)), so that interposers loaded after it keep seeing
 * every call, the shim's own included. Regions are made with libmshare.
 *
 * What it intercepts:
 * - mmap(MAP_SHARED | MAP_ANONYMOUS) of at least MSHARE_PRELOAD_THRESHOLD
 *   bytes (default 64M): one region per mapping, sized to whole alignment
 *   units (512 GiB on x86_64), holding one anonymous object of the requested length
 *   at offset 0, attached where the kernel likes (an aligned address) and
 *   unlinked at once: the memory lives as long as some process is attached
 *   (fork children inherit the attachment and share the memory; exec and
 *   exit detach). Bytes past the (page-rounded) length fault with SIGSEGV,
 *   as past the end of any mapping. munmap of the mapping (its address,
 *   its length or anything up to the region size) detaches the whole
 *   region; a munmap that covers only part of it fails with EINVAL, as the
 *   kernel refuses partial munmap and mremap of attachments (mprotect and
 *   madvise act on the region for every sharer, and need a writer). A
 *   munmap wider than a region detaches it and unmaps the rest of the
 *   range in one call, so that no address is free in between for another
 *   thread to map and a second call to unmap.
 * - System V shared memory of at least the threshold: shmget creates the
 *   segment as usual (it keeps the id, key, permissions and size) and a
 *   region "preload-sysv-<shmid>" (mode from shmflg) holding its memory;
 *   shmat attaches the region when it exists (else the segment), shmdt
 *   detaches it, shmctl(IPC_RMID) removes both. The name is derived from
 *   the shmid rather than the key so that IPC_PRIVATE segments work; every
 *   process that shares such a segment must run with the shim.
 *
 * Anything it cannot honour (MAP_FIXED, PROT_EXEC, PROT_NONE, MAP_LOCKED,
 * MAP_32BIT, an unaligned shmat address, no msharefs mount, a failure
 * while setting up a region, no free aligned address, more mappings in
 * regions than its table holds) goes to the C library's call, and the shim
 * says so once per reason on stderr. A shmat of a segment whose memory is
 * in a region cannot fall back (the segment's own memory is not what the
 * other processes see): it fails (ENOMEM when the table is full).
 *
 * Every mapping in a region takes a whole alignment unit of address space:
 * about 250 fit in x86_64's 128 TiB, about 500 in arm64's 256 TiB, fewer
 * than the table's 512 entries, so by default the address space runs out
 * first.
 *
 * Environment: MSHARE_PRELOAD_THRESHOLD (bytes, K/M/G/T suffixes),
 * MSHARE_PRELOAD_PREFIX (region names PREFIX-<pid>-<n>, default
 * "preload"), MSHARE_MOUNT (default /sys/fs/mshare),
 * MSHARE_PRELOAD_VERBOSE=1 (report every region made),
 * MSHARE_PRELOAD_MAX_MAPPINGS (at most this many mappings in regions at
 * once, 1 to 512, the default).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mshare.h"

#ifndef MSHARE_PRELOAD_STATIC
#include <dlfcn.h>
#endif

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT		26
#endif
#define MAP_HUGE_BITS		(0x3fU << MAP_HUGE_SHIFT)

#define DEFAULT_THRESHOLD	(64UL << 20)
#define MAX_MAPPINGS		512

/* ---- the C library's functions ---------------------------------------- */

#ifdef MSHARE_PRELOAD_STATIC
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __real_munmap(void *addr, size_t len);
int __real_shmget(key_t key, size_t size, int flg);
void *__real_shmat(int id, const void *addr, int flg);
int __real_shmdt(const void *addr);
int __real_shmctl(int id, int cmd, struct shmid_ds *buf);
#define ENTRY(f)	__wrap_##f
#define REAL(f)		__real_##f
#else
#define ENTRY(f)	f
#define REAL(f)		real_##f

static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static int (*next_munmap)(void *, size_t);
static int (*next_shmget)(key_t, size_t, int);
static void *(*next_shmat)(int, const void *, int);
static int (*next_shmdt)(const void *);
static int (*next_shmctl)(int, int, struct shmid_ds *);

/*
 * dlsym() may allocate, and an allocator may map memory: while this
 * thread resolves, mmap and munmap go straight to the kernel. Afterwards
 * every call goes to the next definition (the C library's, or another
 * interposer's loaded after this one).
 */
static __thread bool resolving __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
	if (resolving)
		return;
	resolving = true;
	__atomic_store_n(&next_mmap, dlsym(RTLD_NEXT, "mmap"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&next_munmap, dlsym(RTLD_NEXT, "munmap"),
			 __ATOMIC_RELEASE);
	next_shmget = dlsym(RTLD_NEXT, "shmget");
	next_shmat = dlsym(RTLD_NEXT, "shmat");
	next_shmdt = dlsym(RTLD_NEXT, "shmdt");
	next_shmctl = dlsym(RTLD_NEXT, "shmctl");
	resolving = false;
}

static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	void *(*fn)(void *, size_t, int, int, int, off_t);

	fn = __atomic_load_n(&next_mmap, __ATOMIC_ACQUIRE);
	if (!fn && !resolving) {
		resolve();
		fn = __atomic_load_n(&next_mmap, __ATOMIC_ACQUIRE);
	}
	if (!fn)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	return fn(addr, len, prot, flags, fd, off);
}

static int real_munmap(void *addr, size_t len)
{
	int (*fn)(void *, size_t);

	fn = __atomic_load_n(&next_munmap, __ATOMIC_ACQUIRE);
	if (!fn && !resolving) {
		resolve();
		fn = __atomic_load_n(&next_munmap, __ATOMIC_ACQUIRE);
	}
	if (!fn)
		return syscall(SYS_munmap, addr, len);
	return fn(addr, len);
}

static int real_shmget(key_t key, size_t size, int flg)
{
	if (!next_shmget)
		resolve();
	return next_shmget(key, size, flg);
}

static void *real_shmat(int id, const void *addr, int flg)
{
	if (!next_shmat)
		resolve();
	return next_shmat(id, addr, flg);
}

static int real_shmdt(const void *addr)
{
	if (!next_shmdt)
		resolve();
	return next_shmdt(addr);
}

static int real_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	if (!next_shmctl)
		resolve();
	return next_shmctl(id, cmd, buf);
}
#endif

/* ---- settings and messages -------------------------------------------- */

static struct {
	bool enabled, verbose;
	int err;		/* why mshare_info could not be read */
	int max_maps;		/* MSHARE_PRELOAD_MAX_MAPPINGS */
	size_t threshold;
	unsigned long align;
	const char *mount, *prefix;
} cfg;

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int said;	/* reasons already reported, one bit each */
static unsigned int counter;	/* for region names */

enum reason {
	R_UNAVAILABLE, R_FIXED, R_EXEC, R_NONE, R_FLAGS, R_SETUP, R_FULL,
	R_PARTIAL, R_SHMAT_ADDR, R_SYSV_SETUP,
};

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "mshare-preload[%d]: ", getpid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

/* Report @r once per process tree (the bit is inherited by fork). */
static bool first_time(enum reason r)
{
	return !(__atomic_fetch_or(&said, 1U << r, __ATOMIC_RELAXED) &
		 (1U << r));
}

#define say_once(r, fmt, ...) do {					\
	if (first_time(r))						\
		say(fmt, ##__VA_ARGS__);				\
} while (0)

/* Like mshare(1): decimal or 0x hex, optional K, M, G, T suffix. */
static bool parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	int shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, s[0] == '0' && (s[1] | 32) == 'x' ? 16 : 10);
	if (errno)
		return false;
	switch (*end | 32) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	}
	if (shift)
		end++;
	if (*end || (shift && v > (~0ULL >> shift)))
		return false;
	*out = v << shift;
	return true;
}

static unsigned long read_alignment(const char *mount)
{
	unsigned long a = mshare_alignment(mount);

	cfg.err = errno;
	return a;
}

static void prepare_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&lock);
}

static void load_config(void)
{
	const char *t = getenv("MSHARE_PRELOAD_THRESHOLD");
	const char *v = getenv("MSHARE_PRELOAD_VERBOSE");
	const char *m = getenv("MSHARE_PRELOAD_MAX_MAPPINGS");
	size_t max;

	cfg.mount = mshare_mount_dir();
	cfg.prefix = getenv("MSHARE_PRELOAD_PREFIX");
	if (!cfg.prefix || !*cfg.prefix)
		cfg.prefix = "preload";
	cfg.verbose = v && *v && strcmp(v, "0");
	cfg.threshold = DEFAULT_THRESHOLD;
	if (t && !parse_size(t, &cfg.threshold))
		say("MSHARE_PRELOAD_THRESHOLD=%s is not a size; using %zu",
		    t, cfg.threshold = DEFAULT_THRESHOLD);
	cfg.max_maps = MAX_MAPPINGS;
	if (m && parse_size(m, &max) && max >= 1 && max <= MAX_MAPPINGS)
		cfg.max_maps = max;
	else if (m)
		say("MSHARE_PRELOAD_MAX_MAPPINGS=%s is not 1 to %d; using %d",
		    m, MAX_MAPPINGS, MAX_MAPPINGS);
	cfg.align = read_alignment(cfg.mount);
	cfg.enabled = cfg.align && !(cfg.align & (cfg.align - 1));
	pthread_atfork(prepare_fork, after_fork, after_fork);
}

/* Settings loaded; is a request of @len bytes one to move? */
static bool wanted(size_t len)
{
	pthread_once(&cfg_once, load_config);
	return len >= cfg.threshold;
}

static bool enabled(void)
{
	pthread_once(&cfg_once, load_config);
	if (!cfg.enabled)
		say_once(R_UNAVAILABLE, "%s/mshare_info: %s; not using regions",
			 cfg.mount, strerror(cfg.err));
	return cfg.enabled;
}

/* ---- the mappings the shim made ---------------------------------------- */

struct mapping {
	uintptr_t addr;
	size_t len;		/* what the program asked for, page-rounded */
	size_t size;		/* the region's size: what detaching takes */
	int shmid;		/* -1 for mmap */
};

static struct mapping maps[MAX_MAPPINGS];
static int nmaps;

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

static bool track(void *addr, size_t len, size_t size, int shmid)
{
	bool ok = false;

	pthread_mutex_lock(&lock);
	if (nmaps < cfg.max_maps) {
		maps[nmaps++] = (struct mapping){ (uintptr_t)addr, len, size,
						  shmid };
		ok = true;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

static void untrack(int i)
{
	maps[i] = maps[--nmaps];
}

/* ---- regions ----------------------------------------------------------- */

/* A region of @size holding @len bytes of anonymous memory; its fd. */
static int make_region(const char *path, int mode, size_t len, size_t size,
		       int prot, int extra_flags)
{
	int fd = mshare_region_create(AT_FDCWD, path, mode, size);

	if (fd < 0)
		return -1;
	if (mshare_map(fd, 0, len, prot, extra_flags, -1, 0)) {
		int err = errno;

		unlink(path);
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static size_t huge_size(int flags)
{
	int shift = (flags & MAP_HUGE_BITS) >> MAP_HUGE_SHIFT;

	return shift ? 1UL << shift : 2UL << 20;
}

/* x86's; on other architectures (arm64) no program passes it. */
#ifndef MAP_32BIT
#define MAP_32BIT	0
#endif

/* Why mmap(MAP_SHARED | MAP_ANONYMOUS, @prot, @flags) cannot be moved. */
static int refusal(int prot, int flags)
{
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))
		return R_FIXED;
	if (prot & PROT_EXEC)
		return R_EXEC;
	if (!(prot & (PROT_READ | PROT_WRITE)))
		return R_NONE;
	if (flags & (MAP_LOCKED | MAP_32BIT | MAP_GROWSDOWN))
		return R_FLAGS;
	return -1;
}

static const char *const refusal_text[] = {
	[R_FIXED] = "MAP_FIXED mappings",
	[R_EXEC] = "executable shared memory",
	[R_NONE] = "PROT_NONE reservations (made usable with mprotect)",
	[R_FLAGS] = "MAP_LOCKED, MAP_32BIT or MAP_GROWSDOWN",
};

/* The region version of mmap(); NULL if the caller should fall back. */
static void *region_mmap(size_t len, int prot, int flags)
{
	int extra = flags & (MAP_NORESERVE | MAP_HUGETLB | MAP_HUGE_BITS);
	size_t olen = round_up(len, flags & MAP_HUGETLB ? huge_size(flags) :
			       (size_t)sysconf(_SC_PAGESIZE));
	size_t size = round_up(olen, cfg.align);
	int r = refusal(prot, flags), fd = -1, tries;
	char path[PATH_MAX];
	void *p;

	if (r >= 0) {
		say_once(r, "%s: not in regions", refusal_text[r]);
		return NULL;
	}
	if (prot & PROT_WRITE)
		prot |= PROT_READ;
	for (tries = 0; fd < 0 && tries < 100; tries++) {
		snprintf(path, sizeof(path), "%s/%s-%d-%u", cfg.mount,
			 cfg.prefix, getpid(),
			 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
		fd = make_region(path, 0600, olen, size, prot, extra);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		say_once(R_SETUP, "region %s: %s; this mapping stays plain",
			 path, strerror(errno));
		return NULL;
	}
	p = REAL(mmap)(NULL, size, prot, MAP_SHARED, fd, 0);
	unlink(path);
	close(fd);
	if (p == MAP_FAILED) {
		say_once(R_SETUP, "attach %s: %s; this mapping stays plain",
			 path, strerror(errno));
		return NULL;
	}
	if (!track(p, olen, size, -1)) {
		REAL(munmap)(p, size);
		say_once(R_FULL, "more than %d regions", cfg.max_maps);
		return NULL;
	}
	if (cfg.verbose)
		say("mmap of %zu bytes: region %s, attached at %p", len, path,
		    p);
	return p;
}

/* ---- mmap and munmap --------------------------------------------------- */

void *ENTRY(mmap)(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	void *p;

	if ((flags & MAP_TYPE) == MAP_SHARED && (flags & MAP_ANONYMOUS) &&
	    wanted(len) && enabled()) {
		p = region_mmap(len, prot, flags);
		if (p)
			return p;
	}
	return REAL(mmap)(addr, len, prot, flags, fd, off);
}

#ifdef MSHARE_PRELOAD_STATIC
#define MMAP_NAME	"__wrap_mmap"
#else
#define MMAP_NAME	"mmap"
#endif
void *ENTRY(mmap64)(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off) __attribute__((alias(MMAP_NAME)));

/*
 * munmap of ranges holding the shim's regions: every region the range
 * covers from its start to the length the program asked for is detached
 * whole; a range that cuts into one fails with EINVAL (as the kernel would).
 */
int ENTRY(munmap)(void *addr, size_t len)
{
	uintptr_t s = (uintptr_t)addr;
	uintptr_t e = s + round_up(len, (size_t)sysconf(_SC_PAGESIZE));
	bool mine = false;
	int i, ret;

	if (!__atomic_load_n(&nmaps, __ATOMIC_RELAXED))
		return REAL(munmap)(addr, len);
	pthread_mutex_lock(&lock);
	for (i = 0; i < nmaps; i++) {
		struct mapping *m = &maps[i];

		if (e <= m->addr || s >= m->addr + m->size)
			continue;
		if (s > m->addr || e < m->addr + m->len) {
			pthread_mutex_unlock(&lock);
			say_once(R_PARTIAL, "munmap of part of region at %#lx: %s",
				 (unsigned long)m->addr, strerror(EINVAL));
			errno = EINVAL;
			return -1;
		}
		/* The attachment goes whole: up to the end of the region. */
		if (e < m->addr + m->size)
			e = m->addr + m->size;
		mine = true;
	}
	if (!mine) {
		/* Not ours: no need to hold up other threads' munmap. */
		pthread_mutex_unlock(&lock);
		return REAL(munmap)(addr, len);
	}
	/*
	 * One munmap for the range and the attachments in it, under the
	 * lock: no address is ever free between two calls, for another
	 * thread's mmap to take and for a second call to unmap.
	 */
	ret = REAL(munmap)(addr, e - s);
	for (i = 0; !ret && i < nmaps; i++) {
		struct mapping *m = &maps[i];

		if (m->addr >= s && m->addr < e)
			untrack(i--);
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

/* ---- System V shared memory ------------------------------------------- */

static void sysv_path(char *path, size_t len, int id)
{
	snprintf(path, len, "%s/preload-sysv-%d", cfg.mount, id);
}

/* The region for the new segment @id; a stale one of a dead id goes. */
static void sysv_create(int id, size_t size, int flg)
{
	size_t olen = round_up(size, (size_t)sysconf(_SC_PAGESIZE));
	char path[PATH_MAX];
	int fd;

	sysv_path(path, sizeof(path), id);
	fd = make_region(path, flg & 0777, olen, round_up(olen, cfg.align),
			 PROT_READ | PROT_WRITE, 0);
	if (fd < 0 && errno == EEXIST && !unlink(path))
		fd = make_region(path, flg & 0777, olen,
				 round_up(olen, cfg.align),
				 PROT_READ | PROT_WRITE, 0);
	if (fd < 0) {
		say_once(R_SYSV_SETUP, "region %s: %s; segment %d stays plain",
			 path, strerror(errno), id);
		return;
	}
	close(fd);
	if (cfg.verbose)
		say("shmget of %zu bytes: segment %d in region %s", size, id,
		    path);
}

int ENTRY(shmget)(key_t key, size_t size, int flg)
{
	bool created;
	int id;

	if (!wanted(size) || (flg & SHM_HUGETLB) || !enabled())
		return REAL(shmget)(key, size, flg);
	/* Only the process that creates the segment makes its region. */
	if (key == IPC_PRIVATE || (flg & (IPC_CREAT | IPC_EXCL)) ==
	    (IPC_CREAT | IPC_EXCL)) {
		id = REAL(shmget)(key, size, flg);
		created = id >= 0;
	} else if (flg & IPC_CREAT) {
		id = REAL(shmget)(key, size, flg | IPC_EXCL);
		created = id >= 0;
		if (id < 0 && errno == EEXIST)
			id = REAL(shmget)(key, size, flg & ~IPC_CREAT);
	} else {
		return REAL(shmget)(key, size, flg);
	}
	if (created)
		sysv_create(id, size, flg);
	return id;
}

void *ENTRY(shmat)(int id, const void *addr, int flg)
{
	int ro = flg & SHM_RDONLY, fd, prot;
	char path[PATH_MAX];
	struct stat st;
	void *p;

	if (!enabled())
		return REAL(shmat)(id, addr, flg);
	sysv_path(path, sizeof(path), id);
	fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return REAL(shmat)(id, addr, flg);
	if (fd < 0)
		return (void *)-1;	/* EACCES: as shmat would say */
	if ((addr && (uintptr_t)addr % cfg.align) || (flg & SHM_EXEC)) {
		say_once(R_SHMAT_ADDR, "shmat(%d, %p, %#x): %s (address not aligned or SHM_EXEC)",
			 id, addr, flg, strerror(EINVAL));
		close(fd);
		errno = EINVAL;
		return (void *)-1;
	}
	prot = ro ? PROT_READ : PROT_READ | PROT_WRITE;
	if (fstat(fd, &st)) {
		close(fd);
		return (void *)-1;
	}
	p = REAL(mmap)((void *)addr, st.st_size, prot, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return (void *)-1;
	if (addr && p != addr) {
		REAL(munmap)(p, st.st_size);
		errno = EINVAL;
		return (void *)-1;
	}
	if (!track(p, st.st_size, st.st_size, id)) {
		REAL(munmap)(p, st.st_size);
		say_once(R_FULL, "more than %d regions", cfg.max_maps);
		errno = ENOMEM;
		return (void *)-1;
	}
	return p;
}

int ENTRY(shmdt)(const void *addr)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nmaps; i++) {
		if (maps[i].addr != (uintptr_t)addr || maps[i].shmid < 0)
			continue;
		REAL(munmap)((void *)maps[i].addr, maps[i].size);
		untrack(i);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	pthread_mutex_unlock(&lock);
	return REAL(shmdt)(addr);
}

int ENTRY(shmctl)(int id, int cmd, struct shmid_ds *buf)
{
	char path[PATH_MAX];
	int ret = REAL(shmctl)(id, cmd, buf);

	/* The memory stays while attached, as a removed segment's does. */
	if (ret == 0 && cmd == IPC_RMID && enabled()) {
		sysv_path(path, sizeof(path), id);
		unlink(path);
	}
	return ret;
}
