// SPDX-License-Identifier: GPL-2.0
/*
 * change_bench: what a change to shared memory costs when many processes
 * share it, against plain MAP_SHARED memory and against threads (issue 14).
 * N is the number of processes (threads) that map the object, the one
 * that measures included; the others are forked from it and keep its
 * mapping (an msharefs attachment, a memfd mapping) or are its threads.
 *
 *   change_bench change [--procs 1,16,256,1000,1500] [--rounds 200]
 *                       [--kinds mshare,memfd,threads] [--states sleep,spin]
 *                       [--max-sec 30]
 *	The measurer, on CPU 0, changes a 2 MiB object ROUNDS times and
 *	touches one byte of it: mshare MSHAREFS_UNMAP + MSHAREFS_CREATE_MAPPING,
 *	memfd fallocate(PUNCH_HOLE), threads munmap + mmap(MAP_SHARED |
 *	MAP_ANONYMOUS | MAP_FIXED) in the shared mm. The other N - 1 sleep in
 *	pause() or spin reading another 64 KiB object of the same region
 *	(memfd, mapping), pinned round-robin to CPUs 1..; with 4 vCPUs only
 *	3 of them run at a time. Per change: median and 90th percentile in
 *	us, and the TLB + CAL interrupts of /proc/interrupts (all CPUs).
 *	A point stops after MAX_SEC s of rounds (at least 20 rounds): the
 *	rounds column says how many it made.
 *   change_bench reclaim [--procs 1,16,64,256] [--size 256M]
 *                        [--methods pageout,memcg] [--kinds mshare,memfd]
 *	A populated object that all N have read is reclaimed: pageout by
 *	MADV_PAGEOUT of the measurer's whole mapping, memcg by writing the
 *	object's size to memory.reclaim of a cgroup holding the object (it
 *	is created, sized and populated inside it), repeated while pages are
 *	left, at most 8 writes. Pages reclaimed (mincore before and after),
 *	calls made and ns per reclaimed page (time in the calls only).
 *	Object and swap: the objects are shmem (msharefs anonymous objects,
 *	memfd), which only swap can reclaim. The guest has no disk, so
 *	in-guest-change.sh makes a zram swap device (CONFIG_ZRAM=y and
 *	CONFIG_SWAP=y in the fast and before kernels); shmem against shmem
 *	is the comparison users care about, where a file-backed object on the
 *	guest's 96 MiB loop-mounted ext4 would be too small and would drop
 *	clean pages instead. Without swap nothing is reclaimed: the run says
 *	so in a comment and the CSV shows 0 pages.
 *	MADV_PAGEOUT skips folios that more than one mm maps
 *	(folio_likely_mapped_shared()): a memfd with N >= 2 mappers reclaims
 *	nothing that way, an msharefs object (mapped by the region's mm
 *	only) all of it. memcg reclaim has no such rule: it is the fair
 *	comparison with memfd.
 *   change_bench fault [--size 256M] [--reps 3] [--kinds mshare,memfd]
 *	First touch of a fresh object by 4 threads of one process and by 4
 *	processes, each writing one byte in every page of its quarter:
 *	wall-clock ns per page (from the first start to the last end) and
 *	the workers' own ns per page (mean), median of REPS.
 *
 * Prints "csv-change,...", "csv-reclaim,...", "csv-fault,..." lines.
 */
#include "bench.h"
#include <pthread.h>
#include <sched.h>

#define MAX_CPUS	64
#define MAX_LIST	16
#define MAX_ROUNDS	10000
#define MIN_ROUNDS	20
#define MAX_REPS	16
#define OBJ_A		(64UL << 10)	/* the spinning sharers read this */
#define OFF_B		HPAGE		/* the changed object */
#define OBJ_B		HPAGE
#define SPAN		(OFF_B + OBJ_B)
#define FAULT_WORKERS	4

enum ckind { C_MSHARE, C_MEMFD, C_THREADS, C_NKINDS };

static const char *const ckind_names[C_NKINDS] = {
	"mshare", "memfd", "threads",
};

