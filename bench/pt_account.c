// SPDX-License-Identifier: GPL-2.0
/*
 * pt_account: where a sharer's page tables come from. A freshly exec'd,
 * dynamically linked process (as a database backend is) reads VmPTE
 * before and after it attaches a region and reads one byte of every page
 * of a 1 GiB object, and after it detaches; then it counts the tables its
 * own VMAs span (a PTE table per 2 MiB unit, a PMD table per 1 GiB, a PUD
 * table per 512 GiB touched by a VMA; the attachment's unit left out, its
 * tables are the region's) and compares that with VmPTE.
 *
 *   pt_account create PATH      a region holding a populated 1 GiB object
 *   pt_account idle|sharer PATH one process; prints a "csv,..." line:
 *     csv,kind,before_kb,attached_kb,read_kb,detached_kb,spanned_kb,addr
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mshare.h"

#define OBJ_SIZE	(1UL << 30)
#define PG		4096UL
#define MAX_UNITS	1024

static long vmpte_kb(void)
{
	return mshare_proc_value("/proc/self/status", "VmPTE");
}

/* Distinct units of 1 << @shift bytes touched by [s, e). */
static int count_units(unsigned long *seen, int n, unsigned long s,
		       unsigned long e, int shift)
{
	unsigned long u;
	int i;

	for (u = s >> shift; u <= (e - 1) >> shift; u++) {
		for (i = 0; i < n && seen[i] != u; i++)
			;
		if (i == n && n < MAX_UNITS)
			seen[n++] = u;
	}
	return n;
}

/* kB of PTE, PMD and PUD tables the VMAs span, leaving out @skip's. */
static long spanned_kb(unsigned long skip)
{
	static const int shift[3] = { 21, 30, 39 };
	static unsigned long seen[3][MAX_UNITS];
	int n[3] = { 0, 0, 0 }, l;
	unsigned long s, e;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* Kernel addresses ([vsyscall]) have no user tables. */
		if (sscanf(line, "%lx-%lx", &s, &e) != 2 || s >= (1UL << 47) ||
		    s == skip)
			continue;
		for (l = 0; l < 3; l++)
			n[l] = count_units(seen[l], n[l], s, e, shift[l]);
	}
	fclose(f);
	return 4L * (n[0] + n[1] + n[2]);
}

static int create(const char *path)
{
	uint64_t align = mshare_alignment(NULL);
	int fd = mshare_region_create(AT_FDCWD, path, 0644, align);
	char *p;

	if (fd < 0 || mshare_map_anon(fd, 0, OBJ_SIZE)) {
		perror(path);
		return 1;
	}
	p = mshare_attach(fd, NULL, PROT_READ | PROT_WRITE, 0);
	if (p == MAP_FAILED) {
		perror("attach");
		return 1;
	}
	memset(p, 1, OBJ_SIZE);
	return mshare_detach(p, align) || close(fd);
}

int main(int argc, char **argv)
{
	long before, attached, read_kb, detached, spanned;
	unsigned long sum = 0, i;
	int sharer, fd = -1;
	char *p = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: pt_account create|idle|sharer PATH\n");
		return 2;
	}
	if (!strcmp(argv[1], "create"))
		return create(argv[2]);
	sharer = !strcmp(argv[1], "sharer");
	/* Everything but the attachment first: stdio, the region's file. */
	printf("# %s: pid %d\n", argv[1], getpid());
	if (sharer) {
		fd = mshare_region_open(AT_FDCWD, argv[2], O_RDONLY);
		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
	}
	before = vmpte_kb();
	if (sharer) {
		p = mshare_attach(fd, NULL, PROT_READ, 0);
		if (p == MAP_FAILED) {
			perror("attach");
			return 1;
		}
	}
	attached = vmpte_kb();
	for (i = 0; p && i < OBJ_SIZE; i += PG)
		sum += ((volatile char *)p)[i];
	read_kb = vmpte_kb();
	spanned = spanned_kb((unsigned long)p);
	if (p && mshare_detach(p, mshare_alignment(NULL)))
		return 1;
	detached = vmpte_kb();
	if (p && sum != OBJ_SIZE / PG)
		return 1;
	printf("csv,%s,%ld,%ld,%ld,%ld,%ld,%p\n", argv[1], before, attached,
	       read_kb, detached, spanned, (void *)p);
	return 0;
}
