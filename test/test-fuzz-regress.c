/*
 * test-fuzz-regress.c - what the fuzz targets (fuzz/, issue 15) found in
 * the library, each as a test named after it.  The command's findings are
 * cases of test/cli/ring-scribbled.t and test/cli/named-files.t.
 */
#include "runner.h"

#include <stdint.h>
#include <sys/profil.h>
#include <sys/time.h>

#include "profil.h"

/* fuzz-forms: sprofil() stored the period through a misaligned tvp with
 * a struct access (undefined behaviour; UBSan stopped the program).  The
 * caller's pointer is stored through as bytes, as glibc's does on x86. */
TEST_IMPL(sprofil_tvp_misaligned)
{
	static unsigned short buf[256];
	_Alignas(16) unsigned char raw[sizeof(struct timeval) + 8];
	memset(raw, 0xee, sizeof raw);
	struct timeval *tvp = (struct timeval *)(void *)(raw + 1);
	struct prof p = {buf, sizeof buf, (size_t)(uintptr_t)&run_test_sprofil_tvp_misaligned,
	                 0x10000};
	ASSERT_OK(sprofil(&p, 1, tvp, 0));
	struct timeval tv;
	memcpy(&tv, raw + 1, sizeof tv);
	unsigned long want = (1000000ul + profil_hz() / 2) / profil_hz();
	ASSERT_EQ(tv.tv_sec, want / 1000000);
	ASSERT_EQ(tv.tv_usec, want % 1000000);
	ASSERT_EQ(raw[0], 0xee); /* nothing outside *tvp */
	ASSERT_EQ(raw[1 + sizeof tv], 0xee);
	ASSERT_OK(sprofil(NULL, 0, NULL, 0));
	return 0;
}
