// SPDX-License-Identifier: GPL-2.0
/*
 * share_demo: a program written only from SPEC.md and <linux/msharefs.h>.
 * It creates a region, places 64 MiB of shared anonymous memory in it,
 * fills it, and lets forked workers attach it at their own addresses and
 * read it, showing how few faults and page tables that costs them.
 *
 *   share_demo [WORKERS]        (default 4)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/msharefs.h>

#define REGION	"/sys/fs/mshare/share_demo"
#define OBJECT	(64UL << 20)

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static unsigned long alignment(void)
{
	unsigned long a = 0;
	FILE *f = fopen("/sys/fs/mshare/mshare_info", "r");

	if (!f || fscanf(f, "%lu", &a) != 1)
		die("mshare_info");
	fclose(f);
	return a;
}

static long vm_pte_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* A worker attaches read-only wherever the kernel likes and sums the data. */
static int worker(int n, unsigned long size)
{
	struct rusage before, after;
	unsigned long i, sum = 0;
	const char *p;
	int fd;

	fd = open(REGION, O_RDONLY);
	if (fd < 0)
		die("worker open");
	getrusage(RUSAGE_SELF, &before);
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("worker mmap");
	for (i = 0; i < OBJECT; i += 4096)
		sum += p[i];
	getrusage(RUSAGE_SELF, &after);
	printf("worker %d: attached at %p, read 64 MiB (sum %lu) with %ld page faults, VmPTE %ld kB\n",
	       n, (void *)p, sum, after.ru_minflt - before.ru_minflt,
	       vm_pte_kb());
	return sum == (OBJECT / 4096) * 'm' ? 0 : 1;
}

int main(int argc, char **argv)
{
	int i, workers = argc > 1 ? atoi(argv[1]) : 4, failed = 0;
	unsigned long size = alignment();
	struct mshare_create object = {
		.region_offset = 0,
		.size = OBJECT,
		.prot = PROT_READ | PROT_WRITE,
		.flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS,
		.fd = -1,
	};
	struct mshare_info info;
	char *p;
	int fd;

	fd = open(REGION, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		die("open " REGION);
	if (ftruncate(fd, size))
		die("ftruncate");
	if (ioctl(fd, MSHAREFS_CREATE_MAPPING, &object))
		die("MSHAREFS_CREATE_MAPPING");
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 'm', OBJECT);
	if (read(fd, &info, sizeof(info)) != sizeof(info))
		die("read");
	printf("region %s: %lu GiB, first attached at 0x%llx, 64 MiB object filled\n",
	       REGION, size >> 30, (unsigned long long)info.start);

	for (i = 0; i < workers; i++) {
		if (fork() == 0)
			exit(worker(i, size));
		wait(&failed);
		if (!WIFEXITED(failed) || WEXITSTATUS(failed))
			return 1;
	}
	munmap(p, size);
	close(fd);
	unlink(REGION);
	printf("all %d workers read the data; region removed\n", workers);
	return 0;
}