static int ncpus;
static double max_sec = 30;	/* per point: fewer rounds beyond it */

static int ckind_parse(const char *s)
{
	int k;

	for (k = 0; k < C_NKINDS; k++)
		if (!strcmp(s, ckind_names[k]))
			return k;
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @pct percentile of @v (sorted in place). */
static double pctile(double *v, int n, int pct)
{
	int i;

	qsort(v, n, sizeof(*v), cmp_double);
	if (pct == 50)
		return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	i = (n * pct + 99) / 100 - 1;
	return v[i < 0 ? 0 : i];
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % ncpus, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity %d", cpu);
}

/* Sharer @i runs on CPUs 1.., the measurer alone on CPU 0. */
static void pin_sharer(int i)
{
	pin(ncpus > 1 ? 1 + i % (ncpus - 1) : 0);
}

/* TLB shootdowns and function call interrupts, all CPUs. */
static long read_ipis(void)
{
	static char line[4096];
	FILE *f = fopen("/proc/interrupts", "r");
	long sum = 0;
	char *s, *end;
	int c;

	if (!f)
		die("/proc/interrupts");
	while (fgets(line, sizeof(line), f)) {
		for (s = line; *s == ' '; s++)
			;
		if (strncmp(s, "TLB:", 4) && strncmp(s, "CAL:", 4))
			continue;
		s += 4;
		for (c = 0; c < ncpus; c++, s = end)
			sum += strtol(s, &end, 10);
	}
	fclose(f);
	return sum;
}

/* "1,16,256": the numbers of a list, at most MAX_LIST. */
static int parse_list(const char *s, long *v)
{
	char *end;
	int n = 0;

	while (*s && n < MAX_LIST) {
		v[n++] = strtol(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s)
			break;
	}
	return n;
}

/* "mshare,memfd": a bit per kind. */
static unsigned int parse_kinds(const char *s)
{
	char buf[128], *k, *save;
	unsigned int mask = 0;
	int c;

	snprintf(buf, sizeof(buf), "%s", s);
	for (k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		c = ckind_parse(k);
		if (c < 0) {
			fprintf(stderr, "unknown kind %s\n", k);
			exit(2);
		}
		mask |= 1U << c;
	}
	return mask;
}

/* ---- the shared object --------------------------------------------- */

/* An object of @size bytes of one kind, mapped read-write at @p. */
struct shared {
	int kind;
	unsigned long size;
	int fd;
	char *p;
	char path[128];
};

static int shared_new(struct shared *s, int kind, unsigned long size)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->size = size;
	s->fd = -1;
	s->p = MAP_FAILED;
	switch (kind) {
	case C_MSHARE:
		snprintf(s->path, sizeof(s->path), MSHARE_DIR "/change-%d",
			 getpid());
		s->fd = region_create(s->path);
		if (s->fd < 0 || mshare_map_anon(s->fd, 0, size))
			return -1;
		s->p = mshare_attach(s->fd, NULL, PROT_READ | PROT_WRITE, 0);
		break;
	case C_MEMFD:
		s->fd = memfd_create("change", 0);
		if (s->fd < 0 || ftruncate(s->fd, size))
			return -1;
		s->p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    s->fd, 0);
		break;
	case C_THREADS:
		s->p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		break;
	}
	return s->p == MAP_FAILED ? -1 : 0;
}

static void shared_free(struct shared *s)
{
	if (s->p != MAP_FAILED)
		munmap(s->p, s->kind == C_MSHARE ? mshare_alignment(NULL) :
			     s->size);
	if (s->fd >= 0)
		close(s->fd);
	if (s->path[0])
		unlink(s->path);
}

/* The change: the object at OFF_B removed and placed anew, one touch. */
static int change_once(struct shared *s)
{
	switch (s->kind) {
	case C_MSHARE:
		if (mshare_unmap(s->fd, OFF_B, OBJ_B) ||
		    mshare_map_anon(s->fd, OFF_B, OBJ_B))
			return -1;
		break;
	case C_MEMFD:
		if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      OFF_B, OBJ_B))
			return -1;
		break;
	case C_THREADS:
		if (munmap(s->p + OFF_B, OBJ_B) ||
		    mmap(s->p + OFF_B, OBJ_B, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			return -1;
		break;
	}
	((volatile char *)s->p)[OFF_B] = 1;
	return 0;
}

