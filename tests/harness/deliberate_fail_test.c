// SPDX-License-Identifier: GPL-2.0
/*
 * Not part of the suite: make check-harness runs it to prove that a failing
 * test makes the runner fail. One test passes, one fails on purpose.
 */
#include "kselftest_harness.h"

TEST(passes)
{
	ASSERT_EQ(1, 1);
}

TEST(fails_on_purpose)
{
	ASSERT_EQ(1, 2);
}

TEST_HARNESS_MAIN
