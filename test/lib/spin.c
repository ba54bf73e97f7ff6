/*
 * spin.c - libspin.so: CPU-burning code in a shared library of its own, so
 * the multi-range tests have work in a second mapping, far from the test
 * executable's text.  Tests dlopen() it from the runner's directory.
 */
#include "runner.h"

SPIN_FN(spinlib_spin, 40)
SPIN_FN(spinlib_spin2, 41)
