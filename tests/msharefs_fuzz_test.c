// SPDX-License-Identifier: GPL-2.0
/*
 * Argument fuzzing of msharefs. A deterministic PRNG drives thousands of
 * calls on the files of a private msharefs instance, with random and
 * boundary values: both ioctls (and unknown ioctl numbers, and the right
 * numbers with wrong sizes), mmap, ftruncate, fallocate (every mode bit),
 * read/pread, lseek, write/pwrite and open (every flag bit) on regions,
 * the instance's directory and its mshare_info, with bad, closed, O_PATH,
 * directory, pipe, device and msharefs descriptors as region or backing.
 *
 * Each call has an oracle, written from msharefs.rst and the VFS rules
 * that apply before msharefs sees the call: the call must succeed when it
 * is valid, and fail with an errno of the set its faults allow otherwise;
 * anything else is reported with the call and fails the test. After each
 * refused call the test checks that nothing changed: the regions' sizes
 * (fstat, read(2)), and the objects, which it keeps a model of and probes
 * through an attachment (a hole or PROT_NONE object faults, an object
 * reads, tags written into anonymous objects are still there).
 *
 *   MSHARE_FUZZ_SEED=N     the seed (default fixed; "random": from the time)
 *   MSHARE_FUZZ_ITERS=N    the number of calls (default FUZZ_ITERS)
 *
 * Needs root and a kernel with CONFIG_MSHARE=y. It mounts its own
 * instance in a private mount namespace. The kernel log must stay clean
 * (checked by the runner).
 */
#include <setjmp.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include <linux/falloc.h>

#include "mshare_test.h"

#ifndef MAP_UNINITIALIZED
#define MAP_UNINITIALIZED	0x4000000
#endif
#ifndef MAP_ABOVE4G
#define MAP_ABOVE4G		0x80
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif
#ifndef __O_SYNC
#define __O_SYNC		04000000
#endif
/* The kernel's bit: glibc's __O_TMPFILE includes O_DIRECTORY. */
#define TMPFILE_BIT		020000000
#ifndef FALLOC_FL_UNSHARE_RANGE
#define FALLOC_FL_UNSHARE_RANGE	0x40
#endif

#define FUZZ_SEED	0x6d736872667a7a31ULL
#define FUZZ_ITERS	20000
#define FILE_SIZE	HPAGE		/* memfd, tmpfs and disk files */
#define HUGE_SIZE	(2 * HPAGE)	/* hugetlbfs backing */
#define MAX_OBJS	48
#define MAX_TAGS	256
#define MAX_BAD		40
/* TASK_SIZE: x86_64 leaves out the last page, arm64 does not. */
#ifdef __aarch64__
#define USER_TOP	USER_VA_END
#else
#define USER_TOP	(USER_VA_END - PG)
#endif
#define KERNEL_ADDR	0xffff888000000000UL
/* The largest region: the aligned user address space less its first unit. */
#define MAX_REGION	((USER_TOP / w.A - 1) * w.A)
#define MNT_TEMPLATE	"/tmp/mshare-fuzz-XXXXXX"

/*
 * x86's mmap flags, which only x86 counts among the legacy ones; and the
 * huge-page sizes other than 2 MiB and 1 GiB that arm64 has with 4 KiB
 * pages (contiguous 64 KiB and 32 MiB), for which no pages are reserved.
 */
#ifdef __x86_64__
#define X86_MAP_FLAGS	(MAP_32BIT | MAP_ABOVE4G)
#define ARCH_HSTATE(log) 0
#else
#define X86_MAP_FLAGS	0
#define ARCH_HSTATE(log) ((log) == 16 || (log) == 25)
#endif

/* The Linux mmap flags that MAP_SHARED_VALIDATE accepts for a region. */
#define LEGACY_MAP_MASK	(MAP_SHARED | MAP_PRIVATE | MAP_FIXED |	\
			 MAP_ANONYMOUS | MAP_DENYWRITE | MAP_EXECUTABLE | \
			 MAP_UNINITIALIZED | MAP_GROWSDOWN | MAP_LOCKED | \
			 MAP_NORESERVE | MAP_POPULATE | MAP_NONBLOCK |	\
			 MAP_STACK | MAP_HUGETLB | X86_MAP_FLAGS |	\
			 (21U << MAP_HUGE_SHIFT) |			\
			 (30U << MAP_HUGE_SHIFT))
/* What MSHAREFS_CREATE_MAPPING accepts besides MAP_SHARED | MAP_FIXED. */
#define CREATE_FLAGS	(MAP_ANONYMOUS | MAP_NORESERVE | MAP_HUGETLB | \
			 (0x3fU << MAP_HUGE_SHIFT))

/* ---- errno sets ---------------------------------------------------------- */

typedef unsigned __int128 eset;

#define E(e)		((eset)1 << (e))
#define OK		E(0)	/* success is allowed */

static bool allowed(eset set, long ret, int err)
{
	return ret == -1 ? err > 0 && err < 128 && (set & E(err)) :
			   (set & OK) != 0;
}

static void eset_str(eset set, char *buf, size_t len)
{
	size_t n = 0;
	int e;

	buf[0] = '\0';
	for (e = 0; e < 128 && n < len; e++)
		if (set & E(e))
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "",
				      e ? strerrorname_np(e) : "success");
}

/* ---- PRNG: splitmix64 ---------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int one_in)
{
	return below(one_in) == 0;
}

/* ---- the world: an instance, its regions, descriptors -------------------- */

enum kind {
	K_REGION,	/* a region of the instance */
	K_OPATH,	/* O_PATH descriptor of a region */
	K_BAD,		/* not a descriptor */
	K_DIR,		/* the instance's root */
	K_INFO,		/* its mshare_info */
	K_MEMFD,
	K_TMPFS,
	K_DISK,
	K_HUGE,		/* hugetlbfs */
	K_PIPE,
	K_CHR,		/* /dev/null */
};

struct region {
	const char *name;
	unsigned long size;	/* what the region's size must be */
};

struct fdk {
	const char *name;
	int fd;
	enum kind kind;
	bool r, w;		/* FMODE_READ, FMODE_WRITE */
	struct region *reg;	/* K_REGION */
};

struct obj {
	unsigned long start, end;	/* offsets in the region */
	int prot;
	bool file;
	bool huge;
};

struct tag {
	unsigned long off;
	uint64_t val;
};

static struct {
	unsigned long A;
	char dir[sizeof(MNT_TEMPLATE)];
	int root;
	struct region R, U;
	struct fdk fds[24];
	int nfds;
	struct fdk *rw;		/* R, O_RDWR: the ioctls' usual target */
	struct fdk *u;		/* U, O_RDWR */
	char *P;		/* R attached read-write */
	unsigned long free_at;	/* an aligned free address range */
	struct obj objs[MAX_OBJS];
	int nobjs;
	struct tag tags[MAX_TAGS];
	int ntags;
	unsigned long anon_bytes;
	char *rbuf;		/* 64 KiB of read buffer */
	char *ro_page;		/* a read-only page */
	unsigned long iter, calls[16], oks[16], bad, news;
	char what[320];		/* the current call, for reports */
} w;

enum call {
	C_CREATE, C_UNMAP, C_IOCTL, C_MMAP, C_FTRUNCATE, C_FALLOCATE, C_READ,
	C_LSEEK, C_WRITE, C_OPEN, NCALLS
};

