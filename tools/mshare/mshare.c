// SPDX-License-Identifier: GPL-2.0
/*
 * mshare: list, inspect, create and remove msharefs regions, and run a
 * program with a region handed to it. See man/mshare.1.
 *
 *   mshare [--mount DIR] ls|stat|create|rm|run ... (mshare --help)
 *
 * Built on libmshare: statistics come from mshare_region_stats() and
 * mshare_region_objects() of the region opened read-only; on a kernel
 * without the fdinfo lines, size and start come from read(2) and the rest
 * is shown as "-".
 *
 * Exit status: 0 success, 1 failure or bad usage (as util-linux). "run" exits
 * with the status of the program it runs (126/127 if it cannot be run).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "mshare.h"

#ifndef MAP_HUGETLB
#define MAP_HUGETLB	0x40000
#endif

/* Like util-linux: a usage error is a failure too. */
enum { EX_OK = 0, EX_FAIL = 1, EX_USAGE = 1 };

typedef unsigned long long u64;

static const char *prog = "mshare";
static const char *mount_dir;	/* --mount, or mshare_mount_dir() */
static bool opt_bytes, opt_json, opt_raw, opt_noheadings;

/* ---- messages ---------------------------------------------------------- */

/* "mshare: <what>" */
static void msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* "mshare: <what>: <strerror(err)>" */
static void msg_err(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		msg_err(ENOMEM, "malloc");
		exit(EX_FAIL);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = xmalloc(strlen(s) + 1);

	return strcpy(p, s);
}

static char *join(const char *a, const char *b)
{
	char *p = xmalloc(strlen(a) + strlen(b) + 2);

	sprintf(p, "%s%s%s", a, *a && *b ? "/" : "", b);
	return p;
}

/* ---- parsing ----------------------------------------------------------- */

/*
 * A byte count: decimal or 0x hex, optionally followed by K, M, G or T
 * (powers of 1024; "KiB" and "KB" are accepted too). -1 if malformed or
 * if it does not fit in 64 bits.
 */
static int parse_size(const char *s, u64 *out)
{
	int shift = 0;
	char *end;
	u64 v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*end) {
		end++;
		if (strcmp(end, "") && strcmp(end, "iB") && strcmp(end, "B"))
			return -1;
	}
	if (shift && v > (~0ULL >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

/* "rw", "r", "r--", "-" or "none": PROT_* bits, -1 if malformed. */
static int parse_prot(const char *s)
{
	int prot = 0;

	if (!strcmp(s, "none"))
		return PROT_NONE;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s == 'r')
			prot |= PROT_READ;
		else if (*s == 'w')
			prot |= PROT_WRITE;
		else if (*s != '-')
			return -1;
	}
	return prot;
}

/* 512G, 1.5M, 4K, 0B: like lsblk. */
static const char *human(u64 v, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	int i = 0;

	if (opt_bytes) {
		snprintf(buf, len, "%llu", v);
		return buf;
	}
	while (v >= (1024ULL << (10 * i)) && i < 6)
		i++;
	if (!i)
		snprintf(buf, len, "%lluB", v);
	else if (!(v & ((1ULL << (10 * i)) - 1)))
		snprintf(buf, len, "%llu%c", v >> (10 * i), units[i]);
	else
		snprintf(buf, len, "%.1f%c", (double)v / (1ULL << (10 * i)),
			 units[i]);
	return buf;
}

/* ---- the mount and region names --------------------------------------- */

static const char *mount_path(void)
{
	if (!mount_dir)
		mount_dir = mshare_mount_dir();
	return mount_dir;
}

/* NAME is relative to the mount unless it starts with '/'. */
static char *region_path(const char *name)
{
	if (name[0] == '/')
		return xstrdup(name);
	return join(mount_path(), name);
}

/* The mount must exist and be msharefs; 0 or a message and -1. */
static int check_mount(void)
{
	const char *m = mount_path();
	struct statfs sfs;

	if (statfs(m, &sfs)) {
		msg_err(errno, "%s", m);
		return -1;
	}
	if (sfs.f_type != MSHARE_FS_MAGIC) {
		msg("%s: not an msharefs mount (mount -t msharefs msharefs %s)",
		    m, m);
		return -1;
	}
	return 0;
}

/* The alignment from <mount>/mshare_info, 0 (after a message) if unknown. */
static u64 alignment(void)
{
	u64 a = mshare_alignment(mount_path());

	if (!a && errno == EINVAL)
		msg("%s/%s: unexpected contents", mount_path(),
		    MSHARE_INFO_NAME);
	else if (!a)
		msg_err(errno, "%s/%s", mount_path(), MSHARE_INFO_NAME);
	return a;
}

/* ---- region statistics ------------------------------------------------ */

struct stats {
	u64 size, start, attach, rss, pgtables, nobjects;
	bool have_size, have_start, have_stats;
	struct mshare_object *obj;
	size_t nobj;
	int open_err;		/* errno of open(O_RDONLY), 0 if it worked */
};

static void free_stats(struct stats *s)
{
	mshare_objects_free(s->obj, s->nobj);
}

