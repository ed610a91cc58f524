// SPDX-License-Identifier: GPL-2.0
/*
 * The program mshare_cli_test runs under "mshare run": it attaches the
 * region "mshare run" handed over (MSHARE_FD, MSHARE_ADDR, MSHARE_SIZE,
 * MSHARE_PROT) and then performs its arguments in order:
 *
 *   fill N        write 'm' to the first N bytes (N may end in K, M or G)
 *   verify N      the first N bytes must be 'm'
 *   hold FILE     create FILE, then wait until it is removed (lets the test
 *                 look at the region while it is attached)
 *   nowrite       a write from a forked child must die of SIGSEGV
 *
 * It prints "attached at ADDR" and exits 0, or says what failed and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "mshare_cli_helper: %s: %s\n", what,
		errno ? strerror(errno) : "failed");
	return 1;
}

static unsigned long env_num(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "mshare_cli_helper: %s not set\n", name);
		exit(1);
	}
	return strtoul(v, NULL, 0);
}

/* A byte count: a number with an optional K, M or G suffix. */
static unsigned long size_arg(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 0);

	switch (*end) {
	case 'G':
		n <<= 10;
		/* fall through */
	case 'M':
		n <<= 10;
		/* fall through */
	case 'K':
		n <<= 10;
	}
	return n;
}

static int hold(const char *file)
{
	struct stat st;
	int fd = open(file, O_WRONLY | O_CREAT, 0644);

	if (fd < 0)
		return fail(file);
	close(fd);
	while (!stat(file, &st))
		usleep(20000);
	return 0;
}

static int nowrite(char *p)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		*(volatile char *)p = 'x';
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return fail("fork");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
		errno = 0;
		return fail("write to a read-only attachment did not fault");
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long addr = env_num("MSHARE_ADDR");
	unsigned long size = env_num("MSHARE_SIZE");
	int fd = env_num("MSHARE_FD"), prot = PROT_READ, i;
	const char *p = getenv("MSHARE_PROT");
	char *m;

	if (p && !strcmp(p, "rw"))
		prot |= PROT_WRITE;
	m = mmap((void *)addr, size, prot, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return fail("mmap");
	printf("attached at %p\n", (void *)m);
	if ((unsigned long)m != addr) {
		fprintf(stderr, "mshare_cli_helper: wanted %#lx\n", addr);
		return 1;
	}
	for (i = 1; i < argc; i++) {
		const char *op = argv[i], *arg = i + 1 < argc ? argv[i + 1] : "0";

		if (!strcmp(op, "fill")) {
			memset(m, 'm', size_arg(arg));
			i++;
		} else if (!strcmp(op, "verify")) {
			unsigned long j, n = size_arg(arg);

			for (j = 0; j < n; j++)
				if (m[j] != 'm') {
					errno = 0;
					return fail("verify");
				}
			i++;
		} else if (!strcmp(op, "hold")) {
			if (hold(arg))
				return 1;
			i++;
		} else if (!strcmp(op, "nowrite")) {
			if (nowrite(m))
				return 1;
		} else {
			fprintf(stderr, "mshare_cli_helper: unknown '%s'\n", op);
			return 1;
		}
	}
	return 0;
}
