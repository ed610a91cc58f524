// SPDX-License-Identifier: GPL-2.0
/*
 * libinterposer.so: another LD_PRELOAD library after the shim, as a
 * program may have (a profiler, a sanitizer). It counts the mmap and
 * munmap calls that reach it and passes them on; interposer_calls()
 * tells the test (mshare_preload_so_test) how many came.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long n_mmap, n_munmap;
static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static int (*next_munmap)(void *, size_t);

/* Until dlsym() answers (it may allocate and map), straight to the kernel. */
__attribute__((constructor)) static void resolve(void)
{
	next_mmap = dlsym(RTLD_NEXT, "mmap");
	next_munmap = dlsym(RTLD_NEXT, "munmap");
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	__atomic_add_fetch(&n_mmap, 1, __ATOMIC_RELAXED);
	if (!next_mmap)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	return next_mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	__atomic_add_fetch(&n_munmap, 1, __ATOMIC_RELAXED);
	if (!next_munmap)
		return syscall(SYS_munmap, addr, len);
	return next_munmap(addr, len);
}

unsigned long interposer_calls(const char *name)
{
	if (!strcmp(name, "mmap"))
		return __atomic_load_n(&n_mmap, __ATOMIC_RELAXED);
	if (!strcmp(name, "munmap"))
		return __atomic_load_n(&n_munmap, __ATOMIC_RELAXED);
	return 0;
}