static const char * const call_name[NCALLS] = {
	"create", "unmap", "ioctl", "mmap", "ftruncate", "fallocate", "read",
	"lseek", "write", "open",
};

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void bad(const char *fmt, ...)
{
	va_list ap;

	w.bad++;
	if (w.bad > MAX_BAD)
		return;
	va_start(ap, fmt);
	printf("# BAD (iteration %lu) ", w.iter);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* Check the result of the call described in w.what against @set. */
static void judge(enum call c, eset set, long ret, int err)
{
	char want[512];

	w.calls[c]++;
	if (ret != -1)
		w.oks[c]++;
	if (allowed(set, ret, err))
		return;
	eset_str(set, want, sizeof(want));
	if (ret == -1)
		bad("%s -> %s (%s); allowed: %s", w.what, strerrorname_np(err),
		    strerror(err), want);
	else
		bad("%s -> %ld; allowed: %s", w.what, ret, want);
}

static struct fdk *add_fd(const char *name, int fd, enum kind kind,
			  bool r, bool wr, struct region *reg)
{
	struct fdk *f = &w.fds[w.nfds++];

	f->name = name;
	f->fd = fd;
	f->kind = kind;
	f->r = r;
	f->w = wr;
	f->reg = reg;
	return f;
}

static struct fdk *pick_fd(void)
{
	/* The sized region, read-write, half of the time. */
	return chance(2) ? w.rw : &w.fds[below(w.nfds)];
}

static bool is_region(const struct fdk *f)
{
	return f->kind == K_REGION;
}

static bool no_fd(const struct fdk *f)
{
	return f->kind == K_BAD || f->kind == K_OPATH;
}

/* ---- probing the attachment ---------------------------------------------- */

static sigjmp_buf probe_jmp;
static volatile int probe_sig;

static void probe_handler(int sig)
{
	probe_sig = sig;
	siglongjmp(probe_jmp, 1);
}

/* Read a word at P + @off: 0, SIGSEGV or SIGBUS. */
static int probe(unsigned long off, uint64_t *val)
{
	probe_sig = 0;
	if (!sigsetjmp(probe_jmp, 1))
		*val = *(volatile uint64_t *)(w.P + off);
	return probe_sig;
}

static struct obj *obj_at(unsigned long off)
{
	int i;

	for (i = 0; i < w.nobjs; i++)
		if (off >= w.objs[i].start && off < w.objs[i].end)
			return &w.objs[i];
	return NULL;
}

/* Does the page at @off read as the model says? */
static void check_page(unsigned long off, const char *why)
{
	struct obj *o = obj_at(off);
	uint64_t v = 0;
	int sig = probe(off, &v), i;
	bool readable = o && (o->prot & (PROT_READ | PROT_WRITE));

	if (!readable && sig != SIGSEGV)
		bad("after %s: offset %#lx (%s) gave signal %d, not SIGSEGV",
		    why, off, o ? "PROT_NONE object" : "hole", sig);
	else if (readable && sig && !(o->file && sig == SIGBUS))
		bad("after %s: object page %#lx (%#lx-%#lx, prot %d, %s) gave signal %d",
		    why, off, o->start, o->end, o->prot,
		    o->file ? "file" : "anon", sig);
	if (!readable || sig)
		return;
	for (i = 0; i < w.ntags; i++)
		if (w.tags[i].off == off && w.tags[i].val != v)
			bad("after %s: tag at %#lx is %#llx, not %#llx", why,
			    off, (unsigned long long)v,
			    (unsigned long long)w.tags[i].val);
}

static void check_sizes(const char *why)
{
	struct mshare_info info;
	struct stat st;

	if (fstat(w.rw->fd, &st) || st.st_size != (off_t)w.R.size)
		bad("after %s: region R has size %lld, not %lu", why,
		    (long long)st.st_size, w.R.size);
	if (mshare_region_info(w.rw->fd, &info) || info.size != w.R.size ||
	    info.start != (unsigned long)w.P)
		bad("after %s: R's mshare_info is {%#llx, %#llx}", why,
		    (unsigned long long)info.start,
		    (unsigned long long)info.size);
	if (fstat(w.u->fd, &st) || st.st_size != (off_t)w.U.size)
		bad("after %s: region U has size %lld, not %lu", why,
		    (long long)st.st_size, w.U.size);
}

/* What a refused call may not have changed; @off: a page it aimed at. */
static void check_unchanged(const char *why, unsigned long off)
{
	check_sizes(why);
	if (off < w.A)
		check_page(off & ~(PG - 1), why);
	if (w.nobjs)
		check_page(w.objs[below(w.nobjs)].start, why);
	check_page(below(w.A) & ~(PG - 1), why);
}

static void check_all(const char *why)
{
	int i;

	check_sizes(why);
	for (i = 0; i < w.nobjs; i++) {
		check_page(w.objs[i].start, why);
		check_page(w.objs[i].end - PG, why);
		if (w.objs[i].start >= PG)
			check_page(w.objs[i].start - PG, why);
		if (w.objs[i].end < w.A)
			check_page(w.objs[i].end, why);
	}
}

/* ---- the model of R's objects -------------------------------------------- */

static bool overlaps(unsigned long start, unsigned long end)
{
	int i;

	for (i = 0; i < w.nobjs; i++)
		if (start < w.objs[i].end && w.objs[i].start < end)
			return true;
	return false;
}

/* Would unmapping [start, end) split a huge-page object off 2 MiB? */
static bool cuts_huge(unsigned long start, unsigned long end)
{
	int i;

	for (i = 0; i < w.nobjs; i++) {
		struct obj *o = &w.objs[i];

		if (!o->huge || end <= o->start || o->end <= start)
			continue;
		if ((start > o->start && start % HPAGE) ||
		    (end < o->end && end % HPAGE))
			return true;
	}
	return false;
}

static void model_unmap(unsigned long start, unsigned long end)
{
	int i, j;

	for (i = 0; i < w.nobjs; i++) {
		struct obj *o = &w.objs[i];

		if (end <= o->start || o->end <= start)
			continue;
		if (start > o->start && end < o->end && w.nobjs < MAX_OBJS) {
			w.objs[w.nobjs] = *o;
			w.objs[w.nobjs].start = end;
			o->end = start;
			w.nobjs++;
		} else if (start > o->start) {
			o->end = start;
		} else if (end < o->end) {
			o->start = end;
		} else {
			w.objs[i--] = w.objs[--w.nobjs];
		}
	}
	for (i = j = 0; i < w.ntags; i++)
		if (w.tags[i].off < start || w.tags[i].off >= end)
			w.tags[j++] = w.tags[i];
	w.ntags = j;
}

/* Empty R: an UNMAP of all of it must work. */
static void reset_objects(void)
{
	snprintf(w.what, sizeof(w.what), "UNMAP(R, 0, A) (reset)");
	errno = 0;
	judge(C_UNMAP, OK, mshare_unmap(w.rw->fd, 0, w.A), errno);
	model_unmap(0, w.A);
	w.nobjs = 0;
	w.anon_bytes = 0;
	check_all("reset");
}

static const int prots[] = {
	PROT_READ | PROT_WRITE, PROT_READ, PROT_WRITE, PROT_NONE,
};

/* ---- random values ----------------------------------------------------- */

static uint64_t boundary(void)
{
	const unsigned long A = w.A;
	const uint64_t v[] = {
		0, 1, PG - 1, PG, PG + 1, HPAGE, A - PG, A - 1, A, A + PG,
		2 * A, 254 * A, 255 * A, 256 * A, 1ULL << 47, 1ULL << 62,
		1ULL << 63, (1ULL << 63) - PG, ~0ULL, ~0ULL - PG + 1,
		-(uint64_t)A, -(uint64_t)PG, 1ULL << 32, 0xffffffffULL,
	};

	return v[below(ARRAY_SIZE(v))];
}

/* A page-aligned offset in the region, mostly near its start or end. */
static uint64_t region_off(void)
{
	switch (below(6)) {
	case 0:
		return boundary();
	case 1:
		return w.A - (1 + below(64)) * PG;
	case 2:
		return below(w.A / PG) * PG + (chance(8) ? below(PG) : 0);
	case 3:
		return below(16) * HPAGE;
	default:
		return below(256) * PG;
	}
}

static uint64_t obj_size(void)
{
	switch (below(6)) {
	case 0:
		return boundary();
	case 1:
		return (1 + below(4)) * HPAGE;
	case 2:
		return chance(2) ? w.A : (1 + below(w.A / PG)) * PG;
	case 3:
		return (1 + below(8)) * PG + (chance(4) ? 1 + below(PG) : 0);
	default:
		return (1 + below(8)) * PG;
	}
}

static uint32_t random_bits32(void)
{
	return chance(2) ? 1U << below(32) : (uint32_t)rnd();
}

/* A user pointer for a kernel to read or write, and whether it is valid. */
static void *user_ptr(void *good, bool *valid)
{
	void *const bads[] = {
		NULL, (void *)KERNEL_ADDR, (void *)(USER_TOP - 8),
		(void *)(w.P + w.A - PG),	/* a hole of R, mostly */
		(void *)~0UL, (void *)1,
	};

	*valid = !chance(8);
	if (*valid)
		return good;
	return bads[below(ARRAY_SIZE(bads))];
}

/* ---- MSHAREFS_CREATE_MAPPING --------------------------------------------- */

static struct fdk *fd_by_number(int fd)
{
	int i;

	for (i = 0; i < w.nfds; i++)
		if (w.fds[i].fd == fd && w.fds[i].kind != K_BAD)
			return &w.fds[i];
	return NULL;
}

/*
 * A backing descriptor the table does not know (the console on 0-2, the
 * instance's O_PATH root): EBADF if it is none or O_PATH, EINVAL if it is
 * not a regular file.
 */
static eset other_fd_oracle(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_PATH) || fstat(fd, &st))
		return E(EBADF);
	return S_ISREG(st.st_mode) ? OK | E(EACCES) | E(ENODEV) : E(EINVAL);
}