/*
 * Fill @s from region @fd; without the kernel's fdinfo lines only size
 * and start are known.
 */
static void read_stats(int fd, struct stats *s)
{
	struct mshare_stats st;

	if (mshare_region_stats(fd, &st))
		return;
	s->size = st.size;
	s->start = st.start;
	s->have_size = s->have_start = true;
	if (st.objects == MSHARE_UNKNOWN)
		return;
	s->attach = st.attachments;
	s->rss = st.rss;
	s->pgtables = st.pgtables;
	s->nobjects = st.objects;
	s->have_stats = true;
	if (mshare_region_objects(fd, &s->obj, &s->nobj)) {
		msg_err(errno, "objects");
		exit(EX_FAIL);
	}
}

/* "rw-" for @prot. */
static const char *prot_str(int prot)
{
	static const char *const str[] = { "---", "r--", "-w-", "rw-" };

	return str[prot & (PROT_READ | PROT_WRITE)];
}

/* ---- owners ------------------------------------------------------------ */

/* Names from /etc/passwd and /etc/group; no NSS (static binaries). */
static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw;
	FILE *f = fopen("/etc/passwd", "re");

	snprintf(buf, len, "%u", (unsigned int)uid);
	while (f && (pw = fgetpwent(f)))
		if (pw->pw_uid == uid) {
			snprintf(buf, len, "%s", pw->pw_name);
			break;
		}
	if (f)
		fclose(f);
	return buf;
}

static const char *group_name(gid_t gid, char *buf, size_t len)
{
	struct group *gr;
	FILE *f = fopen("/etc/group", "re");

	snprintf(buf, len, "%u", (unsigned int)gid);
	while (f && (gr = fgetgrent(f)))
		if (gr->gr_gid == gid) {
			snprintf(buf, len, "%s", gr->gr_name);
			break;
		}
	if (f)
		fclose(f);
	return buf;
}

/* ---- JSON output ------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_num(const char *key, bool known, u64 v, bool comma)
{
	printf("\"%s\": ", key);
	if (known)
		printf("%llu", v);
	else
		printf("null");
	if (comma)
		printf(", ");
}

/* ---- usage ------------------------------------------------------------- */

static const char usage_main[] =
"Usage: mshare [--mount DIR] COMMAND [ARGS]\n"
"\n"
"Manage msharefs regions: memory whose page tables are shared by every\n"
"process that maps it.\n"
"\n"
"Commands:\n"
"  ls [NAME...]          list regions (recursively), like lsipc\n"
"  stat NAME             show a region and its objects\n"
"  create NAME [OPTS]    create a region and place objects in it\n"
"  rm NAME...            remove regions (or empty directories)\n"
"  run NAME -- CMD ARGS  run CMD with the region handed to it\n"
"\n"
"NAME is relative to the mount unless it starts with '/'. The mount is\n"
"--mount DIR, else $MSHARE_MOUNT, else " MSHARE_DEFAULT_DIR ".\n"
"'mshare COMMAND --help' describes each command.\n"
"Exit status: 0 success, 1 an operation failed or bad usage.\n";

static const char usage_ls[] =
"Usage: mshare ls [--bytes] [--json|--raw] [--noheadings] [--output LIST]\n"
"                 [--mount DIR] [NAME...]\n"
"\n"
"List every region under the mount (or under/as each NAME), one per line:\n"
"PATH SIZE OBJECTS RSS PGTABLES ATTACHED OWNER MODE, and PIDS (the processes\n"
"whose maps show them attached) if asked. Statistics need read permission\n"
"on the region; without it they show as '-' (null in JSON). Regions\n"
"unlinked while attached are listed as 'NAME (deleted)' when one of their\n"
"attachments can be opened through /proc/PID/map_files (root).\n"
"\n"
"  -b, --bytes        sizes in bytes instead of K, M, G, T\n"
"  -J, --json         JSON output ({\"regions\": [...]}), sizes in bytes,\n"
"                     every field\n"
"  -r, --raw          columns separated by one space, unaligned; blanks\n"
"                     and control characters as \\x<hex>\n"
"  -n, --noheadings   no header line\n"
"  -o, --output LIST  the columns to show, comma-separated, in that order;\n"
"                     +LIST adds them to the default ones\n"
"  -m, --mount DIR    the msharefs mount\n";

static const char usage_stat[] =
"Usage: mshare stat [--bytes] [--json] [--mount DIR] NAME\n"
"\n"
"Show a region: size, first attach address, attachments, resident memory,\n"
"page tables, owner, mode, and every object with its offset, size,\n"
"protection, file offset and backing. Needs read permission.\n"
"\n"
"  -b, --bytes   sizes in bytes\n"
"  -J, --json    JSON output\n"
"  -m, --mount DIR  the msharefs mount\n";

