/*
 * rec.h - programs that `profil record` tests profile (test/rec/).  Each
 * hot function burns CPU by a fixed amount of work, not by watching a
 * clock, so their shares are known: equal work, equal time.
 */
#ifndef PROFIL_TEST_REC_H
#define PROFIL_TEST_REC_H

/* Units of work: about 10 ms of CPU each on the development machine. */
#define REC_UNIT 4000000UL

/* The same loop body everywhere, so equal units cost equal time.  salt
 * makes each copy's code differ: GCC merges identical functions
 * (-fipa-icf), which would give two hot functions one name. */
#define REC_BURN(units, salt) do { \
	volatile unsigned long rec_acc_ = (salt); \
	for (unsigned long rec_i_ = 0; rec_i_ < (units) * REC_UNIT; rec_i_++) \
		rec_acc_ += rec_i_ ^ (rec_acc_ >> 3); \
} while (0)

void lib_hot(unsigned long units);   /* librec.so */
void plug_hot(unsigned long units);  /* librecplug.so, dlopen'ed */

#endif
