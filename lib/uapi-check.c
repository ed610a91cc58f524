// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Print the layout of the msharefs UAPI as mshare.h sees it: built once
 * with the kernel's <linux/msharefs.h> and once with mshare.h's own copy
 * (-DMSHARE_OWN_UAPI), the two outputs must be the same.
 */
#include <stddef.h>
#include <stdio.h>

#include "mshare.h"

#define FIELD(s, f)	printf(#s "." #f " %zu %zu\n", offsetof(struct s, f), \
			       sizeof(((struct s *)0)->f))

int main(void)
{
	printf("mshare_info %zu\n", sizeof(struct mshare_info));
	FIELD(mshare_info, start);
	FIELD(mshare_info, size);
	printf("mshare_create %zu\n", sizeof(struct mshare_create));
	FIELD(mshare_create, region_offset);
	FIELD(mshare_create, size);
	FIELD(mshare_create, offset);
	FIELD(mshare_create, prot);
	FIELD(mshare_create, flags);
	FIELD(mshare_create, fd);
	FIELD(mshare_create, reserved);
	printf("mshare_unmap %zu\n", sizeof(struct mshare_unmap));
	FIELD(mshare_unmap, region_offset);
	FIELD(mshare_unmap, size);
	printf("fd signed %d\n", (__typeof__(((struct mshare_create *)0)->fd))-1 < 0);
	printf("MSHAREFS_CREATE_MAPPING %#lx\n", (unsigned long)MSHAREFS_CREATE_MAPPING);
	printf("MSHAREFS_UNMAP %#lx\n", (unsigned long)MSHAREFS_UNMAP);
	return 0;
}