static const char usage_create[] =
"Usage: mshare create NAME [--size S] [--mode M] [OBJECT...]\n"
"\n"
"Create the region NAME (it must not exist), size it and place objects in\n"
"it. On any failure the region is removed again.\n"
"\n"
"  -s, --size S      region size, a multiple of the alignment\n"
"                    (default: one alignment unit, e.g. 512G)\n"
"  -M, --mode M      octal permissions (default 0666 & ~umask)\n"
"  -a, --anon OFF:SIZE[:PROT]\n"
"                    shared anonymous memory at OFF\n"
"  -f, --file PATH:OFF:SIZE[:FILEOFF][:PROT]\n"
"                    the file PATH from FILEOFF (default 0) at OFF\n"
"  -H, --hugetlb OFF:SIZE[:PROT]\n"
"                    anonymous huge pages (default huge page size)\n"
"  -m, --mount DIR   the msharefs mount\n"
"\n"
"Sizes and offsets take K, M, G, T suffixes (powers of 1024) or 0x hex.\n"
"PROT is r, rw or none (default rw); a file is opened read-write for w.\n"
"PATH must not contain ':'. Objects may be repeated.\n";

static const char usage_rm[] =
"Usage: mshare rm [--mount DIR] NAME...\n"
"\n"
"Remove regions (or empty directories). Processes attached to a removed\n"
"region keep it until they detach.\n";

static const char usage_run[] =
"Usage: mshare run [--ro] [--at ADDR] [--mount DIR] NAME -- CMD [ARGS]\n"
"\n"
"exec(2) detaches every mapping, so run cannot hand CMD an attachment.\n"
"It hands CMD the open region instead: it opens NAME (read-write, or\n"
"read-only with --ro), checks that it attaches, and executes CMD with\n"
"  MSHARE_PATH  the region's path\n"
"  MSHARE_FD    the open region file descriptor (inherited)\n"
"  MSHARE_ADDR  where to attach, 0x hex: ADDR, else the region's start\n"
"               (its first attach address, the one stored pointers use;\n"
"               run sets it, between 16 and 48 TiB, if it is not set)\n"
"  MSHARE_SIZE  the region size in bytes, decimal\n"
"  MSHARE_PROT  rw, or r with --ro\n"
"CMD attaches with\n"
"  mmap((void *)MSHARE_ADDR, MSHARE_SIZE, PROT_READ[|PROT_WRITE],\n"
"       MAP_SHARED, MSHARE_FD, 0)\n"
"which the kernel honours when the address is free in CMD.\n"
"\n"
"  -r, --ro         read-only\n"
"  -A, --at ADDR    recommend ADDR (aligned) instead of the start\n"
"  -m, --mount DIR  the msharefs mount\n"
"\n"
"Exits with CMD's status; 126 if CMD cannot be run, 127 if not found.\n";

/*
 * Common option handling: returns the getopt result for anything the
 * subcommand must handle itself; exits for --help and bad options.
 */
static int next_opt(int argc, char **argv, const char *shortopts,
		    const struct option *longopts, const char *usage)
{
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);

	switch (c) {
	case 'h':
		fputs(usage, stdout);
		exit(EX_OK);
	case 'm':
		mount_dir = optarg;
		break;
	case 'b':
		opt_bytes = true;
		break;
	case 'J':
		opt_json = true;
		break;
	case '?':
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		exit(EX_USAGE);
	}
	return c;
}

static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", cmd);
	return EX_USAGE;
}

/* ---- ls ---------------------------------------------------------------- */

struct entry {
	char *name;		/* as shown: relative to the mount if inside */
	struct stat st;
	struct stats s;
	char pids[128];		/* the processes seen attached, comma-separated */
	long last_pid;
};

struct list {
	struct entry *e;
	size_t n;
	int failed;
};

static struct entry *new_entry(struct list *l, const char *name,
			       const struct stat *st)
{
	struct entry *e;

	l->e = realloc(l->e, (l->n + 1) * sizeof(*l->e));
	if (!l->e) {
		msg_err(ENOMEM, "malloc");
		exit(EX_FAIL);
	}
	e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->st = *st;
	return e;
}

static void add_region(struct list *l, const char *path, const char *name,
		       const struct stat *st)
{
	struct entry *e = new_entry(l, name, st);
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		e->s.open_err = errno;
		return;
	}
	read_stats(fd, &e->s);
	close(fd);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
		      ((const struct entry *)b)->name);
}

static void walk(struct list *l, const char *path, const char *name,
		 bool top)
{
	struct dirent **ents;
	struct stat st;
	int i, n;

	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		msg_err(errno, "%s", path);
		l->failed = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char *p, *q;

		if (!strcmp(d, ".") || !strcmp(d, "..") ||
		    (top && !strcmp(d, MSHARE_INFO_NAME))) {
			free(ents[i]);
			continue;
		}
		p = join(path, d);
		q = join(name, d);
		if (lstat(p, &st)) {
			msg_err(errno, "%s", p);
			l->failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			walk(l, p, q, false);
		} else if (S_ISREG(st.st_mode)) {
			add_region(l, p, q, &st);
		}
		free(p);
		free(q);
		free(ents[i]);
	}
	free(ents);
}

/* ---- who attaches: /proc/PID/maps ------------------------------------ */

static struct entry *find_region(struct list *l, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].st.st_dev == dev && l->e[i].st.st_ino == ino)
			return &l->e[i];
	return NULL;
}

