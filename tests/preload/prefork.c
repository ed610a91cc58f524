// SPDX-License-Identifier: GPL-2.0
/*
 * prefork: the pre-forking server pattern the msharefs preload shim is for.
 * A parent maps SIZE MiB of MAP_SHARED | MAP_ANONYMOUS memory, fills it,
 * puts process-shared pthread mutexes and counters at its start and forks
 * WORKERS workers. Each worker reads every page, reports its VmPTE and
 * page faults, waits for the others (polling, no futex), then takes the
 * mutexes ITERS times to increment the counters (worker 0 first holds one
 * for 200 ms, so that others block on it: futexes on the shared memory). The parent reports the
 * page-table cost (PageTables of /proc/meminfo, before the mapping and with
 * every worker's memory touched) and checks the counters.
 *
 *   prefork [-s SIZE_MIB] [-w WORKERS] [-i ITERS] [-S]   (256, 64, 1000)
 *
 * -S uses System V shared memory (shmget(IPC_PRIVATE), shmat, IPC_RMID at
 * once, shmdt at the end) instead of mmap.
 *
 * Built twice: plain, and with the shim linked in (prefork-shim, see
 * tools/Makefile), which moves the mapping into an msharefs region.
 * Exits 0 if every worker finished and the counters add up, else 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define NLOCKS		16
#define MAX_WORKERS	1024
#define PAGE		4096UL
#define HDR		(1UL << 20)	/* struct shared; data after it */

struct shared {
	pthread_mutex_t mu[NLOCKS];
	long counter[NLOCKS];
	int touched;			/* workers done touching */
	int go;				/* parent: start the mutex phase */
	long vmpte_kb[MAX_WORKERS];
	long faults[MAX_WORKERS];
	unsigned long sum[MAX_WORKERS];
};

static long field_kb(const char *file, const char *key)
{
	size_t n = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(file, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static int worker(struct shared *sh, char *mem, size_t size, int n,
		  long iters)
{
	struct rusage before, after;
	unsigned long sum = 0;
	size_t off;
	long i;

	getrusage(RUSAGE_SELF, &before);
	for (off = 0; off < size; off += PAGE) {
		char v = *(volatile char *)(mem + off);

		if (off >= HDR)
			sum += v;
	}
	getrusage(RUSAGE_SELF, &after);
	sh->sum[n] = sum;
	sh->faults[n] = after.ru_minflt - before.ru_minflt;
	sh->vmpte_kb[n] = field_kb("/proc/self/status", "VmPTE");
	__atomic_add_fetch(&sh->touched, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->go, __ATOMIC_SEQ_CST))
		usleep(1000);
	/*
	 * Worker 0 holds the first mutex for a while, so that others wait
	 * for it in the kernel: a futex on shared memory.
	 */
	if (n == 0 && !pthread_mutex_lock(&sh->mu[0])) {
		usleep(200000);
		pthread_mutex_unlock(&sh->mu[0]);
	}
	for (i = 0; i < iters; i++) {
		int k = (n + i) % NLOCKS, err;

		err = pthread_mutex_lock(&sh->mu[k]);
		if (err) {
			fprintf(stderr, "worker %d: pthread_mutex_lock: %s\n",
				n, strerror(err));
			return 1;
		}
		sh->counter[k]++;
		pthread_mutex_unlock(&sh->mu[k]);
	}
	return 0;
}

static int init_mutexes(struct shared *sh)
{
	pthread_mutexattr_t a;
	int i;

	pthread_mutexattr_init(&a);
	if (pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED))
		return -1;
	for (i = 0; i < NLOCKS; i++)
		if (pthread_mutex_init(&sh->mu[i], &a))
			return -1;
	return 0;
}

/* Wait for every worker; how many did not exit 0. */
static int reap(int workers)
{
	int status, bad = 0, sig[NSIG] = { 0 }, i;

	while (workers-- > 0) {
		if (wait(&status) < 0)
			break;
		if (WIFSIGNALED(status))
			sig[WTERMSIG(status)]++;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	for (i = 1; i < NSIG; i++)
		if (sig[i])
			printf("prefork: %d workers killed by signal %d (%s)\n",
			       sig[i], i, strsignal(i));
	return bad;
}

int main(int argc, char **argv)
{
	long size_mib = 256, iters = 1000, pt0, pt1, vmpte_sum = 0, flt = 0;
	int workers = 64, c, i, bad, sysv = 0, id;
	struct shared *sh;
	long total = 0;
	size_t size;
	char *mem;

	while ((c = getopt(argc, argv, "s:w:i:S")) != -1) {
		switch (c) {
		case 's':
			size_mib = atol(optarg);
			break;
		case 'w':
			workers = atoi(optarg);
			break;
		case 'i':
			iters = atol(optarg);
			break;
		case 'S':
			sysv = 1;
			break;
		default:
			fprintf(stderr, "usage: prefork [-s MIB] [-w WORKERS] [-i ITERS] [-S]\n");
			return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS || size_mib < 2)
		return 2;
	size = size_mib << 20;
	setvbuf(stdout, NULL, _IOLBF, 0);

	pt0 = field_kb("/proc/meminfo", "PageTables");
	if (sysv) {
		id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
		mem = id < 0 ? MAP_FAILED : shmat(id, NULL, 0);
		/* Gone once the last process detaches. */
		if (mem == MAP_FAILED || shmctl(id, IPC_RMID, NULL)) {
			perror("prefork: shmget/shmat/shmctl");
			return 1;
		}
	} else {
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED) {
			perror("prefork: mmap");
			return 1;
		}
	}
	memset(mem, 1, size);
	sh = (struct shared *)mem;
	memset(sh, 0, sizeof(*sh));
	if (init_mutexes(sh)) {
		fprintf(stderr, "prefork: process-shared mutexes refused\n");
		return 1;
	}
	printf("prefork: %ld MiB shared (%s) at %p, %d workers, %ld iterations\n",
	       size_mib, sysv ? "System V" : "mmap", (void *)mem, workers,
	       iters);

	for (i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("prefork: fork");
			return 1;
		}
		if (pid == 0)
			_exit(worker(sh, mem, size, i, iters));
	}
	while (__atomic_load_n(&sh->touched, __ATOMIC_SEQ_CST) < workers)
		usleep(10000);
	pt1 = field_kb("/proc/meminfo", "PageTables");
	for (i = 0; i < workers; i++) {
		vmpte_sum += sh->vmpte_kb[i];
		flt += sh->faults[i];
		if (sh->sum[i] != (size - HDR) / PAGE)
			printf("prefork: worker %d read wrong data\n", i);
	}
	printf("prefork: PageTables %ld kB -> %ld kB: +%ld kB (%ld kB per worker)\n",
	       pt0, pt1, pt1 - pt0, (pt1 - pt0) / workers);
	printf("prefork: worker VmPTE %ld kB, %ld page faults to read %ld MiB (averages)\n",
	       vmpte_sum / workers, flt / workers, size_mib);

	__atomic_store_n(&sh->go, 1, __ATOMIC_SEQ_CST);
	bad = reap(workers);
	for (i = 0; i < NLOCKS; i++)
		total += sh->counter[i];
	printf("prefork: counters %ld, expected %ld; %d workers failed\n",
	       total, (long)workers * iters, bad);
	if (sysv ? shmdt(mem) : munmap(mem, size))
		perror("prefork: detach");
	return bad || total != (long)workers * iters;
}
