// SPDX-License-Identifier: GPL-2.0
/*
 * fault_bench: what a fault costs inside an msharefs region (the price of
 * redirecting it to the region's own mm) against a plain MAP_SHARED memfd
 * and a hugetlbfs file, and what fork and exit cost a process that has a
 * large populated attachment.
 *
 *   fault_bench touch [--size 64M] [--reps 5]
 *	a fresh process attaches a fresh, unpopulated object and writes one
 *	byte in every 4 KiB page: ns per 4 KiB page and faults (median).
 *   fault_bench fork [--size 1G] [--reps 20]
 *	a process with the object populated and attached forks a child that
 *	exits at once, and reaps it: us per fork+exit+wait (median).
 *
 * Prints "csv-touch,..." / "csv-fork,..." lines and a short table.
 */
#include "bench.h"
#include <sys/resource.h>

#define MAX_REPS	64

struct obj {
	int kind;
	unsigned long size;
	int fd;
	char path[128];
	long huge_restore;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A fresh, unpopulated object. */
static int obj_new(struct obj *o, int kind, unsigned long size)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->size = size;
	o->fd = -1;
	o->huge_restore = -1;
	switch (kind) {
	case K_MSHARE:
		snprintf(o->path, sizeof(o->path), MSHARE_DIR "/fault-%d",
			 getpid());
		o->fd = region_create(o->path);
		return o->fd < 0 ? -1 : mshare_map_anon(o->fd, 0, size);
	case K_MEMFD:
		o->fd = memfd_create("fault", 0);
		return o->fd < 0 ? -1 : ftruncate(o->fd, size);
	case K_HUGETLB:
		o->huge_restore = hugepages_reserve(size / HPAGE);
		if (o->huge_restore < 0)
			return -1;
		snprintf(o->path, sizeof(o->path), HUGE_DIR "/fault-%d",
			 getpid());
		o->fd = open(o->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		return o->fd < 0 ? -1 : ftruncate(o->fd, size);
	}
	return 0;
}

static void obj_free(struct obj *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->path[0])
		unlink(o->path);
	hugepages_restore(o->huge_restore);
}

static char *obj_map(const struct obj *o)
{
	switch (o->kind) {
	case K_MSHARE:
		return mshare_attach(o->fd, NULL, PROT_READ | PROT_WRITE, 0);
	case K_MEMFD:
		return mmap(NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    o->fd, 0);
	case K_HUGETLB:
		return map_gib_aligned(o->fd, o->size, PROT_READ | PROT_WRITE);
	}
	return MAP_FAILED;
}

struct touch_res {
	double ns_per_page;
	long faults;
};

/* A child attaches and writes every page; what it measured, or -1. */
static int touch_once(const struct obj *o, struct touch_res *res)
{
	struct rusage r0, r1;
	struct touch_res t;
	int pfd[2];
	double t0;
	pid_t pid;
	char *p;

	if (pipe(pfd))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pfd[0]);
		warm_stack();
		p = obj_map(o);
		if (p == MAP_FAILED)
			_exit(1);
		getrusage(RUSAGE_SELF, &r0);
		t0 = now_sec();
		touch_write(p, o->size);
		t.ns_per_page = (now_sec() - t0) * 1e9 / (o->size / PAGE);
		getrusage(RUSAGE_SELF, &r1);
		t.faults = r1.ru_minflt - r0.ru_minflt;
		write_full(pfd[1], &t, sizeof(t));
		_exit(0);
	}
	close(pfd[1]);
	if (read_full(pfd[0], res, sizeof(*res)))
		res->faults = -1;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return res->faults < 0 ? -1 : 0;
}

static void touch_bench(unsigned long size, int reps)
{
	static const int kinds[] = { K_MEMFD, K_MSHARE, K_HUGETLB };
	double ns[MAX_REPS], flt[MAX_REPS], med[3] = { 0 };
	struct touch_res t;
	struct obj o;
	int k, r, n;

	printf("csv-touch,kind,size_mib,reps,ns_per_4k_page,faults,vs_memfd\n");
	for (k = 0; k < 3; k++) {
		for (n = r = 0; r < reps; r++) {
			if (obj_new(&o, kinds[k], size) || touch_once(&o, &t)) {
				printf("# %s: %s\n", kind_names[kinds[k]],
				       strerror(errno));
				obj_free(&o);
				break;
			}
			obj_free(&o);
			ns[n] = t.ns_per_page;
			flt[n++] = t.faults;
		}
		if (!n)
			continue;
		med[k] = median(ns, n);
		printf("csv-touch,%s,%lu,%d,%.0f,%.0f,%.2f\n",
		       kind_names[kinds[k]], size >> 20, n, med[k],
		       median(flt, n), med[0] ? med[k] / med[0] : 0);
	}
	printf("\nfirst touch of a fresh %lu MiB object by a fresh process (median of %d):\n",
	       size >> 20, reps);
	for (k = 0; k < 3; k++)
		printf("  %-8s %8.0f ns per 4 KiB page  (%.2fx memfd)\n",
		       kind_names[kinds[k]], med[k],
		       med[0] ? med[k] / med[0] : 0);
}

/* fork + child _exit + waitpid, in us, with @o populated and mapped. */
static double fork_once(void)
{
	double t0 = now_sec();
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (now_sec() - t0) * 1e6;
}

static void fork_bench(unsigned long size, int reps)
{
	static const int kinds[] = { K_NONE, K_MEMFD, K_MSHARE, K_HUGETLB };
	double us[MAX_REPS], med[4] = { 0 };
	struct obj o;
	char *p = NULL;
	int k, r;

	printf("csv-fork,kind,size_mib,reps,fork_exit_us\n");
	for (k = 0; k < 4; k++) {
		if (obj_new(&o, kinds[k], size)) {
			printf("# %s: %s\n", kind_names[kinds[k]],
			       strerror(errno));
			obj_free(&o);
			continue;
		}
		if (kinds[k] != K_NONE) {
			p = obj_map(&o);
			if (p == MAP_FAILED) {
				obj_free(&o);
				continue;
			}
			touch_write(p, size);
		}
		fflush(NULL);
		for (r = 0; r < reps; r++)
			us[r] = fork_once();
		med[k] = median(us, reps);
		printf("csv-fork,%s,%lu,%d,%.0f\n", kind_names[kinds[k]],
		       size >> 20, reps, med[k]);
		if (kinds[k] != K_NONE)
			munmap(p, kinds[k] == K_MSHARE ? mshare_alignment(NULL) : size);
		obj_free(&o);
	}
	printf("\nfork + exit + wait of a process with %lu MiB populated and attached (median of %d):\n",
	       size >> 20, reps);
	for (k = 0; k < 4; k++)
		printf("  %-8s %8.0f us\n", k ? kind_names[kinds[k]] :
		       "nothing", med[k]);
}

int main(int argc, char **argv)
{
	unsigned long size = 0;
	int i, reps = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--size"))
			size = parse_size(argv[i + 1]);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
		else
			goto usage;
	}
	if (reps > MAX_REPS)
		reps = MAX_REPS;
	if (!strcmp(argv[1], "touch")) {
		touch_bench(size ? size : 64UL << 20, reps > 0 ? reps : 5);
		return 0;
	}
	if (!strcmp(argv[1], "fork")) {
		fork_bench(size ? size : GIB, reps > 0 ? reps : 20);
		return 0;
	}
usage:
	fprintf(stderr, "usage: %s touch|fork [--size BYTES] [--reps N]\n",
		argv[0]);
	return 2;
}