/* Add @pid to the PIDS of @e once, as long as there is room. */
static void add_pid(struct entry *e, long pid)
{
	size_t n = strlen(e->pids);
	char buf[24];

	if (e->last_pid == pid)
		return;
	e->last_pid = pid;
	snprintf(buf, sizeof(buf), "%s%ld", n ? "," : "", pid);
	if (n + strlen(buf) < sizeof(e->pids))
		strcat(e->pids, buf);
}

/*
 * A region of the mount (device @dev) unlinked while @pid attaches it at
 * [@start, @stop): it has no name in the mount any more, but its
 * attachment opens it through /proc/PID/map_files (for root), which gives
 * its stats. Only a region file of this very mount counts: a process in
 * another mount namespace may map anything at a path that reads the same.
 */
static struct entry *add_unlinked(struct list *l, long pid,
				  unsigned long start, unsigned long stop,
				  dev_t dev, ino_t ino, const char *name)
{
	struct entry *e;
	struct stat st;
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/map_files/%lx-%lx", pid, start,
		 stop);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_dev != dev ||
	    st.st_ino != ino || mshare_is_msharefs(fd) != 1) {
		close(fd);
		return NULL;
	}
	e = new_entry(l, name, &st);
	read_stats(fd, &e->s);
	close(fd);
	return e;
}

/*
 * The processes whose maps the caller may read name the regions they
 * attach: note their PIDs, and with @unlinked add the regions of this
 * mount that were unlinked while attached, "NAME (deleted)" as the maps
 * say (the preload shim unlinks its regions at once).
 */
static void scan_attached(struct list *l, bool unlinked)
{
	const char *mnt = mount_path();
	size_t mlen = strlen(mnt);
	struct dirent *de;
	struct stat ms;
	DIR *d;

	if (stat(mnt, &ms))
		unlinked = false;
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[64], line[PATH_MAX + 128];
		char *end;
		long pid;
		FILE *f;

		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long start, stop, ino;
			unsigned int maj, min;
			struct entry *e;
			int off = 0;
			char *name;
			size_t n;

			if (sscanf(line, "%lx-%lx %*s %*s %x:%x %lu %n", &start,
				   &stop, &maj, &min, &ino, &off) < 5 || !off)
				continue;
			name = line + off;
			n = strcspn(name, "\n");
			name[n] = '\0';
			if (strncmp(name, mnt, mlen) || name[mlen] != '/')
				continue;
			e = find_region(l, makedev(maj, min), ino);
			if (!e && unlinked && makedev(maj, min) == ms.st_dev &&
			    n > 10 && !strcmp(name + n - 10, " (deleted)"))
				e = add_unlinked(l, pid, start, stop, ms.st_dev,
						 ino, name + mlen + 1);
			if (e)
				add_pid(e, pid);
		}
		fclose(f);
	}
	closedir(d);
}

/* A stat cell: the value, or "-" when the region could not be read. */
static const char *cell(bool known, u64 v, char *buf, size_t len)
{
	if (!known)
		return "-";
	return human(v, buf, len);
}

static const char *count_cell(bool known, u64 v, char *buf, size_t len)
{
	if (!known)
		return "-";
	snprintf(buf, len, "%llu", v);
	return buf;
}

#define NCOL 9

static const char *const col_names[NCOL] = {
	"PATH", "SIZE", "OBJECTS", "RSS", "PGTABLES", "ATTACHED", "OWNER",
	"MODE", "PIDS"
};

/* Text columns are left-aligned, numbers right-aligned. */
static const bool col_left[NCOL] = { 1, 0, 0, 0, 0, 0, 1, 1, 1 };

/* The columns ls shows, in order (--output): all but PIDS by default. */
#define NCOL_DEFAULT (NCOL - 1)
static int cols_shown[4 * NCOL] = { 0, 1, 2, 3, 4, 5, 6, 7 };
static int ncols_shown = NCOL_DEFAULT;

/*
 * Parse --output LIST: names separated by commas, any case; "+LIST"
 * appends to the default columns. 0, or -1 with the bad name in @bad.
 */
static int parse_columns(const char *arg, char *bad, size_t len)
{
	char *copy, *name, *save = NULL;
	int i, n = 0;

	if (*arg == '+') {
		/* After the default columns, whatever an earlier -o chose. */
		for (n = 0; n < NCOL_DEFAULT; n++)
			cols_shown[n] = n;
		arg++;
	}
	copy = xstrdup(arg);
	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NCOL; i++)
			if (!strcasecmp(name, col_names[i]))
				break;
		if (i == NCOL || n == (int)(sizeof(cols_shown) /
					    sizeof(cols_shown[0]))) {
			snprintf(bad, len, "%s", name);
			free(copy);
			return -1;
		}
		cols_shown[n++] = i;
	}
	free(copy);
	if (!n) {
		snprintf(bad, len, "%s", arg);
		return -1;
	}
	ncols_shown = n;
	return 0;
}

