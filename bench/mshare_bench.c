// SPDX-License-Identifier: GPL-2.0
/*
 * mshare_bench: N processes attach a populated region and read one byte
 * of every 4 KiB page of it, with an msharefs region, a plain MAP_SHARED
 * memfd, a hugetlbfs file mapped at a 1 GiB-aligned address (where the
 * kernel's own PMD-table sharing applies), or a memfd in transparent huge
 * pages (shmem_enabled=advise and MADV_HUGEPAGE on every mapping, the
 * peer most users would pick first), or an msharefs region whose object is
 * in transparent huge pages (MADV_HUGEPAGE through the populating
 * attachment: the region's objects are shmem). For each kind, size and N it
 * measures, while all N are attached: the rise of PageTables (total, per
 * process, and per process beyond an idle process: N children that map
 * nothing are measured the same way first), VmPTE, minor faults per
 * process, the wall time from the first fork until all N have touched
 * everything, the time for all of them to exit and be reaped, and free
 * memory. Prints "csv,..." lines and, with --table, a table.
 *
 *   mshare_bench [--kinds none,mshare,memfd,hugetlb,thp,mshare-thp] [--procs 1,16,256]
 *                [--sizes 64M,1G] [--table] [--guard-kb KB]
 *                [--plain-budget-gib G] [--budget-gib G] [--oom]
 *                [--cgroup DIR]
 *
 * --guard-kb: stop forking while MemAvailable, less what the children in
 *   flight will still take, is below KB: the run reports how far it got.
 * --plain-budget-gib: skip memfd points whose N x size exceeds G GiB (the
 *   slow part under emulation); the CSV says "skipped". --budget-gib:
 *   the same for the other kinds.
 * --oom: children may be OOM-killed (oom_score_adj 0), this process not
 *   (-1000); a killed child stops the run (children still on their way
 *   are killed too), which reports how far it got.
 * --cgroup DIR: children are created in cgroup DIR (clone3 with
 *   CLONE_INTO_CGROUP), e.g. one with memory.max; this process stays out
 *   of it, so that it can always fork, watch and clean up.
 */
#include "bench.h"
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/sched.h>

#define MAX_LIST	16
#define MAX_INFLIGHT	32
#define PROGRESS_SEC	10

struct opts {
	int kinds[MAX_LIST], nkinds;
	long procs[MAX_LIST];
	int nprocs;
	unsigned long sizes[MAX_LIST];
	int nsizes;
	int table, oom, cgroup_fd;
	long guard_kb;
	double plain_budget_gib, budget_gib;
};

/* A populated object of one kind that children attach. */
struct backing {
	int kind;
	unsigned long size;
	int fd;
	char path[128];
	pid_t keeper;		/* hugetlb: holds a populated mapping */
	int keeper_pipe;
	long huge_restore;
	char thp_restore[16];	/* thp: shmem_enabled before, or "" */
	double populate_s;
};

/* What a child tells the parent once it has touched everything. */
struct report {
	int idx;
	int err;
	long minflt;
	long sys_us;		/* kernel CPU time, attach + touch */
};

/* One measured point. */
struct result {
	int kind;
	unsigned long size;
	long procs, reached, killed;
	long pt_kb, vmpte_kb, flt_avg, flt_max, sys_us;
	long free_during_kb, free_after_kb;
	double attach_s, teardown_s;
	double extra_kb;	/* page tables per process beyond idle */
	double idle_teardown_s;	/* what as many idle processes took */
	const char *status;
};

static struct result results[MAX_LIST * MAX_LIST * K_NKINDS];
static int nresults;

static void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* ---------------------------------------------------------------- */
/* Backings                                                           */
/* ---------------------------------------------------------------- */