/* The errnos CREATE_MAPPING may give: the oracle. */
static eset create_oracle(const struct fdk *f, const struct mshare_create *mc,
			  bool ptr_ok, bool *huge_obj)
{
	unsigned long S = f->reg ? f->reg->size : 0, hsize = HPAGE;
	uint32_t type = mc->flags & MAP_TYPE, log = 0;
	bool anon = mc->flags & MAP_ANONYMOUS;
	bool huge = mc->flags & MAP_HUGETLB;
	const struct fdk *b = NULL;
	eset maybe = 0;

	*huge_obj = false;
	if (no_fd(f))
		return E(EBADF);
	if (!is_region(f))
		return E(ENOTTY);
	if (!f->w)
		return E(EBADF);
	if (!ptr_ok)
		return E(EFAULT);
	if (mc->reserved || type != MAP_SHARED || !(mc->flags & MAP_FIXED) ||
	    (mc->flags & ~(MAP_TYPE | MAP_FIXED | CREATE_FLAGS)) ||
	    (mc->prot & ~(PROT_READ | PROT_WRITE)) ||
	    !mc->size || mc->region_offset % PG || mc->size % PG ||
	    mc->region_offset >= S || mc->size > S - mc->region_offset ||
	    mc->offset % PG || (anon && (mc->fd != -1 || mc->offset)))
		return E(EINVAL);
	if (!anon) {
		b = fd_by_number((int)mc->fd);
		if (!b)
			return other_fd_oracle((int)mc->fd);
		if (b->kind == K_OPATH)
			return E(EBADF);
		/* Not a regular file, or an msharefs file. */
		if (b->kind == K_DIR || b->kind == K_PIPE || b->kind == K_CHR ||
		    b->kind == K_REGION || b->kind == K_INFO)
			return E(EINVAL);
		if (huge && b->kind != K_HUGE)
			return E(EINVAL);
		*huge_obj = b->kind == K_HUGE;
	} else if (huge) {
		log = (mc->flags >> MAP_HUGE_SHIFT) & 0x3f;
		/* Sizes with no reserved pages: 30 stands for them below. */
		if (log == 30 || ARCH_HSTATE(log)) {
			hsize = 1UL << log;
			log = 30;
		}
		else if (log && log != 21)
			return E(EINVAL);
		/* A 1 GiB hstate may not exist: EINVAL. */
		if (mc->size % hsize)
			return E(EINVAL) | (log == 30 ? E(ENOMEM) : 0);
		if (log == 30)
			maybe |= E(EINVAL);
		/* Huge pages are reserved, and may run out. */
		maybe |= E(ENOMEM);
		*huge_obj = true;
	}
	if (overlaps(mc->region_offset, mc->region_offset + mc->size))
		return E(EEXIST);
	/* do_mmap() checks where a huge-page object goes. */
	if (anon && huge && mc->region_offset % hsize)
		return E(EINVAL) | (log == 30 ? E(ENOMEM) : 0);

	/*
	 * What do_mmap() and the backing's ->mmap() may refuse, in an order
	 * that varies: the huge-page alignment, an offset past what a file
	 * can have, the open mode.
	 */
	if (b) {
		eset certain = 0;

		if (!b->r || ((mc->prot & PROT_WRITE) && !b->w))
			certain |= E(EACCES);
		if (mc->offset + mc->size < mc->offset ||
		    mc->offset + mc->size > (uint64_t)LLONG_MAX)
			certain |= E(EOVERFLOW);
		if (b->kind == K_HUGE) {
			if ((mc->region_offset | mc->size | mc->offset) %
			    HPAGE)
				certain |= E(EINVAL);
			maybe |= E(ENOMEM);
			if (mc->offset >= (1ULL << 40))
				maybe |= E(EINVAL);
		}
		if (certain)
			return certain | (maybe & ~OK & E(EINVAL));
	} else if (!(mc->flags & MAP_NORESERVE) && mc->size > (1UL << 30)) {
		/* Shared anonymous memory is charged to overcommit. */
		maybe |= E(ENOMEM);
	}
	return OK | maybe;
}