/* ---- sharers: processes or threads --------------------------------- */

struct sharer_arg {
	const char *p;		/* read @len bytes, then sleep or spin on OBJ_A */
	unsigned long len;
	int spin, idx, ready;
};

static void sharer_body(const struct sharer_arg *a)
{
	unsigned long sum;

	pin_sharer(a->idx);
	sum = touch_read(a->p, a->len);
	write_full(a->ready, "r", 1);
	if (!a->spin)
		for (;;)
			pause();
	for (;;)
		sum += touch_read(a->p, OBJ_A);
}

static void *sharer_thread(void *arg)
{
	sharer_body(arg);
	return NULL;
}

/* The N - 1 sharers of the measurer, processes or threads. */
struct crowd {
	pid_t *pids;
	struct sharer_arg *args;
	int n, ready[2];
};

static int crowd_wait(struct crowd *c)
{
	char ch;
	int i;

	for (i = 0; i < c->n; i++)
		if (read_full(c->ready[0], &ch, 1))
			return -1;
	return 0;
}

static int crowd_spawn(struct crowd *c, int n, const char *p,
		       unsigned long len, int spin, int threads)
{
	pthread_attr_t attr;
	pthread_t t;
	int i;

	memset(c, 0, sizeof(*c));
	c->pids = calloc(n + 1, sizeof(*c->pids));
	c->args = calloc(n + 1, sizeof(*c->args));
	if (!c->pids || !c->args || pipe(c->ready))
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (i = 0; i < n; i++, c->n++) {
		c->args[i] = (struct sharer_arg){ p, len, spin, i,
						  c->ready[1] };
		if (threads) {
			if (pthread_create(&t, &attr, sharer_thread,
					   &c->args[i]))
				return -1;
			continue;
		}
		fflush(NULL);
		c->pids[i] = fork();
		if (c->pids[i] < 0)
			return -1;
		if (!c->pids[i]) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			sharer_body(&c->args[i]);
		}
	}
	pthread_attr_destroy(&attr);
	return crowd_wait(c);
}

/* Processes only: threads go with the process that measured. */
static void crowd_kill(struct crowd *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->pids[i] > 0)
			kill(c->pids[i], SIGKILL);
	for (i = 0; i < c->n; i++)
		if (c->pids[i] > 0)
			waitpid(c->pids[i], NULL, 0);
	if (c->pids) {
		close(c->ready[0]);
		close(c->ready[1]);
	}
	free(c->pids);
	free(c->args);
}

/* ---- change ---------------------------------------------------------- */

struct change_res {
	int rounds;
	double us_median, us_p90, ipis, bg_per_s;
};

static double us_buf[MAX_ROUNDS];

static int change_rounds(struct shared *s, int rounds, struct change_res *r)
{
	double t0, t, start;
	long i0, i1;
	int i;

	i0 = read_ipis();
	usleep(500000);
	r->bg_per_s = (read_ipis() - i0) / 0.5;
	i0 = read_ipis();
	start = now_sec();
	for (i = 0; i < rounds; i++) {
		t0 = now_sec();
		if (change_once(s))
			return -1;
		t = now_sec();
		us_buf[i] = (t - t0) * 1e6;
		if (t - start > max_sec && i + 1 >= MIN_ROUNDS)
			rounds = i + 1;
	}
	i1 = read_ipis();
	r->rounds = rounds;
	r->ipis = (double)(i1 - i0) / rounds;
	r->us_p90 = pctile(us_buf, rounds, 90);
	r->us_median = pctile(us_buf, rounds, 50);
	return 0;
}

/* Object, N - 1 sharers, rounds; in the calling process. */
static int change_point(int kind, int spin, int n, int rounds,
			struct change_res *r)
{
	struct shared s;
	struct crowd c;
	int ret = -1;

