/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Minimal unit test harness: one "ok N - name" or "not ok N - name" line
 * per test and a closing "N passed, N failed". A failed CHECK ends the
 * test; each test must also leave no file descriptor open.
 */
#ifndef APEXSIM_UNIT_H
#define APEXSIM_UNIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

void unit_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			unit_fail(__FILE__, __LINE__, "%s", #cond);	\
			return;						\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);	\
		if (a_ != b_) {						\
			unit_fail(__FILE__, __LINE__,			\
				  "%s == %s: %#" PRIx64 " != %#" PRIx64, \
				  #a, #b, a_, b_);			\
			return;						\
		}							\
	} while (0)

/* Each suite ends with an entry whose name is NULL. */
extern const struct unit_test chip_tests[];
extern const struct unit_test engine_tests[];
extern const struct unit_test vfio_user_tests[];
extern const struct unit_test control_tests[];
extern const struct unit_test guest_mem_tests[];

#endif /* APEXSIM_UNIT_H */