static void fill_create(struct mshare_create *mc)
{
	struct fdk *b;

	memset(mc, 0, sizeof(*mc));
	mc->region_offset = region_off();
	mc->size = obj_size();
	mc->prot = prots[below(ARRAY_SIZE(prots))];
	if (chance(8))
		mc->prot |= chance(2) ? PROT_EXEC : random_bits32();
	if (chance(2)) {
		mc->flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS;
		mc->fd = -1;
		if (chance(3))
			mc->flags |= MAP_NORESERVE;
		if (chance(6)) {
			mc->flags |= MAP_HUGETLB;
			mc->size = (1 + below(2)) * HPAGE;
			mc->region_offset = below(64) * HPAGE;
			if (chance(3))
				mc->flags |= (chance(2) ? 21U : 30U) <<
					     MAP_HUGE_SHIFT;
		}
	} else {
		b = &w.fds[below(w.nfds)];
		mc->flags = MAP_SHARED | MAP_FIXED;
		mc->fd = chance(16) ? (int32_t)rnd() : b->fd;
		mc->offset = chance(4) ? boundary() : below(4) * PG;
		if (b->kind == K_HUGE) {
			mc->size = HPAGE;
			mc->region_offset = below(64) * HPAGE;
			mc->offset = below(2) * HPAGE;
		} else if (b->kind != K_REGION && chance(2)) {
			mc->size = (1 + below(4)) * PG;
		}
	}
	/* Now and then, one more field gets a random or boundary value. */
	switch (below(10)) {
	case 0:
		mc->flags ^= 1U << below(32);
		break;
	case 1:
		mc->flags = (mc->flags & ~MAP_TYPE) | below(16);
		break;
	case 2:
		mc->fd = (int32_t)(chance(2) ? rnd() : boundary());
		break;
	case 3:
		mc->offset = boundary() + (chance(2) ? below(PG) : 0);
		break;
	case 4:
		mc->region_offset = boundary();
		mc->size = boundary();
		break;
	case 5:
		/* One byte of the reserved field. */
		mc->reserved = (1 + below(255)) << (8 * below(4));
		break;
	}
}

static void describe_create(const struct fdk *f,
			    const struct mshare_create *mc, bool ptr_ok)
{
	snprintf(w.what, sizeof(w.what),
		 "CREATE_MAPPING(%s, {region_offset %#llx, size %#llx, offset %#llx, prot %#x, flags %#x, fd %d, reserved %#x}%s)",
		 f->name, (unsigned long long)mc->region_offset,
		 (unsigned long long)mc->size,
		 (unsigned long long)mc->offset, mc->prot, mc->flags,
		 mc->fd, mc->reserved, ptr_ok ? "" : " at a bad address");
}

/* After a new object: model it, tag it, check it reads. */
static void created(const struct fdk *f, const struct mshare_create *mc,
		    bool huge)
{
	struct obj *o;
	uint64_t v;

	if (f != w.rw || w.nobjs == MAX_OBJS) {
		/* R through another fd, or too many: start again. */
		if (f->reg == &w.R) {
			mshare_unmap(w.rw->fd, mc->region_offset, mc->size);
			if (w.nobjs == MAX_OBJS)
				reset_objects();
		}
		return;
	}
	o = &w.objs[w.nobjs++];
	o->start = mc->region_offset;
	o->end = mc->region_offset + mc->size;
	o->prot = mc->prot & (PROT_READ | PROT_WRITE);
	o->file = !(mc->flags & MAP_ANONYMOUS);
	o->huge = huge;
	if (!o->file)
		w.anon_bytes += mc->size;
	if (!o->file && o->prot == (PROT_READ | PROT_WRITE) &&
	    w.ntags < MAX_TAGS) {
		v = rnd() | 1;
		*(volatile uint64_t *)(w.P + o->start) = v;
		w.tags[w.ntags].off = o->start;
		w.tags[w.ntags++].val = v;
	}
	check_page(o->start, "create");
	if (o->end < w.A)
		check_page(o->end, "create");
}

static void fuzz_create(void)
{
	struct fdk *f = chance(8) ? pick_fd() : w.rw;
	struct mshare_create mc;
	bool ptr_ok, huge;
	eset set;
	void *arg;
	long ret;

	fill_create(&mc);
	arg = user_ptr(&mc, &ptr_ok);
	/* A pointer into a hole of R could be an object: use NULL. */
	if (!ptr_ok && arg == w.P + w.A - PG && obj_at(w.A - PG))
		arg = NULL;
	set = create_oracle(f, &mc, ptr_ok, &huge);
	describe_create(f, &mc, ptr_ok);
	errno = 0;
	ret = ioctl(f->fd, MSHAREFS_CREATE_MAPPING, arg);
	judge(C_CREATE, set, ret, errno);
	if (!ret && ptr_ok && f->reg == &w.R)
		created(f, &mc, huge);
	else if (!ret && f->reg == &w.U)
		mshare_unmap(f->fd, mc.region_offset, mc.size);
	else
		check_unchanged("a refused CREATE_MAPPING", mc.region_offset);
}

/* ---- MSHAREFS_UNMAP --------------------------------------------------- */

static void fuzz_unmap(void)
{
	struct fdk *f = chance(8) ? pick_fd() : w.rw;
	unsigned long S = f->reg ? f->reg->size : 0;
	struct mshare_unmap mu;
	bool ptr_ok;
	eset set;
	void *arg;
	long ret;

	mu.region_offset = region_off();
	mu.size = obj_size();
	if (w.nobjs && chance(2)) {
		struct obj *o = &w.objs[below(w.nobjs)];

		mu.region_offset = o->start + below(3) * PG;
		mu.size = chance(2) ? o->end - o->start : PG;
	}
	arg = user_ptr(&mu, &ptr_ok);
	if (!ptr_ok && arg == w.P + w.A - PG && obj_at(w.A - PG))
		arg = NULL;
	if (no_fd(f))
		set = E(EBADF);
	else if (!is_region(f))
		set = E(ENOTTY);
	else if (!f->w)
		set = E(EBADF);
	else if (!ptr_ok)
		set = E(EFAULT);
	else if (!mu.size || mu.region_offset % PG || mu.size % PG ||
		 mu.region_offset >= S || mu.size > S - mu.region_offset)
		set = E(EINVAL);
	else if (f->reg == &w.R &&
		 cuts_huge(mu.region_offset, mu.region_offset + mu.size))
		set = E(EINVAL);
	else
		set = OK;
	snprintf(w.what, sizeof(w.what),
		 "UNMAP(%s, {region_offset %#llx, size %#llx}%s)", f->name,
		 (unsigned long long)mu.region_offset,
		 (unsigned long long)mu.size,
		 ptr_ok ? "" : " at a bad address");
	errno = 0;
	ret = ioctl(f->fd, MSHAREFS_UNMAP, arg);
	judge(C_UNMAP, set, ret, errno);
	if (!ret && f->reg == &w.R) {
		model_unmap(mu.region_offset, mu.region_offset + mu.size);
		check_page(mu.region_offset, "UNMAP");
	} else {
		check_unchanged("a refused UNMAP", mu.region_offset);
	}
}

/* ---- other ioctl numbers ----------------------------------------------- */

static void fuzz_ioctl(void)
{
	static const unsigned int types[] = { 'x', 'x', 'x', 'm', 'M', 0xb7 };
	struct fdk *f = pick_fd();
	unsigned int cmd, dir, size;
	char arg[256] = "";
	long ret;

	do {
		dir = below(4);
		size = chance(2) ? below(64) : below(1U << 14);
		cmd = _IOC(dir, types[below(ARRAY_SIZE(types))],
			   chance(2) ? below(4) : below(256), size);
		if (chance(8))
			cmd = _IOW('x', below(2), struct mshare_create) +
			      (chance(2) ? 1 : -1) * (1 << _IOC_SIZESHIFT);
	} while (cmd == MSHAREFS_CREATE_MAPPING || cmd == MSHAREFS_UNMAP);
	snprintf(w.what, sizeof(w.what),
		 "ioctl(%s, %#x (dir %u, type %#x, nr %u, size %u))", f->name,
		 cmd, _IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
		 _IOC_SIZE(cmd));
	errno = 0;
	ret = ioctl(f->fd, cmd, arg);
	judge(C_IOCTL, no_fd(f) ? E(EBADF) : E(ENOTTY), ret, errno);
	check_unchanged("an unknown ioctl", w.A);
}