static void *attach(const struct backing *b)
{
	void *p;
	int fd;

	switch (b->kind) {
	case K_MSHARE:
	case K_MSHARE_THP:
		fd = open(b->path, O_RDWR);
		if (fd < 0)
			return MAP_FAILED;
		p = mshare_attach(fd, NULL, PROT_READ | PROT_WRITE, 0);
		close(fd);
		return p;
	case K_MEMFD:
		return mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    b->fd, 0);
	case K_HUGETLB:
		return map_gib_aligned(b->fd, b->size, PROT_READ | PROT_WRITE);
	case K_THP:
		/* Aligned, so that every 2 MiB of the file can be a PMD. */
		p = map_gib_aligned(b->fd, b->size, PROT_READ | PROT_WRITE);
		if (p != MAP_FAILED && madvise(p, b->size, MADV_HUGEPAGE)) {
			munmap(p, b->size);
			return MAP_FAILED;
		}
		return p;
	}
	return MAP_FAILED;
}

static void detach(const struct backing *b, void *p)
{
	munmap(p, b->kind == K_MSHARE || b->kind == K_MSHARE_THP ?
		  mshare_alignment(NULL) : b->size);
}

/* Hugetlb: a process that keeps the file mapped and populated. */
static int start_keeper(struct backing *b)
{
	int pfd[2], rel[2];
	char c = 0;
	char *p;

	if (pipe(pfd) || pipe(rel))
		return -1;
	b->keeper = fork();
	if (b->keeper < 0)
		return -1;
	if (!b->keeper) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		close(rel[1]);
		p = attach(b);
		if (p != MAP_FAILED) {
			touch_write(p, b->size);
			c = 1;
		}
		write_full(pfd[1], &c, 1);
		while (read(rel[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(pfd[1]);
	close(rel[0]);
	b->keeper_pipe = rel[1];
	if (read_full(pfd[0], &c, 1) || !c)
		c = 0;
	close(pfd[0]);
	return c ? 0 : -1;
}

/*
 * Shmem in transparent huge pages where a mapping asks for them: save the
 * selected shmem_enabled mode in @old and select "advise".
 */
static int thp_advise(char *old, size_t len)
{
	char buf[128], *a, *e;
	int fd = open(THP_SHMEM, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	a = strchr(buf, '[');
	e = a ? strchr(a, ']') : NULL;
	if (!e || (size_t)(e - a) > len)
		return -1;
	memcpy(old, a + 1, e - a - 1);
	old[e - a - 1] = '\0';
	return write_file(THP_SHMEM, "advise\n");
}

/* Create and populate a @size object of @kind; 0 or -1. */
static int backing_setup(struct backing *b, int kind, unsigned long size)
{
	double t = now_sec();
	char *p;

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->size = size;
	b->fd = -1;
	b->keeper = -1;
	b->huge_restore = -1;
	switch (kind) {
	case K_MSHARE_THP:
		if (thp_advise(b->thp_restore, sizeof(b->thp_restore)))
			return -1;
		/* fall through */
	case K_MSHARE:
		snprintf(b->path, sizeof(b->path), MSHARE_DIR "/bench-%d",
			 getpid());
		b->fd = region_create(b->path);
		if (b->fd < 0 || mshare_map_anon(b->fd, 0, size))
			return -1;
		break;
	case K_THP:
		if (thp_advise(b->thp_restore, sizeof(b->thp_restore)))
			return -1;
		/* fall through */
	case K_MEMFD:
		b->fd = memfd_create("bench", 0);
		if (b->fd < 0 || ftruncate(b->fd, size))
			return -1;
		break;
	case K_HUGETLB:
		b->huge_restore = hugepages_reserve(size / HPAGE);
		if (b->huge_restore < 0) {
			errno = ENOMEM;
			return -1;
		}
		snprintf(b->path, sizeof(b->path), HUGE_DIR "/bench-%d",
			 getpid());
		b->fd = open(b->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (b->fd < 0 || ftruncate(b->fd, size))
			return -1;
		if (start_keeper(b))
			return -1;
		b->populate_s = now_sec() - t;
		return 0;
	default:
		return 0;
	}
	p = attach(b);
	if (p == MAP_FAILED)
		return -1;
	/* For every sharer: the advice goes to the region's object. */
	if (kind == K_MSHARE_THP && madvise(p, size, MADV_HUGEPAGE)) {
		detach(b, p);
		return -1;
	}
	touch_write(p, size);
	detach(b, p);
	b->populate_s = now_sec() - t;
	return 0;
}

static void backing_free(struct backing *b)
{
	if (b->keeper > 0) {
		close(b->keeper_pipe);
		waitpid(b->keeper, NULL, 0);
	}
	if (b->fd >= 0)
		close(b->fd);
	if (b->path[0])
		unlink(b->path);
	hugepages_restore(b->huge_restore);
	if (b->thp_restore[0])
		write_file(THP_SHMEM, "%s\n", b->thp_restore);
}

/* ---------------------------------------------------------------- */
/* One run: N children attach and touch                               */
/* ---------------------------------------------------------------- */

static void child(const struct backing *b, int idx, int oom,
		  const int rep[2], const int rel[2])
{
	struct rusage r0, r1;
	struct report r = { .idx = idx };
	char c;
	void *p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(rep[0]);
	close(rel[1]);
	if (oom)
		write_file("/proc/self/oom_score_adj", "0\n");
	warm_stack();
	getrusage(RUSAGE_SELF, &r0);
	getrusage(RUSAGE_SELF, &r0);
	if (b->kind != K_NONE) {
		p = attach(b);
		if (p == MAP_FAILED)
			r.err = errno;
		else
			touch_read(p, b->size);
	}
	getrusage(RUSAGE_SELF, &r1);
	r.minflt = r1.ru_minflt - r0.ru_minflt;
	r.sys_us = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1000000L +
		   r1.ru_stime.tv_usec - r0.ru_stime.tv_usec;
	write_full(rep[1], &r, sizeof(r));
	while (read(rel[0], &c, 1) > 0)
		;
	_exit(0);
}

/* What one run keeps about its children. */
struct kids {
	pid_t *pid;
	/* 0 forked, 1 reported, 2 died early, 3 failed, 4 cancelled */
	char *state;
	long forked, reported, dead, ok;
	long flt_sum, flt_max, sys_sum, nflt;
};

static long kid_index(const struct kids *k, pid_t pid)
{
	long i;

	for (i = 0; i < k->forked; i++)
		if (k->pid[i] == pid)
			return i;
	return -1;
}

/* Reap children that died before they were released: OOM kills. */
static void reap_early(struct kids *k)
{
	pid_t pid;
	long i;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		i = kid_index(k, pid);
		if (i < 0)
			continue;
		k->pid[i] = -1;
		if (k->state[i] == 4)
			continue;
		if (k->state[i] == 1)
			k->ok--;
		else if (k->state[i] == 0)
			k->reported++;	/* it never will: count it done */
		k->state[i] = 2;
		k->dead++;
	}
}

/* May another child be forked without running out of memory? */
static int memory_ok(const struct opts *o, const struct backing *b,
		     const struct kids *k)
{
	long est = 256, avail;

	if (!o->guard_kb)
		return 1;
	if (b->kind == K_MEMFD)
		est += b->size / 512 / KIB;
	avail = meminfo_kb_fast("MemAvailable");
	return avail - (k->forked - k->reported + 1) * est >= o->guard_kb;
}

static void progress(const struct result *res, const struct kids *k,
		     double t0, double *last)
{
	double t = now_sec();

	if (t - *last < PROGRESS_SEC)
		return;
	*last = t;
	msg("# ... %s %lu MiB: %ld/%ld attached and touched, %.0f s\n",
	    kind_names[res->kind], res->size >> 20, k->ok, res->procs,
	    t - t0);
}

static void read_report(const struct backing *b, int fd, struct kids *k)
{
	struct report r;

	if (read_full(fd, &r, sizeof(r)) || r.idx < 0 || r.idx >= k->forked)
		return;
	if (k->state[r.idx] != 0)
		return;
	k->state[r.idx] = r.err ? 3 : 1;
	k->reported++;
	if (r.err) {
		msg("# %s child %d: attach failed: %s\n",
		    kind_names[b->kind], r.idx, strerror(r.err));
		return;
	}
	k->ok++;
	k->flt_sum += r.minflt;
	k->sys_sum += r.sys_us;
	k->nflt++;
	if (r.minflt > k->flt_max)
		k->flt_max = r.minflt;
}

/*
 * After an OOM kill, children still on their way would only provoke
 * more: stop them.
 */
static void cancel_inflight(struct kids *k)
{
	long i;

	for (i = 0; i < k->forked; i++) {
		if (k->state[i] != 0 || k->pid[i] <= 0)
			continue;
		kill(k->pid[i], SIGKILL);
		k->state[i] = 4;
		k->reported++;
	}
}

/* fork(), or straight into cgroup @cgroup_fd if >= 0. */
static pid_t fork_child(int cgroup_fd)
{
	struct clone_args ca = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)cgroup_fd,
	};

	if (cgroup_fd < 0)
		return fork();
	return syscall(SYS_clone3, &ca, sizeof(ca));
}

/* Fork children (few in flight at a time) until N or a stop; wait. */
static void start_children(const struct opts *o, const struct backing *b,
			   struct result *res, struct kids *k, int rep[2],
			   int rel[2])
{
	double t0 = now_sec(), last = t0;
	struct pollfd pfd = { .fd = rep[0], .events = POLLIN };
	int stop = 0;
	pid_t pid;

	while (k->reported < k->forked || (!stop && k->forked < res->procs)) {
		while (!stop && k->forked < res->procs &&
		       k->forked - k->reported < MAX_INFLIGHT) {
			if (k->dead || k->reported > k->ok + k->dead) {
				res->status = k->dead ? "killed" :
					      "attach-failed";
				stop = 1;
				if (k->dead)
					cancel_inflight(k);
				break;
			}
			if (!memory_ok(o, b, k)) {
				res->status = "memavail";
				stop = 1;
				break;
			}
			fflush(NULL);
			pid = fork_child(o->cgroup_fd);
			if (pid < 0) {
				res->status = "fork-failed";
				stop = 1;
				break;
			}
			if (!pid)
				child(b, k->forked, o->oom, rep, rel);
			k->state[k->forked] = 0;
			k->pid[k->forked++] = pid;
		}
		if (k->reported >= k->forked && (stop || k->forked >= res->procs))
			break;
		if (poll(&pfd, 1, 500) > 0)
			read_report(b, rep[0], k);
		else
			reap_early(k);
		if (o->oom)
			reap_early(k);
		if (k->dead && !stop) {
			res->status = "killed";
			stop = 1;
		}
		if (stop && k->dead)
			cancel_inflight(k);
		progress(res, k, t0, &last);
	}
}

static void measure_alive(struct result *res, const struct kids *k)
{
	long i, n = 0, sum = 0, kb;

	for (i = 0; i < k->forked; i++) {
		if (k->state[i] != 1)
			continue;
		kb = vmpte_kb(k->pid[i]);
		if (kb >= 0) {
			sum += kb;
			n++;
		}
	}
	res->vmpte_kb = n ? sum / n : -1;
}

/* All children exit: release them and reap them. */
static void teardown(struct result *res, struct kids *k, int rel_w)
{
	double t0 = now_sec(), last = t0, t;
	long i, left = 0;

	for (i = 0; i < k->forked; i++)
		left += k->pid[i] > 0;
	close(rel_w);
	for (i = 0; i < k->forked; i++) {
		if (k->pid[i] <= 0)
			continue;
		waitpid(k->pid[i], NULL, 0);
		left--;
		t = now_sec();
		if (t - last >= PROGRESS_SEC) {
			last = t;
			msg("# ... %s: tearing down, %ld left, %.0f s\n",
			    kind_names[res->kind], left, t - t0);
		}
	}
	res->teardown_s = now_sec() - t0;
}

static void run(const struct opts *o, const struct backing *b,
		struct result *res)
{
	struct kids k = { 0 };
	int rep[2], rel[2];
	long pt0;
	double t0;

	k.pid = calloc(res->procs, sizeof(*k.pid));
	k.state = calloc(res->procs, 1);
	if (!k.pid || !k.state || pipe(rep) || pipe(rel))
		die("run setup");
	res->status = "ok";
	pt0 = meminfo_kb("PageTables");
	t0 = now_sec();
	start_children(o, b, res, &k, rep, rel);
	res->attach_s = now_sec() - t0;
	res->pt_kb = meminfo_kb("PageTables") - pt0;
	res->free_during_kb = meminfo_kb("MemFree");
	res->reached = k.ok;
	res->killed = k.dead;
	/* Averages over every child that got there, killed later or not. */
	res->flt_avg = k.nflt ? k.flt_sum / k.nflt : 0;
	res->flt_max = k.flt_max;
	res->sys_us = k.nflt ? k.sys_sum / k.nflt : 0;
	measure_alive(res, &k);
	if (res->reached < res->procs && !strcmp(res->status, "ok"))
		res->status = "incomplete";
	close(rep[0]);
	close(rep[1]);
	close(rel[0]);
	teardown(res, &k, rel[1]);
	res->free_after_kb = meminfo_kb("MemFree");
	free(k.pid);
	free(k.state);
}

/* ---------------------------------------------------------------- */
/* Output                                                             */
/* ---------------------------------------------------------------- */

static void csv_header(void)
{
	msg("csv,kind,size_mib,procs,reached,killed,pt_total_kb,pt_per_proc_kb,pt_extra_per_proc_kb,vmpte_kb,minflt_avg,minflt_max,attach_touch_s,teardown_s,memfree_during_mib,memfree_after_mib,status,sys_ms_per_proc,idle_teardown_s\n");
}

static void csv_row(const struct result *r)
{
	long n = r->reached + r->killed;

	msg("csv,%s,%lu,%ld,%ld,%ld,%ld,%.1f,%.1f,%ld,%ld,%ld,%.3f,%.3f,%ld,%ld,%s,%.2f,%.3f\n",
	    kind_names[r->kind], r->size >> 20, r->procs, r->reached,
	    r->killed, r->pt_kb, n ? (double)r->pt_kb / n : 0.0,
	    r->extra_kb, r->vmpte_kb, r->flt_avg, r->flt_max, r->attach_s,
	    r->teardown_s, r->free_during_kb / 1024, r->free_after_kb / 1024,
	    r->status, r->sys_us / 1000.0, r->idle_teardown_s);
}

/* The result of @kind for the same size and N as @r, if it completed. */
static const struct result *peer(const struct result *r, int kind)
{
	int i;

	for (i = 0; i < nresults; i++)
		if (results[i].kind == kind && results[i].size == r->size &&
		    results[i].procs == r->procs &&
		    !strcmp(results[i].status, "ok"))
			return &results[i];
	return NULL;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* One line per comparison the issue sets a target for. */
static void compare(const struct result *m)
{
	const struct result *p = peer(m, K_MEMFD), *h = peer(m, K_HUGETLB);

	msg("\nmshare, %lu MiB x %ld processes:\n", m->size >> 20, m->procs);
	msg("  page tables beyond an idle process: %.1f KiB each (target <= 8)\n",
	    m->extra_kb);
	if (p)
		msg("    plain memfd: %.1f KiB each\n", p->extra_kb);
	msg("  minor faults to reach all of it: %ld at most (target <= 2)\n",
	    m->flt_max);
	if (p)
		msg("  attach+touch: %.1fx faster than plain memfd (target >= 20)\n",
		    ratio(p->attach_s, m->attach_s));
	if (h)
		msg("  attach+touch: %.2fx the speed of hugetlbfs (target >= 1)\n",
		    ratio(h->attach_s, m->attach_s));
	if (p)
		msg("  kernel CPU time per process: %.1f ms, plain memfd %.1f ms (%.0fx)\n",
		    m->sys_us / 1000.0, p->sys_us / 1000.0,
		    ratio(p->sys_us, m->sys_us));
	if (p)
		msg("  teardown: %.1fx faster than plain memfd (target >= 20);"
		    " beyond exiting as many idle processes: %.2f s vs %.2f s\n",
		    ratio(p->teardown_s, m->teardown_s),
		    m->teardown_s - m->idle_teardown_s,
		    p->teardown_s - p->idle_teardown_s);
	if (h)
		msg("  teardown: %.2fx the speed of hugetlbfs\n",
		    ratio(h->teardown_s, m->teardown_s));
}

static void table(void)
{
	const struct result *r;
	char flt[32];
	int i;

	msg("\n%-10s %5s %5s %8s %8s %8s %6s %13s %8s %8s %8s %7s  %s\n",
	    "kind", "size", "procs", "PT total", "PT/proc", "beyond", "VmPTE",
	    "faults/proc", "sys ms", "attach+", "teardown", "MemFree", "");
	msg("%-10s %5s %5s %8s %8s %8s %6s %13s %8s %8s %8s %7s  %s\n",
	    "", "MiB", "", "MiB", "KiB", "idle KiB", "KiB", "avg (max)",
	    "/proc (1)", "touch s", "s", "MiB (2)", "");
	for (i = 0; i < nresults; i++) {
		r = &results[i];
		if (!strcmp(r->status, "skipped") ||
		    !strcmp(r->status, "setup-failed")) {
			msg("%-10s %5lu %5ld  %s\n", kind_names[r->kind],
			    r->size >> 20, r->procs, r->status);
			continue;
		}
		snprintf(flt, sizeof(flt), "%ld (%ld)", r->flt_avg,
			 r->flt_max);
		msg("%-10s %5lu %5ld %8.1f %8.1f %8.1f %6ld %13s %8.1f %8.2f %8.2f %7ld  %s\n",
		    kind_names[r->kind], r->size >> 20, r->procs,
		    r->pt_kb / 1024.0,
		    r->reached ? (double)r->pt_kb / (r->reached + r->killed) : 0,
		    r->extra_kb, r->vmpte_kb, flt, r->sys_us / 1000.0,
		    r->attach_s, r->teardown_s, r->free_during_kb / 1024,
		    strcmp(r->status, "ok") ? r->status : "");
	}
	msg("(1) kernel CPU time per process to attach and read everything\n");
	msg("(2) free memory while all of them are attached\n");
	for (i = 0; i < nresults; i++)
		if (results[i].kind == K_MSHARE &&
		    !strcmp(results[i].status, "ok"))
			compare(&results[i]);
}

/* ---------------------------------------------------------------- */
/* Main                                                               */
/* ---------------------------------------------------------------- */

static int split(char *s, char **out)
{
	int n = 0;

	for (s = strtok(s, ","); s && n < MAX_LIST; s = strtok(NULL, ","))
		out[n++] = s;
	return n;
}

static void parse(int argc, char **argv, struct opts *o)
{
	char *items[MAX_LIST];
	int i, j, n;

	memset(o, 0, sizeof(*o));
	o->cgroup_fd = -1;
	o->kinds[0] = K_MSHARE;
	o->kinds[1] = K_MEMFD;
	o->kinds[2] = K_HUGETLB;
	o->nkinds = 3;
	o->procs[0] = 256;
	o->nprocs = 1;
	o->sizes[0] = GIB;
	o->nsizes = 1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--table")) {
			o->table = 1;
			continue;
		}
		if (!strcmp(a, "--oom")) {
			o->oom = 1;
			continue;
		}
		if (!v)
			goto usage;
		i++;
		if (!strcmp(a, "--kinds")) {
			n = split(v, items);
			for (o->nkinds = j = 0; j < n; j++) {
				o->kinds[o->nkinds] = kind_parse(items[j]);
				if (o->kinds[o->nkinds] < 0)
					goto usage;
				o->nkinds++;
			}
		} else if (!strcmp(a, "--procs")) {
			n = split(v, items);
			for (o->nprocs = j = 0; j < n; j++)
				o->procs[o->nprocs++] = atol(items[j]);
		} else if (!strcmp(a, "--sizes")) {
			n = split(v, items);
			for (o->nsizes = j = 0; j < n; j++)
				o->sizes[o->nsizes++] = parse_size(items[j]);
		} else if (!strcmp(a, "--guard-kb")) {
			o->guard_kb = atol(v);
		} else if (!strcmp(a, "--plain-budget-gib")) {
			o->plain_budget_gib = atof(v);
		} else if (!strcmp(a, "--cgroup")) {
			o->cgroup_fd = open(v, O_RDONLY | O_DIRECTORY);
			if (o->cgroup_fd < 0)
				die("%s", v);
		} else if (!strcmp(a, "--budget-gib")) {
			o->budget_gib = atof(v);
		} else {
			goto usage;
		}
	}
	return;
usage:
	fprintf(stderr, "usage: %s [--kinds none,mshare,memfd,hugetlb,thp,mshare-thp] [--procs N,..] [--sizes 64M,1G,..] [--table] [--guard-kb KB] [--plain-budget-gib G] [--budget-gib G] [--oom] [--cgroup DIR]\n",
		argv[0]);
	exit(2);
}

/* Is N x size beyond what the options allow for @kind? */
static int over_budget(const struct opts *o, int kind, long procs,
		       unsigned long size)
{
	double gib = (double)procs * size / GIB;
	double max = kind == K_MEMFD ? o->plain_budget_gib : o->budget_gib;

	return max > 0 && gib > max;
}

/* Run every N for one populated backing. */
static void run_kind(const struct opts *o, int kind, unsigned long size,
		     const double *idle_kb, const double *idle_td)
{
	struct backing b;
	struct result *r;
	int i, ok;

	ok = !backing_setup(&b, kind, size);
	if (ok)
		msg("# %s %lu MiB: populated in %.1f s, ShmemHugePages %ld MiB\n",
		    kind_names[kind], size >> 20, b.populate_s,
		    meminfo_kb_fast("ShmemHugePages") / 1024);
	else
		msg("# %s %lu MiB: setup failed: %s\n", kind_names[kind],
		    size >> 20, strerror(errno));
	for (i = 0; i < o->nprocs; i++) {
		r = &results[nresults++];
		memset(r, 0, sizeof(*r));
		r->kind = kind;
		r->size = size;
		r->procs = o->procs[i];
		if (!ok) {
			r->status = "setup-failed";
		} else if (over_budget(o, kind, r->procs, size)) {
			r->status = "skipped";
		} else {
			msg("# %s %lu MiB, %ld processes ...\n",
			    kind_names[kind], size >> 20, r->procs);
			run(o, &b, r);
			if (r->reached + r->killed)
				r->extra_kb = (double)r->pt_kb /
					(r->reached + r->killed) - idle_kb[i];
			if (r->extra_kb > -0.05 && r->extra_kb < 0.05)
				r->extra_kb = 0;
			r->idle_teardown_s = idle_td[i];
		}
		csv_row(r);
	}
	backing_free(&b);
}

int main(int argc, char **argv)
{
	double idle_kb[MAX_LIST], idle_td[MAX_LIST];
	struct backing none = { .kind = K_NONE, .fd = -1 };
	struct opts o;
	int s, i, k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &o);
	if (o.oom)
		write_file("/proc/self/oom_score_adj", "-1000\n");
	csv_header();
	for (s = 0; s < o.nsizes; s++) {
		/* The idle baseline: N processes that map nothing. */
		for (i = 0; i < o.nprocs; i++) {
			struct result *r = &results[nresults++];

			memset(r, 0, sizeof(*r));
			r->kind = K_NONE;
			r->size = o.sizes[s];
			r->procs = o.procs[i];
			run(&o, &none, r);
			idle_kb[i] = r->reached ?
				(double)r->pt_kb / r->reached : 0;
			idle_td[i] = r->teardown_s;
			csv_row(r);
		}
		for (k = 0; k < o.nkinds; k++)
			if (o.kinds[k] != K_NONE)
				run_kind(&o, o.kinds[k], o.sizes[s], idle_kb,
					 idle_td);
	}
	if (o.table)
		table();
	return 0;
}
