/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmshare: regions of msharefs from C.
 *
 * A region is a file on an msharefs mount (/sys/fs/mshare). Processes that
 * map it share its page tables. The kernel's interface is small: open(2)
 * and ftruncate(2) make and size a region, two ioctls place and remove
 * objects in it, mmap(2) attaches it, read(2) and /proc/PID/fdinfo tell
 * what it is. This library is that interface with the details in one
 * place: the mount, the alignment, the structures, the fdinfo lines.
 *
 * Every function sets errno on failure and returns -1 (or MAP_FAILED,
 * or 0 for the alignment); nothing here prints, allocates behind the
 * caller's back (except where a result is a list) or keeps state, so the
 * functions are safe to call from any thread. See libmshare(3).
 */
#ifndef MSHARE_H
#define MSHARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The kernel's UAPI header when the system has it (kernel headers of a
 * kernel with msharefs); else the same definitions, so that programs
 * build on any system and find out at run time whether msharefs is
 * there. MSHARE_OWN_UAPI forces the copy (the library's build checks that
 * both agree: make -C lib check-uapi).
 */
#if !defined(MSHARE_OWN_UAPI) && defined(__has_include)
#if __has_include(<linux/msharefs.h>)
#include <linux/msharefs.h>
#endif
#endif

#ifndef _LINUX_MSHAREFS_H
#define _LINUX_MSHAREFS_H
#include <linux/ioctl.h>
#include <linux/types.h>

struct mshare_info {
	__u64 start;
	__u64 size;
};

struct mshare_create {
	__u64 region_offset;
	__u64 size;
	__u64 offset;
	__u32 prot;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

struct mshare_unmap {
	__u64 region_offset;
	__u64 size;
};

#define MSHAREFS_CREATE_MAPPING	_IOW('x', 0, struct mshare_create)
#define MSHAREFS_UNMAP		_IOW('x', 1, struct mshare_unmap)
#endif /* _LINUX_MSHAREFS_H */

#ifdef __cplusplus
extern "C" {
#endif

#define MSHARE_DEFAULT_DIR	"/sys/fs/mshare"
#define MSHARE_INFO_NAME	"mshare_info"
#define MSHARE_FS_MAGIC		0x4d534852	/* statfs(2) f_type */
#define MSHARE_UNKNOWN		UINT64_MAX	/* a statistic the kernel hides */

/* ---- the mount ------------------------------------------------------- */

/* The mount to use: $MSHARE_MOUNT when set and not empty, else the default. */
const char *mshare_mount_dir(void);

/* 1 if @fd is on msharefs, 0 if not, -1 if fstatfs(2) failed. */
int mshare_is_msharefs(int fd);

/*
 * The alignment of regions on the mount at @dir (NULL: mshare_mount_dir()),
 * from its mshare_info file: region sizes, attachment addresses and object
 * offsets are multiples of it. 0 and errno on error (EINVAL: malformed).
 */
uint64_t mshare_alignment(const char *dir);

/* ---- regions --------------------------------------------------------- */

/*
 * Create region @name under @dirfd (AT_FDCWD, or an fd of the mount) with
 * exactly @mode (the umask does not apply, and no moment exists where the
 * region has a wider mode), and give it @size bytes unless @size is 0.
 * Returns its fd, open O_RDWR | O_CLOEXEC. EEXIST if the name is taken;
 * on any error no region is left behind.
 */
int mshare_region_create(int dirfd, const char *name, mode_t mode,
			 uint64_t size);

/*
 * Open region @name under @dirfd with @flags (O_RDONLY or O_RDWR, plus
 * O_CLOEXEC, which is always added). ENOTTY if it is not on msharefs.
 */
int mshare_region_open(int dirfd, const char *name, int flags);

/* Size a region that has none yet: once, a multiple of the alignment. */
int mshare_region_set_size(int fd, uint64_t size);

/* Where the region was first attached (0: never) and its size. */
int mshare_region_info(int fd, struct mshare_info *info);

/* Remove region @name under @dirfd: it goes when nobody uses it. */
int mshare_region_remove(int dirfd, const char *name);

/* ---- objects --------------------------------------------------------- */

/*
 * Place an object at @region_offset: @size bytes of anonymous shared
 * memory (@file_fd -1, MAP_ANONYMOUS is added) or of the file @file_fd
 * from @file_offset, with @prot and @flags as for mmap(2) (MAP_SHARED and
 * MAP_FIXED are added). The region must be open for writing.
 */
int mshare_map(int fd, uint64_t region_offset, uint64_t size, int prot,
	       int flags, int file_fd, uint64_t file_offset);

/* The common case: read-write anonymous memory. */
int mshare_map_anon(int fd, uint64_t region_offset, uint64_t size);

/* Remove the objects in a range (whole objects only). */
int mshare_unmap(int fd, uint64_t region_offset, uint64_t size);

/* ---- attaching ------------------------------------------------------- */

/*
 * Map the whole region into this process: mmap(2) of its size with
 * MAP_SHARED | @flags at @addr (NULL: an aligned address the kernel
 * picks). A read-only open region attaches only with PROT_READ.
 */
void *mshare_attach(int fd, void *addr, int prot, int flags);

/*
 * Attach where the region was first attached, so that pointers stored in
 * it mean the same here (EEXIST if something else is there); where the
 * kernel picks if it was never attached.
 */
void *mshare_attach_start(int fd, int prot);

/* Unmap an attachment of @size bytes (the region's size) at @addr. */
int mshare_detach(void *addr, uint64_t size);

/* ---- inspecting ------------------------------------------------------ */

/* What the kernel tells about a region (fdinfo's mshare-* lines). */
struct mshare_stats {
	uint64_t size;		/* bytes, 0 until set */
	uint64_t start;		/* first attach address, 0 if never */
	uint64_t attachments;	/* live attachments in all processes */
	uint64_t rss;		/* bytes of memory mapped in it */
	uint64_t pgtables;	/* bytes of its page tables */
	uint64_t objects;	/* objects placed in it */
};

/*
 * Fill @st for the region @fd. On a kernel without the fdinfo lines,
 * size and start come from mshare_region_info() and the others are
 * MSHARE_UNKNOWN.
 */
int mshare_region_stats(int fd, struct mshare_stats *st);

/* One object, from an "mshare-object:" line. */
struct mshare_object {
	uint64_t region_offset;
	uint64_t size;
	uint64_t file_offset;
	int prot;		/* PROT_READ | PROT_WRITE */
	char *backing;		/* "anon", "anon-hugetlb" or the file's path */
};

/*
 * The objects of region @fd, in region order: an array of *@n objects
 * to free with mshare_objects_free(). An empty region gives NULL and 0.
 */
int mshare_region_objects(int fd, struct mshare_object **objs, size_t *n);
void mshare_objects_free(struct mshare_object *objs, size_t n);

/*
 * The number after "mshare-@key:" in the fdinfo of region @fd (decimal,
 * or hexadecimal with 0x). -1 and ENOENT if the line is missing.
 */
int64_t mshare_fdinfo_value(int fd, const char *key);

/*
 * The number after "@key:" in @path, a /proc file of "key: value" lines
 * (/proc/meminfo, /proc/PID/status, fdinfo); -1 and ENOENT if missing.
 * Reads without allocating memory, so that measuring page tables
 * (PageTables, VmPTE, VmMsharePTE) does not change them.
 */
int64_t mshare_proc_value(const char *path, const char *key);

#ifdef __cplusplus
}
#endif

#endif /* MSHARE_H */