/* ---- mmap ------------------------------------------------------------- */

static struct fdk *pick_map_fd(void)
{
	struct fdk *f;

	do {
		f = pick_fd();
	} while (f->kind != K_REGION && f->kind != K_OPATH &&
		 f->kind != K_BAD && f->kind != K_DIR && f->kind != K_INFO);
	return f;
}

/* Is any of [addr, addr + len) mapped in this process? */
static bool occupied(unsigned long addr, unsigned long len)
{
	unsigned long a;
	unsigned char v;

	if (addr + len < addr)
		return true;
	for (a = addr; a < addr + len && a >= addr; a += w.A)
		if (!mincore((void *)a, PG, &v) || errno != ENOMEM)
			return true;
	/* Coarse: the program, heap and stack are in the first A or so. */
	return addr < 2 * w.A;
}

static eset mmap_oracle(const struct fdk *f, unsigned long addr,
			unsigned long len, int prot, int flags, uint64_t off)
{
	unsigned long S = f->reg ? f->reg->size : 0, alen;
	int type = flags & MAP_TYPE;
	bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
	eset set = 0;

	if (off % PG)
		return E(EINVAL);
	if (no_fd(f))
		return E(EBADF);
	if (flags & MAP_HUGETLB)
		return E(EINVAL);
	alen = (len + PG - 1) & ~(PG - 1);
	if (!len)
		set |= E(EINVAL);
	if (len && !alen)
		set |= E(ENOMEM);
	if ((off >> 12) + (alen >> 12) < (off >> 12) ||
	    off + alen < off || off + alen > (uint64_t)LLONG_MAX)
		set |= E(EOVERFLOW);
	if (alen > USER_TOP)
		set |= E(ENOMEM);
	if (is_region(f)) {
		if (type == MAP_PRIVATE || alen != S || off || !S)
			set |= E(EINVAL);
		if (fixed && addr % w.A)
			set |= E(EINVAL);
	} else {
		if (fixed && addr % PG)
			set |= E(EINVAL);
		/* No room, or no ->mmap(). */
		set |= E(ENOMEM) | E(ENODEV);
	}
	if (fixed && (alen > USER_TOP || addr > USER_TOP - alen))
		set |= E(ENOMEM);
	if ((flags & MAP_FIXED_NOREPLACE) && occupied(addr, alen))
		set |= E(EEXIST);
	if (type == MAP_SHARED_VALIDATE && (flags & ~LEGACY_MAP_MASK))
		set |= E(EOPNOTSUPP);
	if (type != MAP_SHARED && type != MAP_SHARED_VALIDATE)
		set |= E(EINVAL);
	if (((prot & PROT_WRITE) && !f->w) || !f->r)
		set |= E(EACCES);
	if (prot & PROT_EXEC)
		set |= E(EPERM);
	if (flags & MAP_GROWSDOWN)
		set |= E(EINVAL);
	return set ? set : OK;
}

static unsigned long map_addr(bool fixed)
{
	const unsigned long a[] = {
		w.free_at, w.free_at + PG, w.free_at + w.A / 2, USER_VA_END,
		USER_TOP + PG - w.A, KERNEL_ADDR, ~0UL & ~(PG - 1),
		(unsigned long)rnd() & (USER_VA_END - 1),
	};
	const unsigned long hints[] = { 0, (unsigned long)w.P, PG, 2 * w.A };

	/* Hints may be anything; MAP_FIXED must not replace our own. */
	if (!fixed && chance(3))
		return hints[below(ARRAY_SIZE(hints))];
	return a[below(ARRAY_SIZE(a))];
}

static void fuzz_mmap(void)
{
	struct fdk *f = pick_map_fd();
	unsigned long S = f->reg ? f->reg->size : w.A;
	unsigned long addr, len;
	int prot, flags, type;
	uint64_t off;
	eset set;
	char *p;

	len = chance(2) ? S : (chance(2) ? boundary() : S - PG + below(PG));
	off = chance(2) ? 0 : (chance(2) ? boundary() : below(4) * PG);
	prot = prots[below(ARRAY_SIZE(prots))];
	if (chance(6))
		prot |= chance(2) ? PROT_EXEC : (int)random_bits32();
	type = chance(4) ? (int)below(16) :
	       (chance(4) ? MAP_SHARED_VALIDATE : MAP_SHARED);
	flags = type;
	if (chance(3))
		flags |= (int)random_bits32() & ~MAP_TYPE;
	if (chance(4))
		flags |= chance(2) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
	/* Not an msharefs call; and no populating a huge region by mistake. */
	flags &= ~MAP_ANONYMOUS;
	if (w.anon_bytes > (16UL << 20))
		flags &= ~(MAP_POPULATE | MAP_LOCKED);
	addr = map_addr(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE));
	if ((flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE) &&
	    addr < USER_TOP && !(addr % w.A) && occupied(addr, w.A))
		addr += PG;	/* would replace our own mappings */

	set = mmap_oracle(f, addr, len, prot, flags, off);
	snprintf(w.what, sizeof(w.what),
		 "mmap(%#lx, %#lx, prot %#x, flags %#x, %s, %#llx)", addr, len,
		 prot, flags, f->name, (unsigned long long)off);
	errno = 0;
	p = mmap((void *)addr, len, prot, flags, f->fd, off);
	judge(C_MMAP, set, p == MAP_FAILED ? -1 : 0, errno);
	if (p == MAP_FAILED) {
		check_unchanged("a refused mmap", w.A);
		return;
	}
	if ((unsigned long)p % w.A ||
	    ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) &&
	     (unsigned long)p != addr))
		bad("%s attached at %p", w.what, p);
	if (munmap(p, S))
		bad("%s: munmap(%p, %#lx): %s", w.what, p, S, strerror(errno));
	check_sizes("an attach");
}

/* ---- ftruncate and fallocate ------------------------------------------- */

/* What setting region @reg's size to @len gives, once the VFS agrees. */
static eset set_size_oracle(const struct region *reg, int64_t len)
{
	if ((uint64_t)len == reg->size)
		return OK;
	if (reg->size || len <= 0 || len % w.A || (uint64_t)len > MAX_REGION)
		return E(EINVAL);
	return OK | E(ENOMEM);
}

/* U got a size: give it a new, unsized successor. */
static void new_unsized(void)
{
	static char names[8][16];
	char *name = names[w.news++ % 8];

	unlinkat(w.root, w.U.name, 0);
	close(w.u->fd);
	snprintf(name, 16, "U%lu", w.news);
	w.U.name = name;
	w.U.size = 0;
	w.u->fd = mshare_region_create(w.root, name, 0600, 0);
	if (w.u->fd < 0)
		bad("creating region %s: %s", name, strerror(errno));
}

static int64_t size_arg(void)
{
	switch (below(4)) {
	case 0:
		return (int64_t)boundary();
	case 1:
		return (int64_t)((1 + below(4)) * w.A);
	case 2:
		return (int64_t)rnd();
	default:
		return (int64_t)(below(300) * w.A +
				 (chance(2) ? below(PG) : 0));
	}
}