	pin(0);
	if (shared_new(&s, kind, SPAN))
		goto out;
	touch_write(s.p, SPAN);
	if (crowd_spawn(&c, n - 1, s.p, OBJ_A, spin, kind == C_THREADS))
		goto kill;
	usleep(200000);
	ret = change_rounds(&s, rounds, r);
kill:
	/* Threads still read the object: their process's exit frees it. */
	if (kind == C_THREADS)
		return ret;
	crowd_kill(&c);
out:
	shared_free(&s);
	return ret;
}

/* Threads leave with their process: measure in a child, report by pipe. */
static int change_forked(int kind, int spin, int n, int rounds,
			 struct change_res *r)
{
	int pfd[2], ok;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pfd[0]);
		if (change_point(kind, spin, n, rounds, r)) {
			fprintf(stderr, "change %s n=%d: %s\n",
				ckind_names[kind], n, strerror(errno));
			_exit(1);
		}
		write_full(pfd[1], r, sizeof(*r));
		_exit(0);
	}
	close(pfd[1]);
	ok = !read_full(pfd[0], r, sizeof(*r));
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return ok ? 0 : -1;
}

static void change_bench(const long *procs, int nprocs, int rounds,
			 unsigned int kinds, const char *states)
{
	static const char *const state_names[] = { "sleep", "spin" };
	struct change_res r;
	int k, st, i;
	double t0;

	printf("csv-change,kind,state,n,rounds,us_median,us_p90,ipis_per_change\n");
	for (st = 0; st < 2; st++) {
		if (!strstr(states, state_names[st]))
			continue;
		for (i = 0; i < nprocs; i++) {
			for (k = 0; k < C_NKINDS; k++) {
				if (!(kinds & (1U << k)))
					continue;
				t0 = now_sec();
				if (change_forked(k, st, procs[i], rounds, &r)) {
					printf("# change %s %s n=%ld failed: %s\n",
					       ckind_names[k], state_names[st],
					       procs[i], strerror(errno));
					continue;
				}
				printf("csv-change,%s,%s,%ld,%d,%.1f,%.1f,%.2f\n",
				       ckind_names[k], state_names[st],
				       procs[i], r.rounds, r.us_median,
				       r.us_p90, r.ipis);
				printf("# change %s %s n=%ld: %.1f us, %.2f IPIs per change (background %.0f/s), point took %.0f s\n",
				       ckind_names[k], state_names[st],
				       procs[i], r.us_median, r.ipis,
				       r.bg_per_s, now_sec() - t0);
			}
		}
	}
}

/* ---- reclaim --------------------------------------------------------- */

#define CGROOT	"/sys/fs/cgroup"

static int cgroup_join(const char *dir)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return write_file(path, "%d\n", getpid());
}

/* Move this process into a fresh memory cgroup, path in @dir. */
static int cgroup_enter(char *dir, size_t len)
{
	snprintf(dir, len, CGROOT "/change-bench-%d", getpid());
	write_file(CGROOT "/cgroup.subtree_control", "+memory\n");
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	return cgroup_join(dir);
}

static void cgroup_leave(const char *dir)
{
	cgroup_join(CGROOT);
	rmdir(dir);
}

/* Pages of [p, p + size) in memory, by mincore(). */
static long resident_pages(char *p, unsigned long size)
{
	unsigned long i, n = size / PAGE;
	unsigned char *vec = malloc(n);
	long res = 0;

	if (!vec || mincore(p, size, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < n; i++)
		res += vec[i] & 1;
	free(vec);
	return res;
}

static int memcg_reclaim(const char *dir, unsigned long bytes)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/memory.reclaim", dir);
	/* EAGAIN: reclaimed less than asked; mincore tells how much. */
	if (write_file(path, "%lu\n", bytes) && errno != EAGAIN)
		return -1;
	return 0;
}

#define MEMCG_TRIES	8

struct reclaim_res {
	long before, after;
	int calls;
	double sec;
};

