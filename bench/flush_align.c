// SPDX-License-Identifier: GPL-2.0
/*
 * Why a region change takes two flush rounds where change_bench's threads
 * take one: is it the alignment of the object? One process, three threads
 * spinning on CPUs 1-3, the main thread on CPU 0 unmaps 2 MiB of shared
 * anonymous memory at OFFSET from a 2 MiB boundary, maps it again and
 * writes a byte, 100 times, and prints the CAL and TLB interrupts per
 * change (all CPUs). An aligned 2 MiB unmap frees a page table too.
 *   flush_align OFFSET
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB	(1UL << 20)
#define ROUNDS	100

static volatile int stop;
static char *base;

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void *spin(void *arg)
{
	pin((int)(long)arg);
	while (!stop)
		(void)*(volatile char *)base;
	return NULL;
}

/* The CAL and TLB lines of /proc/interrupts, summed over the CPUs. */
static void irqs(long *cal, long *tlb)
{
	long n, ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	char line[4096], *p;
	FILE *f = fopen("/proc/interrupts", "r");
	long *t;

	*cal = *tlb = 0;
	while (f && fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (!strncmp(p, "CAL:", 4))
			t = cal;
		else if (!strncmp(p, "TLB:", 4))
			t = tlb;
		else
			continue;
		/* One count per online CPU, then the description. */
		for (p += 4, n = 0; n < ncpus; n++)
			*t += strtol(p, &p, 10);
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	unsigned long off = argc > 1 ? strtoul(argv[1], NULL, 0) : 4 * MIB;
	long c0, t0, c1, t1;
	pthread_t th[3];
	char *raw;
	int i;

	pin(0);
	raw = mmap(NULL, 16 * MIB, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED || off > 10 * MIB)
		return 1;
	base = (char *)(((unsigned long)raw + 2 * MIB - 1) & ~(2 * MIB - 1));
	base[0] = 1;
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, spin, (void *)(long)(i + 1));
	usleep(100000);
	irqs(&c0, &t0);
	for (i = 0; i < ROUNDS; i++) {
		munmap(base + off, 2 * MIB);
		if (mmap(base + off, 2 * MIB, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			return 1;
		base[off] = 1;
	}
	irqs(&c1, &t1);
	stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("offset %#lx: CAL %.2f TLB %.2f per change\n", off,
	       (c1 - c0) / (double)ROUNDS, (t1 - t0) / (double)ROUNDS);
	return 0;
}