static void sized(const struct fdk *f, long ret, int64_t len)
{
	if (ret || !f->reg || (uint64_t)len == f->reg->size)
		return;
	if (f->reg == &w.U)
		new_unsized();
	else
		bad("%s succeeded on R", w.what);
}

static void fuzz_ftruncate(void)
{
	struct fdk *f = pick_fd();
	int64_t len = size_arg();
	eset set;
	long ret;

	if (f->kind == K_MEMFD || f->kind == K_TMPFS || f->kind == K_DISK ||
	    f->kind == K_HUGE)
		f = w.u;
	if (len < 0)
		set = E(EINVAL);
	else if (no_fd(f))
		set = E(EBADF);
	else if (!f->w || !is_region(f))
		set = E(EINVAL);
	else
		set = set_size_oracle(f->reg, len);
	snprintf(w.what, sizeof(w.what), "ftruncate(%s, %#llx)", f->name,
		 (unsigned long long)len);
	errno = 0;
	ret = ftruncate(f->fd, len);
	judge(C_FTRUNCATE, set, ret, errno);
	sized(f, ret, len);
	check_unchanged("ftruncate", w.A);
}

static eset fallocate_oracle(const struct fdk *f, int mode, int64_t off,
			     int64_t len)
{
	const int mask = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE |
			 FALLOC_FL_ZERO_RANGE | FALLOC_FL_INSERT_RANGE |
			 FALLOC_FL_UNSHARE_RANGE;
	int64_t sum;

	if (no_fd(f))
		return E(EBADF);
	if (off < 0 || len <= 0)
		return E(EINVAL);
	if (mode & ~(mask | FALLOC_FL_KEEP_SIZE))
		return E(EOPNOTSUPP);
	switch (mode & mask) {
	case 0:
	case FALLOC_FL_UNSHARE_RANGE:
	case FALLOC_FL_ZERO_RANGE:
		break;
	case FALLOC_FL_PUNCH_HOLE:
		if (!(mode & FALLOC_FL_KEEP_SIZE))
			return E(EOPNOTSUPP);
		break;
	case FALLOC_FL_COLLAPSE_RANGE:
	case FALLOC_FL_INSERT_RANGE:
		if (mode & FALLOC_FL_KEEP_SIZE)
			return E(EOPNOTSUPP);
		break;
	default:
		return E(EOPNOTSUPP);
	}
	if (!f->w)
		return E(EBADF);
	if (f->kind == K_INFO)
		return E(EPERM);
	if (f->kind == K_DIR)
		return E(EISDIR);
	if (__builtin_add_overflow(off, len, &sum))
		return E(EFBIG);
	if (mode || off)
		return E(EINVAL);
	return set_size_oracle(f->reg, len);
}

static void fuzz_fallocate(void)
{
	struct fdk *f = pick_fd();
	int mode = chance(3) ? 0 : (chance(2) ? 1 << below(8) :
				    (int)random_bits32());
	int64_t off = chance(2) ? 0 : (int64_t)boundary();
	int64_t len = size_arg();
	eset set;
	long ret;

	if (f->kind == K_MEMFD || f->kind == K_TMPFS || f->kind == K_DISK ||
	    f->kind == K_HUGE || f->kind == K_PIPE || f->kind == K_CHR)
		f = w.u;
	set = fallocate_oracle(f, mode, off, len);
	snprintf(w.what, sizeof(w.what),
		 "fallocate(%s, mode %#x, %#llx, %#llx)", f->name, mode,
		 (unsigned long long)off, (unsigned long long)len);
	errno = 0;
	ret = fallocate(f->fd, mode, off, len);
	judge(C_FALLOCATE, set, ret, errno);
	sized(f, ret, len);
	check_unchanged("fallocate", w.A);
}

/* ---- read, lseek, write ------------------------------------------------- */

static struct fdk *pick_file_fd(void)
{
	struct fdk *f;

	do {
		f = pick_fd();
	} while (f->kind == K_MEMFD || f->kind == K_TMPFS ||
		 f->kind == K_DISK || f->kind == K_HUGE || f->kind == K_PIPE ||
		 f->kind == K_CHR);
	return f;
}

static uint64_t rw_count(void)
{
	const uint64_t v[] = {
		0, 1, 15, 16, 17, 4096, 65536, 1ULL << 31, 1ULL << 62, ~0ULL,
	};

	return chance(2) ? below(40) : v[below(ARRAY_SIZE(v))];
}

static void fuzz_read(void)
{
	struct fdk *f = pick_file_fd();
	bool positional = chance(2), ptr_ok, fits;
	char content[32], alen[32];
	uint64_t count = rw_count();
	int64_t pos = chance(2) ? (int64_t)below(24) : (int64_t)boundary();
	size_t clen = 0, n;
	struct mshare_info info;
	char *buf;
	eset set;
	long ret;

	buf = user_ptr(w.rbuf, &ptr_ok);
	if (buf == w.P + w.A - PG && obj_at(w.A - PG))
		buf = NULL;
	if (ptr_ok && count > 65536)
		count = chance(2) ? 65536 : count;
	if (chance(16)) {
		buf = w.ro_page;
		ptr_ok = false;
	}
	if (is_region(f)) {
		info.start = f->reg == &w.R ? (unsigned long)w.P : 0;
		info.size = f->reg->size;
		memcpy(content, &info, sizeof(info));
		clen = sizeof(info);
	} else if (f->kind == K_INFO) {
		clen = snprintf(content, sizeof(content), "%lu\n", w.A);
	}
	if (!positional && !no_fd(f) && f->kind != K_DIR)
		pos = lseek(f->fd, 0, SEEK_CUR);
	/* access_ok(): the buffer lies below the top of user space. */
	fits = (uint64_t)buf < USER_TOP && count <= USER_TOP - (uint64_t)buf;

	if (positional && pos < 0)
		set = E(EINVAL);
	else if (no_fd(f))
		set = E(EBADF);
	else if (!f->r)
		set = E(EBADF);
	else if (!fits)
		set = E(EFAULT);
	else if (f->kind == K_DIR)
		set = E(EISDIR) | E(EINVAL);
	else if ((uint64_t)pos + (count < (1U << 31) ? count : 0x7ffff000) >
		 (uint64_t)LLONG_MAX)
		set = E(EINVAL);
	else if ((uint64_t)pos >= clen || !count)
		set = OK;
	else
		set = ptr_ok ? OK : E(EFAULT);
	snprintf(w.what, sizeof(w.what), "%s(%s, %p, %#llx%s%s)",
		 positional ? "pread" : "read", f->name, buf,
		 (unsigned long long)count, positional ? ", " : "",
		 positional ? (snprintf(alen, sizeof(alen), "%#llx",
				       (unsigned long long)pos), alen) : "");
	errno = 0;
	ret = positional ? pread(f->fd, buf, count, pos) :
			   read(f->fd, buf, count);
	judge(C_READ, set, ret, errno);
	if (ret < 0 || !(set & OK))
		return;
	n = (uint64_t)pos >= clen ? 0 :
	    (count < clen - pos ? count : clen - pos);
	if ((size_t)ret != n)
		bad("%s read %ld bytes, not %zu", w.what, ret, n);
	else if (n && memcmp(buf, content + pos, n))
		bad("%s read the wrong bytes", w.what);
	if (!positional && ret > 0)
		lseek(f->fd, pos, SEEK_SET);
}

