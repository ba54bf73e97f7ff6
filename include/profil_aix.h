/*
 * profil_aix.h - AIX's multi-range profil() argument (see profil(3)).
 *
 *   #include <profil.h>
 *   #include <profil_aix.h>
 *   struct prof profs[] = { {lo1, hi1, buf1, size1, (unsigned)-1},
 *                           {lo2, hi2, buf2, size2, 0x8000},
 *                           {0, 0, 0, 0, 0} };           (p_high == 0 ends it)
 *   profil((unsigned short *)profs, (size_t)-1, 0, 0);
 *
 * A sample at pc with p_low <= pc < p_high counts, as a 16-bit counter, in
 * p_buff[floor(floor((pc - p_low) / 2) * p_scale / 65536)] when that index
 * is below p_bufsize / 2.  p_bufsize is in bytes.  Entries are ordered by
 * ascending p_high and must not overlap.  p_scale == (unsigned)-1 asks for
 * the largest scale that maps all of [p_low, p_high) into the buffer;
 * p_scale 0 or 1 leaves the entry out.  The array is searched for its
 * terminator among at most PROFIL_AIX_MAX_RANGES + 1 entries.
 *
 * This header is separate from <profil.h> because its tag clashes with
 * glibc's <sys/profil.h> struct prof (the one sprofil() takes): a
 * translation unit can include one or the other, not both.
 */
#ifndef PROFIL_AIX_H
#define PROFIL_AIX_H

#ifdef _PROFIL_H
#error "<profil_aix.h> and <sys/profil.h> both define struct prof"
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct prof {
	void *p_low;            /* first pc of the range */
	void *p_high;           /* one past its last pc; 0 ends the array */
	unsigned short *p_buff; /* 16-bit counters, 2-byte aligned */
	int p_bufsize;          /* size of p_buff in bytes, > 0 */
	unsigned int p_scale;   /* as profil()'s scale; (unsigned)-1: computed */
};

/* Largest number of entries before the terminator. */
#define PROFIL_AIX_MAX_RANGES (1u << 20)
/* p_scale value that asks for the scale to be computed. */
#define PROFIL_AIX_SCALE_AUTO (~0u)

#ifdef __cplusplus
}
#endif

#endif /* PROFIL_AIX_H */