/*
 * pageout: one MADV_PAGEOUT of the whole mapping. memcg: memory.reclaim
 * of the object's size, again while pages are left (at most MEMCG_TRIES
 * writes): folios that more than one PTE referenced are activated on
 * the first pass and reclaimed only after aging.
 */
static int reclaim_once(struct shared *s, int memcg, const char *dir,
			struct reclaim_res *r)
{
	double t0;
	int ret = 0;

	r->before = r->after = resident_pages(s->p, s->size);
	r->sec = 0;
	for (r->calls = 0; !ret && r->after > 0 &&
	     r->calls < (memcg ? MEMCG_TRIES : 1); r->calls++) {
		t0 = now_sec();
		ret = memcg ? memcg_reclaim(dir, s->size) :
			      madvise(s->p, s->size, MADV_PAGEOUT);
		r->sec += now_sec() - t0;
		r->after = resident_pages(s->p, s->size);
	}
	return ret || r->before < 0 || r->after < 0 ? -1 : 0;
}

/* Object made, populated and read by all N inside a fresh cgroup. */
static int reclaim_point(int kind, int memcg, int n, unsigned long size,
			 struct reclaim_res *r)
{
	struct shared s;
	struct crowd c;
	char dir[128];
	int ret = -1;

	if (cgroup_enter(dir, sizeof(dir)))
		return -1;
	memset(&c, 0, sizeof(c));
	if (shared_new(&s, kind, size))
		goto out;
	touch_write(s.p, size);
	if (crowd_spawn(&c, n - 1, s.p, size, 0, 0))
		goto kill;
	ret = reclaim_once(&s, memcg, dir, r);
kill:
	crowd_kill(&c);
out:
	shared_free(&s);
	cgroup_leave(dir);
	return ret;
}

static void reclaim_print(int kind, const char *method, int n,
			  unsigned long size, const struct reclaim_res *r)
{
	long got = r->before - r->after;

	printf("csv-reclaim,%s,%s,%d,%lu,%ld,%ld,%d,%.1f,%.0f\n",
	       ckind_names[kind], method, n, size >> 20, r->before, got,
	       r->calls, r->sec * 1e3, got > 0 ? r->sec * 1e9 / got : 0);
}

static void reclaim_bench(const long *procs, int nprocs, unsigned long size,
			  unsigned int kinds, const char *methods)
{
	static const char *const method_names[] = { "pageout", "memcg" };
	struct reclaim_res r;
	int k, m, i;

	if (mshare_proc_value("/proc/meminfo", "SwapTotal") <= 0)
		printf("# reclaim: no swap, shmem pages cannot be reclaimed\n");
	printf("csv-reclaim,kind,method,n,size_mib,pages,reclaimed,calls,ms,ns_per_page\n");
	for (m = 0; m < 2; m++) {
		if (!strstr(methods, method_names[m]))
			continue;
		for (i = 0; i < nprocs; i++) {
			for (k = 0; k < C_THREADS; k++) {
				if (!(kinds & (1U << k)))
					continue;
				if (reclaim_point(k, m, procs[i], size, &r)) {
					printf("# reclaim %s %s n=%ld failed: %s\n",
					       ckind_names[k], method_names[m],
					       procs[i], strerror(errno));
					continue;
				}
				reclaim_print(k, method_names[m], procs[i],
					      size, &r);
			}
		}
	}
}

/* ---- fault ----------------------------------------------------------- */

struct fault_arg {
	char *p;
	unsigned long len;
	pthread_barrier_t *go;	/* threads */
	int go_fd;		/* processes */
	int cpu;
	double start, end;
};

static void *fault_worker(void *arg)
{
	struct fault_arg *a = arg;
	char ch;

	pin(a->cpu);
	if (a->go)
		pthread_barrier_wait(a->go);
	else if (read_full(a->go_fd, &ch, 1))
		return NULL;
	a->start = now_sec();
	touch_write(a->p, a->len);
	a->end = now_sec();
	return NULL;
}