/* default_llseek(), which regions and mshare_info use. */
static eset lseek_oracle(const struct fdk *f, int64_t off, int whence,
			 int64_t *want)
{
	int64_t pos = lseek(f->fd, 0, SEEK_CUR), size;
	struct stat st;

	/* i_size: mshare_info's is 0, like a /proc file's. */
	if (fstat(f->fd, &st))
		return 0;
	size = st.st_size;
	if (is_region(f) && size != (int64_t)f->reg->size)
		bad("%s: fstat size %lld, not %lu", f->name,
		    (long long)size, f->reg->size);
	uint64_t o = off;

	switch (whence) {
	case SEEK_SET:
		break;
	case SEEK_END:
		o += size;
		break;
	case SEEK_CUR:
		if (!off) {
			*want = pos;
			return OK;
		}
		o += pos;
		break;
	case SEEK_DATA:
		if (off >= size)
			return E(ENXIO);
		break;
	case SEEK_HOLE:
		if (off >= size)
			return E(ENXIO);
		o = size;
		break;
	default:
		return E(EINVAL);
	}
	if ((int64_t)o < 0)
		return E(EINVAL);
	*want = o;
	return OK;
}

static void fuzz_lseek(void)
{
	struct fdk *f = pick_file_fd();
	int64_t off = chance(2) ? (int64_t)below(40) - 8 : (int64_t)boundary();
	int whence = chance(8) ? (int)random_bits32() : (int)below(5);
	int64_t want = -1;
	eset set;
	long ret;

	if (no_fd(f))
		set = E(EBADF);
	else if (f->kind == K_DIR)
		set = OK | E(EINVAL) | E(ENXIO);
	else
		set = lseek_oracle(f, off, whence, &want);
	snprintf(w.what, sizeof(w.what), "lseek(%s, %#llx, %d)", f->name,
		 (unsigned long long)off, whence);
	errno = 0;
	ret = lseek(f->fd, off, whence);
	judge(C_LSEEK, set, ret, errno);
	if (ret >= 0 && f->kind != K_DIR && ret != want)
		bad("%s gave %ld, not %lld", w.what, ret, (long long)want);
	if (f->kind == K_DIR && ret > 0)
		lseek(f->fd, 0, SEEK_SET);
}

static void fuzz_write(void)
{
	struct fdk *f = pick_file_fd();
	bool positional = chance(2), ptr_ok;
	uint64_t count = rw_count();
	int64_t pos = chance(2) ? (int64_t)below(24) : (int64_t)boundary();
	char *buf = user_ptr(w.rbuf, &ptr_ok);
	eset set;
	long ret;

	if (ptr_ok && count > 65536)
		count = 65536;
	if (positional && pos < 0)
		set = E(EINVAL);
	else if (no_fd(f) || !f->w)
		set = E(EBADF);
	else
		set = E(EINVAL);	/* a region has no write */
	snprintf(w.what, sizeof(w.what), "%s(%s, %p, %#llx, %#llx)",
		 positional ? "pwrite" : "write", f->name, buf,
		 (unsigned long long)count, (unsigned long long)pos);
	errno = 0;
	ret = positional ? pwrite(f->fd, buf, count, pos) :
			   write(f->fd, buf, count);
	judge(C_WRITE, set, ret, errno);
	check_unchanged("a refused write", w.A);
}

/* ---- open --------------------------------------------------------------- */

#define VALID_OPEN	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | \
			 O_APPEND | O_NONBLOCK | __O_SYNC | O_DSYNC |	\
			 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | \
			 O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH |	\
			 TMPFILE_BIT)
#define O_PATH_FLAGS	(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

enum target { T_R, T_U, T_NEW, T_DIR, T_INFO, T_UNDER_R, T_MISSING_DIR };

static const char *target_path(enum target t, char *buf, size_t len)
{
	switch (t) {
	case T_R:
		return w.R.name;
	case T_U:
		return w.U.name;
	case T_NEW:
		snprintf(buf, len, "new%lu", w.iter);
		return buf;
	case T_DIR:
		return ".";
	case T_INFO:
		return INFO_NAME;
	case T_UNDER_R:
		snprintf(buf, len, "%s/x", w.R.name);
		return buf;
	default:
		return "nodir/x";
	}
}

static eset open_oracle(enum target t, int flags)
{
	bool exists = t == T_R || t == T_U || t == T_DIR || t == T_INFO;
	bool dir = t == T_DIR;
	int acc = flags & O_ACCMODE;
	bool wr;

	flags &= VALID_OPEN;
	if (flags & O_PATH)
		flags &= O_PATH_FLAGS;
	if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
		return E(EINVAL);
	if ((flags & TMPFILE_BIT) &&
	    (!(flags & O_DIRECTORY) || acc == O_RDONLY))
		return E(EINVAL);
	if (t == T_UNDER_R)
		return E(ENOTDIR);
	if (t == T_MISSING_DIR)
		return E(ENOENT);
	if (flags & TMPFILE_BIT)
		return dir ? E(EOPNOTSUPP) : exists ? E(ENOTDIR) : E(ENOENT);
	if (flags & O_PATH) {
		if (!exists)
			return E(ENOENT);
		return (flags & O_DIRECTORY) && !dir ? E(ENOTDIR) : OK;
	}
	if (!exists && !(flags & O_CREAT))
		return E(ENOENT);
	if (exists && (flags & O_CREAT) && (flags & O_EXCL))
		return E(EEXIST);
	if (dir && (flags & O_CREAT))
		return E(EISDIR);
	if ((flags & O_DIRECTORY) && !dir)
		return E(ENOTDIR);
	wr = acc != O_RDONLY || ((flags & O_TRUNC) && exists);
	if (dir && wr)
		return E(EISDIR);
	if (t == T_INFO && wr)
		return E(EPERM);
	if (flags & O_DIRECT)
		return E(EINVAL);
	if (t == T_R && (flags & O_TRUNC))
		return E(EINVAL);
	return OK;
}

static void fuzz_open(void)
{
	static const int bits[] = {
		O_CREAT, O_EXCL, O_NOCTTY, O_TRUNC, O_APPEND, O_NONBLOCK,
		O_DSYNC, FASYNC, O_DIRECT, O_LARGEFILE, O_DIRECTORY,
		O_NOFOLLOW, O_NOATIME, O_CLOEXEC, __O_SYNC, O_PATH,
		TMPFILE_BIT, O_TMPFILE,
	};
	enum target t = below(T_MISSING_DIR + 1);
	int flags = below(4), mode = (int)below(010000), i, fd;
	char buf[64];
	const char *path = target_path(t, buf, sizeof(buf));
	eset set;

	for (i = 0; i < (int)ARRAY_SIZE(bits); i++)
		if (chance(6))
			flags |= bits[i];
	if (chance(4))
		flags |= 1 << below(32);
	if (chance(16))
		mode = (int)rnd();
	set = open_oracle(t, flags);
	snprintf(w.what, sizeof(w.what), "openat(root, \"%s\", %#o, %#o)",
		 path, flags, mode);
	errno = 0;
	fd = openat(w.root, path, flags, mode);
	judge(C_OPEN, set, fd, errno);
	if (fd >= 0)
		close(fd);
	if (t == T_NEW)
		unlinkat(w.root, path, 0);
	check_unchanged("open", w.A);
}

/* ---- setup -------------------------------------------------------------- */