static void ls_row(const struct entry *e, char cols[NCOL][64], const char **c)
{
	const struct stats *s = &e->s;

	c[0] = e->name;
	c[1] = human(e->st.st_size, cols[1], 64);
	c[2] = count_cell(s->have_stats, s->nobjects, cols[2], 64);
	c[3] = cell(s->have_stats, s->rss, cols[3], 64);
	c[4] = cell(s->have_stats, s->pgtables, cols[4], 64);
	c[5] = count_cell(s->have_stats, s->attach, cols[5], 64);
	c[6] = user_name(e->st.st_uid, cols[6], 64);
	snprintf(cols[7], 64, "%04o", (unsigned int)(e->st.st_mode & 07777));
	c[7] = cols[7];
	c[8] = e->pids[0] ? e->pids : "-";
}

/* A cell of --raw output: blanks, controls and backslashes as \x<hex>. */
static void raw_cell(const char *v)
{
	const unsigned char *p;

	for (p = (const unsigned char *)v; *p; p++)
		if (*p <= ' ' || *p == '\\' || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
}

static void ls_table(const struct list *l)
{
	char cols[NCOL][64];
	const char *c[NCOL];
	int w[NCOL], i, k;
	size_t r;

	for (i = 0; i < NCOL; i++)
		w[i] = strlen(col_names[i]);
	for (r = 0; r < l->n && !opt_raw; r++) {
		ls_row(&l->e[r], cols, c);
		for (i = 0; i < NCOL; i++)
			if ((int)strlen(c[i]) > w[i])
				w[i] = strlen(c[i]);
	}
	for (r = opt_noheadings; r <= l->n; r++) {
		if (r == 0)
			memcpy(c, col_names, sizeof(c));
		else
			ls_row(&l->e[r - 1], cols, c);
		for (k = 0; k < ncols_shown; k++) {
			i = cols_shown[k];
			if (k)
				putchar(' ');
			if (opt_raw)
				raw_cell(c[i]);
			/* No trailing blanks after a left-aligned last column. */
			else if (k == ncols_shown - 1 && col_left[i])
				fputs(c[i], stdout);
			else
				printf("%*s", col_left[i] ? -w[i] : w[i], c[i]);
		}
		putchar('\n');
	}
}

static void json_region(const struct entry *e, const char *indent)
{
	const struct stats *s = &e->s;
	char buf[64];

	printf("%s{\"path\": ", indent);
	json_str(e->name);
	printf(", ");
	json_num("size", true, e->st.st_size, true);
	json_num("start", s->have_start, s->start, true);
	json_num("objects", s->have_stats, s->nobjects, true);
	json_num("rss", s->have_stats, s->rss, true);
	json_num("pgtables", s->have_stats, s->pgtables, true);
	json_num("attachments", s->have_stats, s->attach, true);
	printf("\"owner\": ");
	json_str(user_name(e->st.st_uid, buf, sizeof(buf)));
	printf(", \"uid\": %u, \"group\": ", (unsigned int)e->st.st_uid);
	json_str(group_name(e->st.st_gid, buf, sizeof(buf)));
	printf(", \"gid\": %u, \"mode\": \"%04o\", \"pids\": [%s]",
	       (unsigned int)e->st.st_gid,
	       (unsigned int)(e->st.st_mode & 07777), e->pids);
}

static void json_objects(const struct stats *s)
{
	size_t i;

	printf(", \"objects_list\": ");
	if (!s->have_stats) {
		printf("null");
		return;
	}
	printf("[");
	for (i = 0; i < s->nobj; i++) {
		const struct mshare_object *o = &s->obj[i];

		printf("%s\n    {\"offset\": %llu, \"size\": %llu, "
		       "\"prot\": \"%s\", \"file_offset\": %llu, \"backing\": ",
		       i ? "," : "", (u64)o->region_offset, (u64)o->size,
		       prot_str(o->prot), (u64)o->file_offset);
		json_str(o->backing);
		printf("}");
	}
	printf("%s]", s->nobj ? "\n  " : "");
}

static void ls_json(const struct list *l)
{
	size_t r;

	printf("{\"regions\": [");
	for (r = 0; r < l->n; r++) {
		printf("%s\n", r ? "," : "");
		json_region(&l->e[r], "  ");
		printf("}");
	}
	printf("%s]}\n", l->n ? "\n" : "");
}

/* The name to show for @path: relative to the mount when inside it. */
static const char *shown_name(const char *path, const char *arg)
{
	size_t n = strlen(mount_path());

	if (!strncmp(path, mount_path(), n) && path[n] == '/')
		return path + n + 1;
	return arg;
}

static int cmd_ls(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'r' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "mount", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct list l = { 0 };
	struct stat st;
	char bad[64];
	size_t r;
	int i, c;

	while ((c = next_opt(argc, argv, "bJrno:m:h", lo, usage_ls)) != -1) {
		switch (c) {
		case 'r':
			opt_raw = true;
			break;
		case 'n':
			opt_noheadings = true;
			break;
		case 'o':
			if (parse_columns(optarg, bad, sizeof(bad)))
				return usage_error(argv[0],
						   "unknown column '%s'", bad);
			break;
		}
	}
	if (opt_json && opt_raw)
		return usage_error(argv[0], "--json and --raw exclude each other");
	if (check_mount())
		return EX_FAIL;
	if (optind == argc)
		walk(&l, mount_path(), "", true);
	for (i = optind; i < argc; i++) {
		char *p = region_path(argv[i]);

		if (stat(p, &st)) {
			msg_err(errno, "%s", p);
			l.failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			walk(&l, p, shown_name(p, argv[i]), false);
		} else {
			add_region(&l, p, shown_name(p, argv[i]), &st);
		}
		free(p);
	}
	scan_attached(&l, optind == argc);
	qsort(l.e, l.n, sizeof(*l.e), name_cmp);
	if (opt_json)
		ls_json(&l);
	else
		ls_table(&l);
	for (r = 0; r < l.n; r++) {
		free(l.e[r].name);
		free_stats(&l.e[r].s);
	}
	free(l.e);
	return l.failed ? EX_FAIL : EX_OK;
}

/* ---- stat -------------------------------------------------------------- */

static void stat_text(const struct entry *e)
{
	const struct stats *s = &e->s;
	char b1[64], b2[64];
	size_t i;

	printf("region:      %s\n", e->name);
	printf("size:        %s\n", human(e->st.st_size, b1, sizeof(b1)));
	if (s->have_start && s->start)
		printf("start:       0x%llx\n", s->start);
	else
		printf("start:       %s\n", s->have_start ? "never attached" : "-");
	printf("attachments: %s\n", count_cell(s->have_stats, s->attach,
					       b1, sizeof(b1)));
	printf("pids:        %s\n", e->pids[0] ? e->pids : "-");
	printf("rss:         %s\n", cell(s->have_stats, s->rss, b1, sizeof(b1)));
	printf("page tables: %s\n", cell(s->have_stats, s->pgtables, b1,
					 sizeof(b1)));
	printf("owner:       %s:%s\n", user_name(e->st.st_uid, b1, sizeof(b1)),
	       group_name(e->st.st_gid, b2, sizeof(b2)));
	printf("mode:        %04o\n", (unsigned int)(e->st.st_mode & 07777));
	printf("objects:     %s\n", count_cell(s->have_stats, s->nobjects,
					       b1, sizeof(b1)));
	if (!s->nobj)
		return;
	printf("  %-14s %6s %-4s %-14s %s\n", "OFFSET", "SIZE", "PROT",
	       "FILE-OFFSET", "BACKING");
	for (i = 0; i < s->nobj; i++) {
		const struct mshare_object *o = &s->obj[i];

		snprintf(b1, sizeof(b1), "0x%llx", (u64)o->region_offset);
		snprintf(b2, sizeof(b2), "0x%llx", (u64)o->file_offset);
		printf("  %-14s ", b1);
		printf("%6s %-4s %-14s %s\n", human(o->size, b1, sizeof(b1)),
		       prot_str(o->prot), b2, o->backing);
	}
}

static int cmd_stat(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'J' },
		{ "mount", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct entry e = { 0 };
	char *path;
	int fd;

	while (next_opt(argc, argv, "bJm:h", lo, usage_stat) != -1)
		;
	if (optind != argc - 1)
		return usage_error(argv[0], "expected one NAME");
	path = region_path(argv[optind]);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &e.st)) {
		msg_err(errno, "%s", path);
		return EX_FAIL;
	}
	if (!S_ISREG(e.st.st_mode) || mshare_is_msharefs(fd) != 1) {
		msg("%s: not an msharefs region", path);
		return EX_FAIL;
	}
	e.name = path;
	read_stats(fd, &e.s);
	close(fd);
	scan_attached(&(struct list){ .e = &e, .n = 1 }, false);
	if (opt_json) {
		json_region(&e, "");
		json_objects(&e.s);
		printf("}\n");
	} else {
		stat_text(&e);
	}
	free_stats(&e.s);
	free(path);
	return EX_OK;
}