struct fault_res {
	double wall_ns, worker_ns;
};

static void fault_sum(const struct fault_arg *a, unsigned long size,
		      struct fault_res *r)
{
	double first = a[0].start, last = a[0].end, own = 0;
	int i;

	for (i = 0; i < FAULT_WORKERS; i++) {
		if (a[i].start < first)
			first = a[i].start;
		if (a[i].end > last)
			last = a[i].end;
		own += a[i].end - a[i].start;
	}
	r->wall_ns = (last - first) * 1e9 / (size / PAGE);
	r->worker_ns = own * 1e9 / (size / PAGE);
}

/* 4 threads of this process (a child of the bench) touch a quarter each. */
static int fault_threads(struct fault_arg *a)
{
	pthread_barrier_t go;
	pthread_t t[FAULT_WORKERS];
	int i;

	pthread_barrier_init(&go, NULL, FAULT_WORKERS + 1);
	for (i = 0; i < FAULT_WORKERS; i++) {
		a[i].go = &go;
		if (pthread_create(&t[i], NULL, fault_worker, &a[i]))
			return -1;
	}
	pthread_barrier_wait(&go);
	for (i = 0; i < FAULT_WORKERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	return 0;
}

/* 4 processes that inherited the mapping touch a quarter each. */
static int fault_procs(struct fault_arg *a)
{
	int go[2], res[2], i, ret = 0;
	pid_t pids[FAULT_WORKERS];

	if (pipe(go) || pipe(res))
		return -1;
	for (i = 0; i < FAULT_WORKERS; i++) {
		a[i].go_fd = go[0];
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (!pids[i]) {
			fault_worker(&a[i]);
			write_full(res[1], &a[i], sizeof(a[i]));
			_exit(0);
		}
	}
	usleep(100000);
	if (write_full(go[1], "gggg", FAULT_WORKERS))
		ret = -1;
	for (i = 0; i < FAULT_WORKERS; i++)
		if (read_full(res[0], &a[i], sizeof(a[i])))
			ret = -1;
	for (i = 0; i < FAULT_WORKERS; i++)
		waitpid(pids[i], NULL, 0);
	close(go[0]);
	close(go[1]);
	close(res[0]);
	close(res[1]);
	return ret;
}

/* One rep in a fresh child: a fresh object, 4 workers, the result. */
static int fault_child(int kind, int procs, unsigned long size,
		       struct fault_res *r)
{
	struct fault_arg a[FAULT_WORKERS];
	unsigned long q = size / FAULT_WORKERS;
	struct shared s;
	int i, ret;

	if (shared_new(&s, kind, size))
		return -1;
	memset(a, 0, sizeof(a));
	for (i = 0; i < FAULT_WORKERS; i++) {
		a[i].p = s.p + i * q;
		a[i].len = q;
		a[i].cpu = i;
	}
	ret = procs ? fault_procs(a) : fault_threads(a);
	if (!ret)
		fault_sum(a, size, r);
	shared_free(&s);
	return ret;
}

static int fault_once(int kind, int procs, unsigned long size,
		      struct fault_res *r)
{
	int pfd[2], ok;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pfd[0]);
		if (fault_child(kind, procs, size, r))
			_exit(1);
		write_full(pfd[1], r, sizeof(*r));
		_exit(0);
	}
	close(pfd[1]);
	ok = !read_full(pfd[0], r, sizeof(*r));
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return ok ? 0 : -1;
}