static int reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags | O_CLOEXEC);
}

static int backing_file(const char *dir, int flags, unsigned long size)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/fuzz-%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, size)) {
		close(fd);
		unlink(path);
		return -1;
	}
	if ((flags & O_ACCMODE) != O_RDWR) {
		int fd2 = open(path, flags | O_CLOEXEC);

		close(fd);
		fd = fd2;
	}
	unlink(path);
	return fd;
}

static void setup_fds(void)
{
	int fd, pfd[2];
	struct fdk *f;

	w.R.name = "R";
	w.R.size = w.A;
	w.U.name = "U";
	fd = mshare_region_create(w.root, "R", 0600, w.A);
	w.rw = add_fd("R(rw)", fd, K_REGION, true, true, &w.R);
	add_fd("R(ro)", openat(w.root, "R", O_RDONLY | O_CLOEXEC), K_REGION,
	       true, false, &w.R);
	add_fd("R(wo)", openat(w.root, "R", O_WRONLY | O_CLOEXEC), K_REGION,
	       false, true, &w.R);
	/* O_ACCMODE 3: neither read nor write, ioctl only. */
	add_fd("R(mode3)", openat(w.root, "R", O_ACCMODE | O_CLOEXEC),
	       K_REGION, false, false, &w.R);
	add_fd("R(O_PATH)", openat(w.root, "R", O_PATH | O_CLOEXEC), K_OPATH,
	       false, false, NULL);
	fd = mshare_region_create(w.root, "U", 0600, 0);
	w.u = add_fd("U(rw)", fd, K_REGION, true, true, &w.U);
	add_fd("root", openat(w.root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	       K_DIR, true, false, NULL);
	add_fd("mshare_info", openat(w.root, INFO_NAME, O_RDONLY | O_CLOEXEC),
	       K_INFO, true, false, NULL);
	fd = memfd_sized("fuzz", MFD_CLOEXEC, FILE_SIZE);
	add_fd("memfd(rw)", fd, K_MEMFD, true, true, NULL);
	add_fd("memfd(ro)", reopen(fd, O_RDONLY), K_MEMFD, true, false, NULL);
	add_fd("tmpfs(wo)", backing_file("/tmp", O_WRONLY, FILE_SIZE),
	       K_TMPFS, false, true, NULL);
	add_fd("disk(rw)", backing_file("/mnt/disk", O_RDWR, FILE_SIZE),
	       K_DISK, true, true, NULL);
	add_fd("hugetlbfs(rw)", backing_file("/dev/hugepages", O_RDWR,
					     HUGE_SIZE), K_HUGE, true, true,
	       NULL);
	if (!pipe2(pfd, O_CLOEXEC)) {
		add_fd("pipe", pfd[0], K_PIPE, true, false, NULL);
		close(pfd[1]);
	}
	add_fd("/dev/null", open("/dev/null", O_RDWR | O_CLOEXEC), K_CHR,
	       true, true, NULL);
	fd = dup(0);
	close(fd);
	add_fd("closed", fd, K_BAD, false, false, NULL);
	add_fd("-1", -1, K_BAD, false, false, NULL);
	add_fd("INT_MAX", INT_MAX, K_BAD, false, false, NULL);
	/* Backings that could not be made (no such file system) are bad. */
	for (f = w.fds; f < w.fds + w.nfds; f++)
		if (f->fd < 0 && f->kind != K_BAD) {
			ksft_print_msg("no %s: %s\n", f->name, strerror(errno));
			f->kind = K_BAD;
		}
}

static void setup_world(struct __test_metadata *_metadata)
{
	struct sigaction sa = { .sa_handler = probe_handler };
	char *r;

	w.A = read_align();
	ASSERT_NE(0UL, w.A);
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	memcpy(w.dir, MNT_TEMPLATE, sizeof(MNT_TEMPLATE));
	ASSERT_NE(NULL, mkdtemp(w.dir));
	ASSERT_EQ(0, mount("msharefs", w.dir, "msharefs", 0, NULL));
	w.root = open(w.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, w.root);
	setup_fds();
	ASSERT_LE(0, w.rw->fd);
	ASSERT_LE(0, w.u->fd);
	w.P = mmap(NULL, w.A, PROT_READ | PROT_WRITE, MAP_SHARED, w.rw->fd, 0);
	ASSERT_NE(MAP_FAILED, w.P);
	/* A free aligned range, for MAP_FIXED. */
	r = mmap(NULL, 2 * w.A, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	w.free_at = ((unsigned long)r + w.A - 1) & ~(w.A - 1);
	munmap(r, 2 * w.A);
	w.rbuf = malloc(65536);
	ASSERT_NE(NULL, w.rbuf);
	w.ro_page = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_NE(MAP_FAILED, w.ro_page);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));
	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	if (!s || !*s)
		return def;
	if (!strcmp(s, "random")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		return ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^ getpid();
	}
	return strtoull(s, NULL, 0);
}

FIXTURE(fuzz) {
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, calls, 600)
{
	void (*const fuzz[NCALLS])(void) = {
		fuzz_create, fuzz_unmap, fuzz_ioctl, fuzz_mmap, fuzz_ftruncate,
		fuzz_fallocate, fuzz_read, fuzz_lseek, fuzz_write, fuzz_open,
	};
	/* Weights: mostly the ioctls, whose oracle is the richest. */
	static const int weight[NCALLS] = { 8, 4, 2, 4, 2, 2, 2, 1, 1, 3 };
	uint64_t seed = env_u64("MSHARE_FUZZ_SEED", FUZZ_SEED);
	uint64_t iters = env_u64("MSHARE_FUZZ_ITERS", FUZZ_ITERS);
	struct timespec t0, t1;
	int c, total = 0, k;
	double secs;

	if (geteuid())
		SKIP(return, "needs root");
	if (!is_msharefs(MSHARE_DIR))
		SKIP(return, "msharefs is not mounted on " MSHARE_DIR);
	rng_state = seed;
	ksft_print_msg("seed %#llx (MSHARE_FUZZ_SEED), %llu iterations (MSHARE_FUZZ_ITERS)\n",
		       (unsigned long long)seed, (unsigned long long)iters);
	setup_world(_metadata);
	for (c = 0; c < NCALLS; c++)
		total += weight[c];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (w.iter = 0; w.iter < iters; w.iter++) {
		k = (int)below(total);
		for (c = 0; k >= weight[c]; c++)
			k -= weight[c];
		fuzz[c]();
		if (w.iter % 64 == 63)
			check_all("64 calls");
		if (w.iter % 500 == 499 || w.anon_bytes > (1UL << 38))
			reset_objects();
		if (w.bad > MAX_BAD)
			break;
	}
	check_all("the end");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	for (c = 0; c < NCALLS; c++)
		ksft_print_msg("%-10s %6lu calls, %6lu succeeded\n",
			       call_name[c], w.calls[c], w.oks[c]);
	ksft_print_msg("%lu iterations in %.1f s, seed %#llx: %lu bad\n",
		       w.iter, secs, (unsigned long long)seed, w.bad);
	munmap(w.P, w.A);
	ASSERT_EQ(0UL, w.bad)
		TH_LOG("rerun with MSHARE_FUZZ_SEED=%#llx MSHARE_FUZZ_ITERS=%lu",
		       (unsigned long long)seed, w.iter + 1);
}

TEST_HARNESS_MAIN
