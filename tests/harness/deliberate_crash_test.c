// SPDX-License-Identifier: GPL-2.0
/*
 * Not part of the suite: make check-harness runs it to prove that a
 * program that crashes before printing its plan fails the run.
 */
#include <signal.h>
#include <stdio.h>

int main(void)
{
	fflush(stdout);
	raise(SIGSEGV);
	puts("TAP version 13\n1..1\nok 1 never reached");
	return 0;
}
