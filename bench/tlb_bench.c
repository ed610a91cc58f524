// SPDX-License-Identifier: GPL-2.0
/*
 * tlb_bench: which CPUs MSHAREFS_UNMAP interrupts. Sharers attach a
 * region and spin reading one object of it, pinned to CPU 1 only, or one
 * on each CPU; this process, on CPU 0, removes and recreates another
 * object of the region (and touches it) ROUNDS times. The per-CPU deltas
 * of the "TLB" (TLB shootdowns) and "CAL" (function call interrupts, how
 * flush_tlb_all() and other cross-CPU calls arrive) lines of
 * /proc/interrupts are measured over the rounds, and over an idle
 * interval of the same length first (the background).
 *
 *   tlb_bench [--rounds 200] [--configs none,cpu1,all]
 *
 * Prints "csv-tlb,..." lines and a table.
 */
#include "bench.h"
#include <sched.h>

#define MAX_CPUS	64
#define OBJ_A		(64UL << 10)	/* the sharers read this */
#define OBJ_B		(64UL << 10)	/* this is removed and recreated */
#define OFF_B		GIB

static int ncpus;

struct irqs {
	long tlb[MAX_CPUS], cal[MAX_CPUS];
};

/* Parse one "XXX:  n n n n  description" line into @v. */
static void parse_line(const char *line, long *v)
{
	const char *s = strchr(line, ':') + 1;
	char *end;
	int c;

	for (c = 0; c < ncpus; c++) {
		v[c] = strtol(s, &end, 10);
		s = end;
	}
}

static void read_irqs(struct irqs *q)
{
	static char line[4096];
	FILE *f = fopen("/proc/interrupts", "r");
	const char *s;

	memset(q, 0, sizeof(*q));
	if (!f)
		die("/proc/interrupts");
	while (fgets(line, sizeof(line), f)) {
		for (s = line; *s == ' '; s++)
			;
		if (!strncmp(s, "TLB:", 4))
			parse_line(s, q->tlb);
		else if (!strncmp(s, "CAL:", 4))
			parse_line(s, q->cal);
	}
	fclose(f);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity %d", cpu);
}

/* A sharer: attach, read object A until told to stop. */
static void sharer(const char *path, int cpu, volatile int *stop, int ready)
{
	unsigned long i, sum = 0;
	const char *p;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pin(cpu);
	fd = open(path, O_RDONLY);
	p = fd < 0 ? MAP_FAILED :
	    mshare_attach(fd, NULL, PROT_READ, 0);
	if (p == MAP_FAILED)
		_exit(1);
	sum += touch_read(p, OBJ_A);
	write_full(ready, "r", 1);
	while (!*stop)
		for (i = 0; i < OBJ_A; i += PAGE)
			sum += ((const volatile char *)p)[i];
	_exit(sum == 1);
}

static int place_b(int fd)
{
	return mshare_map_anon(fd, OFF_B, OBJ_B);
}

static void print_delta(const char *cfg, const char *phase, int rounds,
			const struct irqs *a, const struct irqs *b)
{
	int c;

	printf("csv-tlb,%s,%s,%d", cfg, phase, rounds);
	for (c = 0; c < ncpus; c++)
		printf(",%ld", b->tlb[c] - a->tlb[c]);
	for (c = 0; c < ncpus; c++)
		printf(",%ld", b->cal[c] - a->cal[c]);
	printf("\n");
}

/* One configuration: which CPUs the sharers run on. */
static void run_config(const char *cfg, int rounds)
{
	char path[128];
	struct irqs i0, i1, i2;
	volatile int *stop;
	int fd, c, n = 0, ready[2], r;
	pid_t pids[MAX_CPUS];
	double t0, idle;
	char *p, ch;

	snprintf(path, sizeof(path), MSHARE_DIR "/tlb-%d", getpid());
	fd = region_create(path);
	if (fd < 0 || mshare_map_anon(fd, 0, OBJ_A) || place_b(fd))
		die("region %s", path);
	p = mshare_attach(fd, NULL, PROT_READ | PROT_WRITE, 0);
	stop = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || stop == MAP_FAILED || pipe(ready))
		die("setup");
	touch_write(p, OBJ_A);
	touch_write(p + OFF_B, OBJ_B);
	*stop = 0;
	for (c = 0; c < ncpus; c++) {
		if (!strcmp(cfg, "none") ||
		    (!strcmp(cfg, "cpu1") && c != 1))
			continue;
		fflush(NULL);
		pids[n] = fork();
		if (pids[n] < 0)
			die("fork");
		if (!pids[n])
			sharer(path, !strcmp(cfg, "cpu1") ? 1 : c, stop,
			       ready[1]);
		n++;
	}
	/* cpu1: more than one sharer, all on CPU 1. */
	for (c = 0; !strcmp(cfg, "cpu1") && c < 2; c++) {
		pids[n] = fork();
		if (!pids[n])
			sharer(path, 1, stop, ready[1]);
		n++;
	}
	for (c = 0; c < n; c++)
		if (read_full(ready[0], &ch, 1))
			die("sharer");
	usleep(200000);

	/* The background, then the rounds. */
	t0 = now_sec();
	read_irqs(&i0);
	for (r = 0; r < rounds; r++) {
		if (mshare_unmap(fd, OFF_B, OBJ_B) || place_b(fd))
			die("round %d", r);
		touch_write(p + OFF_B, OBJ_B);
	}
	read_irqs(&i1);
	idle = now_sec() - t0;
	usleep(idle * 1e6);
	read_irqs(&i2);
	print_delta(cfg, "rounds", rounds, &i0, &i1);
	print_delta(cfg, "idle", 0, &i1, &i2);
	printf("# %s: %d sharers, %d rounds in %.2f s (%.0f us each)\n", cfg,
	       n, rounds, idle, idle * 1e6 / rounds);

	*stop = 1;
	for (c = 0; c < n; c++)
		waitpid(pids[c], NULL, 0);
	munmap(p, mshare_alignment(NULL));
	close(fd);
	unlink(path);
	close(ready[0]);
	close(ready[1]);
}

int main(int argc, char **argv)
{
	char cfgs[128] = "none,cpu1,all", *cfg;
	int rounds = 200, i, c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--configs"))
			snprintf(cfgs, sizeof(cfgs), "%s", argv[i + 1]);
	}
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	if (ncpus < 2) {
		fprintf(stderr, "needs at least 2 CPUs\n");
		return 2;
	}
	pin(0);
	printf("csv-tlb,config,phase,rounds");
	for (c = 0; c < ncpus; c++)
		printf(",tlb_cpu%d", c);
	for (c = 0; c < ncpus; c++)
		printf(",cal_cpu%d", c);
	printf("\n");
	for (cfg = strtok(cfgs, ","); cfg; cfg = strtok(NULL, ","))
		run_config(cfg, rounds);
	return 0;
}