/* ---- create ------------------------------------------------------------ */

enum kind { ANON, FILEOBJ, HUGE };

struct spec {
	enum kind kind;
	char *path;
	u64 off, size, fileoff;
	int prot;
	const char *arg;
};

/*
 * Parse OFF:SIZE[:PROT] (ANON, HUGE) or PATH:OFF:SIZE[:FILEOFF][:PROT]:
 * a fourth field starting with a digit is FILEOFF, anything else PROT.
 */
static int parse_spec(enum kind kind, const char *arg, struct spec *sp)
{
	char *copy = xstrdup(arg), *f[6], *t;
	int n = 0, i = 0;

	memset(sp, 0, sizeof(*sp));
	sp->kind = kind;
	sp->arg = arg;
	sp->prot = PROT_READ | PROT_WRITE;
	/* strtok_r would merge empty fields; split on every ':'. */
	for (t = copy; n < 6; n++) {
		f[n] = t;
		t = strchr(t, ':');
		if (!t) {
			n++;
			break;
		}
		*t++ = '\0';
	}
	if (t)
		goto bad;
	if (kind == FILEOBJ) {
		if (n < 3 || !*f[0])
			goto bad;
		sp->path = xstrdup(f[i++]);
	}
	if (n - i < 2 || n - i > (kind == FILEOBJ ? 4 : 3))
		goto bad;
	if (parse_size(f[i++], &sp->off) || parse_size(f[i++], &sp->size))
		goto bad;
	if (kind == FILEOBJ && i < n && isdigit((unsigned char)*f[i]))
		if (parse_size(f[i++], &sp->fileoff))
			goto bad;
	if (i < n)
		sp->prot = parse_prot(f[i++]);
	if (sp->prot < 0)
		goto bad;
	if (i != n)
		goto bad;
	free(copy);
	return 0;
bad:
	free(copy);
	return -1;
}