static void fault_bench(unsigned long size, int reps, unsigned int kinds)
{
	static const char *const modes[] = { "threads", "procs" };
	double wall[MAX_REPS], own[MAX_REPS], memfd[2] = { 0 }, w;
	struct fault_res r;
	int k, m, i, n;

	printf("csv-fault,kind,workers,n,size_mib,reps,wall_ns_per_page,worker_ns_per_page,vs_memfd\n");
	for (m = 0; m < 2; m++) {
		/* memfd first: the others are compared with it. */
		for (k = C_MEMFD; k >= C_MSHARE; k--) {
			if (!(kinds & (1U << k)))
				continue;
			for (n = i = 0; i < reps; i++)
				if (!fault_once(k, m, size, &r)) {
					wall[n] = r.wall_ns;
					own[n++] = r.worker_ns;
				}
			if (!n) {
				printf("# fault %s %s failed\n",
				       ckind_names[k], modes[m]);
				continue;
			}
			w = pctile(wall, n, 50);
			if (k == C_MEMFD)
				memfd[m] = w;
			printf("csv-fault,%s,%s,%d,%lu,%d,%.0f,%.0f,%.2f\n",
			       ckind_names[k], modes[m], FAULT_WORKERS,
			       size >> 20, n, w, pctile(own, n, 50),
			       memfd[m] ? w / memfd[m] : 0);
		}
	}
}

/* ---- main ------------------------------------------------------------ */

struct opts {
	long procs[MAX_LIST];
	int nprocs, rounds, reps;
	unsigned long size;
	unsigned int kinds;
	char states[64], methods[64];
};

static int parse_opt(struct opts *o, const char *k, const char *v)
{
	if (!strcmp(k, "--procs"))
		o->nprocs = parse_list(v, o->procs);
	else if (!strcmp(k, "--rounds"))
		o->rounds = atoi(v);
	else if (!strcmp(k, "--max-sec"))
		max_sec = atof(v);
	else if (!strcmp(k, "--reps"))
		o->reps = atoi(v);
	else if (!strcmp(k, "--size"))
		o->size = parse_size(v);
	else if (!strcmp(k, "--kinds"))
		o->kinds = parse_kinds(v);
	else if (!strcmp(k, "--states"))
		snprintf(o->states, sizeof(o->states), "%s", v);
	else if (!strcmp(k, "--methods"))
		snprintf(o->methods, sizeof(o->methods), "%s", v);
	else
		return -1;
	return 0;
}

static void opts_default(struct opts *o, const char *what)
{
	static const long change_n[] = { 1, 16, 256, 1000, 1500 };
	static const long reclaim_n[] = { 1, 16, 64, 256 };
	int i;

	if (!o->nprocs && !strcmp(what, "change"))
		for (i = 0; i < 5; i++)
			o->procs[o->nprocs++] = change_n[i];
	if (!o->nprocs)
		for (i = 0; i < 4; i++)
			o->procs[o->nprocs++] = reclaim_n[i];
	if (o->rounds <= 0 || o->rounds > MAX_ROUNDS)
		o->rounds = o->rounds > 0 ? MAX_ROUNDS : 200;
	if (o->reps <= 0 || o->reps > MAX_REPS)
		o->reps = o->reps > 0 ? MAX_REPS : 3;
	if (!o->size)
		o->size = 256UL << 20;
	if (!o->kinds)
		o->kinds = (1U << C_NKINDS) - 1;
	if (!o->states[0])
		strcpy(o->states, "sleep,spin");
	if (!o->methods[0])
		strcpy(o->methods, "pageout,memcg");
}

int main(int argc, char **argv)
{
	struct opts o;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&o, 0, sizeof(o));
	if (argc < 2 || argc % 2)
		goto usage;
	for (i = 2; i + 1 < argc; i += 2)
		if (parse_opt(&o, argv[i], argv[i + 1]))
			goto usage;
	opts_default(&o, argv[1]);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	if (!strcmp(argv[1], "change"))
		change_bench(o.procs, o.nprocs, o.rounds, o.kinds, o.states);
	else if (!strcmp(argv[1], "reclaim"))
		reclaim_bench(o.procs, o.nprocs, o.size, o.kinds, o.methods);
	else if (!strcmp(argv[1], "fault"))
		fault_bench(o.size, o.reps, o.kinds);
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr, "usage: %s change|reclaim|fault [--procs LIST] [--rounds N] [--max-sec S] [--reps N]\n"
		"       [--size BYTES] [--kinds mshare,memfd,threads] [--states sleep,spin]\n"
		"       [--methods pageout,memcg]\n", argv[0]);
	return 2;
}
