// SPDX-License-Identifier: GPL-2.0
/*
 * Not part of the suite: make check-harness runs it to prove that a skip
 * tests/allowed-skips does not list fails the run. One test passes (so
 * that the program exits 0), one skips.
 */
#include "kselftest_harness.h"

TEST(passes)
{
	ASSERT_EQ(1, 1);
}

TEST(skips_on_purpose)
{
	SKIP(return, "a skip no list allows");
}

TEST_HARNESS_MAIN