static int place(int rfd, const char *region, const struct spec *sp)
{
	static const char *const what[] = { "anon", "file", "hugetlb" };
	int fd = -1, ret;

	if (sp->kind == FILEOBJ) {
		fd = open(sp->path, (sp->prot & PROT_WRITE ? O_RDWR : O_RDONLY)
			  | O_CLOEXEC);
		if (fd < 0) {
			msg_err(errno, "%s", sp->path);
			return -1;
		}
	}
	ret = mshare_map(rfd, sp->off, sp->size, sp->prot,
			 sp->kind == HUGE ? MAP_HUGETLB : 0, fd, sp->fileoff);
	if (ret)
		msg_err(errno, "%s: --%s %s", region, what[sp->kind], sp->arg);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int cmd_create(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'M' },
		{ "anon", required_argument, NULL, 'a' },
		{ "file", required_argument, NULL, 'f' },
		{ "hugetlb", required_argument, NULL, 'H' },
		{ "mount", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct spec *specs = xmalloc(argc * sizeof(*specs));
	long mode = -1;
	int c, n = 0, fd, i, rc = EX_FAIL;
	bool have_size = false;
	char *path, *end;
	u64 size = 0, a;

	while ((c = next_opt(argc, argv, "s:M:a:f:H:m:h", lo,
			     usage_create)) != -1) {
		switch (c) {
		case 's':
			if (parse_size(optarg, &size) || !size)
				return usage_error(argv[0], "bad size '%s'",
						   optarg);
			have_size = true;
			break;
		case 'M':
			errno = 0;
			mode = strtol(optarg, &end, 8);
			if (errno || !*optarg || *end || mode < 0 ||
			    mode > 07777)
				return usage_error(argv[0], "bad mode '%s'",
						   optarg);
			break;
		case 'a':
		case 'f':
		case 'H':
			if (parse_spec(c == 'a' ? ANON : c == 'f' ? FILEOBJ :
				       HUGE, optarg, &specs[n]))
				return usage_error(argv[0],
						   "bad object '%s'", optarg);
			n++;
			break;
		}
	}
	if (optind != argc - 1)
		return usage_error(argv[0], "expected one NAME");
	if (check_mount())
		return EX_FAIL;
	a = alignment();
	if (!a)
		return EX_FAIL;
	if (!have_size)
		size = a;
	if (mode < 0) {
		/* Single-threaded: reading the umask may set it for a moment. */
		mode_t mask = umask(0);

		umask(mask);
		mode = 0666 & ~mask;
	}
	path = region_path(argv[optind]);
	/* With its final mode from the start, never wider. */
	fd = mshare_region_create(AT_FDCWD, path, mode, 0);
	if (fd < 0) {
		msg_err(errno, "create %s", path);
		free(path);
		return EX_FAIL;
	}
	if (mshare_region_set_size(fd, size)) {
		if (errno == EINVAL && size % a)
			msg("%s: size %llu is not a multiple of the alignment %llu",
			    path, size, a);
		else
			msg_err(errno, "%s: size %llu", path, size);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (place(fd, path, &specs[i]))
			goto out;
	rc = EX_OK;
out:
	/* All or nothing: a region that could not be set up goes away. */
	if (rc != EX_OK && unlink(path))
		msg_err(errno, "remove %s", path);
	close(fd);
	for (i = 0; i < n; i++)
		free(specs[i].path);
	free(specs);
	free(path);
	return rc;
}

/* ---- rm ---------------------------------------------------------------- */

static int cmd_rm(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mount", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int i, rc = EX_OK;

	while (next_opt(argc, argv, "m:h", lo, usage_rm) != -1)
		;
	if (optind == argc)
		return usage_error(argv[0], "expected NAME");
	for (i = optind; i < argc; i++) {
		char *p = region_path(argv[i]);
		struct stat st;
		int ret;

		if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			ret = rmdir(p);
		else
			ret = unlink(p);
		if (ret) {
			msg_err(errno, "remove %s", p);
			rc = EX_FAIL;
		}
		free(p);
	}
	return rc;
}

/* ---- run --------------------------------------------------------------- */

static int setenv_fmt(const char *name, const char *fmt, ...)
{
	char buf[PATH_MAX + 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return setenv(name, buf, 1);
}

/*
 * Where run attaches a region nobody attached yet, which makes it the
 * region's start: 16 TiB plus a unit picked by the inode number, below
 * where the kernel puts stacks, the vDSO and randomised mmaps (top-down
 * from 128 TiB, randomised over 1 TiB) and PIE programs (from ~85 TiB),
 * so that the address is free in whatever program later attaches there.
 */
static u64 preferred_start(const struct stat *st, u64 align)
{
	if (!align || align > (1ULL << 39))
		return 0;
	return (1ULL << 44) + (st->st_ino % 64) * align;
}

/*
 * Attach once here: it proves CMD will be allowed to, and on a region never
 * attached it sets the start every later user can share. With @fixed the
 * address @at must be free.
 */
static int probe_attach(int fd, const char *path, u64 size, int prot,
			u64 at, bool fixed)
{
	void *p = mmap((void *)(uintptr_t)at, size, prot, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		msg_err(errno, "attach %s", path);
		return -1;
	}
	munmap(p, size);
	if (fixed && (uintptr_t)p != at) {
		msg("attach %s: address 0x%llx is not free", path, at);
		return -1;
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ro", no_argument, NULL, 'r' },
		{ "at", required_argument, NULL, 'A' },
		{ "mount", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct mshare_info info = { 0 };
	bool ro = false;
	u64 at = 0, a;
	struct stat st;
	char *path;
	int c, fd, prot;

	/* getopt moves NAME and what follows "--" (CMD ARGS) to the end. */
	while ((c = next_opt(argc, argv, "rA:m:h", lo, usage_run)) != -1) {
		switch (c) {
		case 'r':
			ro = true;
			break;
		case 'A':
			if (parse_size(optarg, &at) || !at)
				return usage_error(argv[0], "bad address '%s'",
						   optarg);
			break;
		}
	}
	/* NAME [--] CMD ARGS */
	if (optind >= argc)
		return usage_error(argv[0], "expected NAME");
	path = region_path(argv[optind++]);
	if (optind >= argc)
		return usage_error(argv[0], "expected a command after NAME");

	fd = open(path, ro ? O_RDONLY : O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		msg_err(errno, "%s", path);
		return EX_FAIL;
	}
	if (!S_ISREG(st.st_mode) || mshare_is_msharefs(fd) != 1) {
		msg("%s: not an msharefs region", path);
		return EX_FAIL;
	}
	if (!st.st_size) {
		msg("%s: region has no size yet", path);
		return EX_FAIL;
	}
	a = alignment();
	if (at && a && at % a) {
		msg("--at %#llx: not a multiple of the alignment %#llx", at, a);
		return EX_FAIL;
	}
	prot = ro ? PROT_READ : PROT_READ | PROT_WRITE;
	if (pread(fd, &info, sizeof(info), 0) != sizeof(info)) {
		msg_err(errno, "read %s", path);
		return EX_FAIL;
	}
	if (probe_attach(fd, path, st.st_size, prot,
			 at ? at : info.start ? 0 : preferred_start(&st, a),
			 at))
		return EX_FAIL;
	if (!at) {
		if (pread(fd, &info, sizeof(info), 0) != sizeof(info)) {
			msg_err(errno, "read %s", path);
			return EX_FAIL;
		}
		at = info.start;
	}
	if (setenv("MSHARE_PATH", path, 1) ||
	    setenv_fmt("MSHARE_FD", "%d", fd) ||
	    setenv_fmt("MSHARE_ADDR", "%#llx", at) ||
	    setenv_fmt("MSHARE_SIZE", "%llu", (u64)st.st_size) ||
	    setenv("MSHARE_PROT", ro ? "r" : "rw", 1)) {
		msg_err(errno, "setenv");
		return EX_FAIL;
	}
	execvp(argv[optind], argv + optind);
	c = errno;
	msg_err(c, "%s", argv[optind]);
	return c == ENOENT ? 127 : 126;
}

/* ---- main -------------------------------------------------------------- */

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "ls", cmd_ls },
	{ "list", cmd_ls },
	{ "stat", cmd_stat },
	{ "create", cmd_create },
	{ "rm", cmd_rm },
	{ "run", cmd_run },
};

int main(int argc, char **argv)
{
	static char sub[64];
	size_t i;
	int arg = 1;

	/* Global options come before the command. */
	while (arg < argc && argv[arg][0] == '-') {
		if (!strcmp(argv[arg], "--help") || !strcmp(argv[arg], "-h")) {
			fputs(usage_main, stdout);
			return EX_OK;
		} else if ((!strcmp(argv[arg], "--mount") ||
			    !strcmp(argv[arg], "-m")) && arg + 1 < argc) {
			mount_dir = argv[arg + 1];
			arg += 2;
		} else if (!strncmp(argv[arg], "--mount=", 8)) {
			mount_dir = argv[arg++] + 8;
		} else {
			return usage_error(prog, "unknown option '%s'",
					   argv[arg]);
		}
	}
	if (arg >= argc)
		return usage_error(prog, "expected a command");
	if (!strcmp(argv[arg], "help")) {
		fputs(usage_main, stdout);
		return EX_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[arg], commands[i].name))
			continue;
		snprintf(sub, sizeof(sub), "%s %s", prog, commands[i].name);
		argv[arg] = sub;
		return commands[i].fn(argc - arg, argv + arg);
	}
	return usage_error(prog, "unknown command '%s'", argv[arg]);
}
