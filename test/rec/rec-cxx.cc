// rec-cxx: a C++ program whose hot function has a namespaced, overloaded,
// templated context, so its name must come back demangled.
#include <cstdio>
#include <cstdlib>

#include "rec.h"

namespace recns {
template <typename T> struct Worker {
	__attribute__((noinline)) T hot(T units)
	{
		REC_BURN((unsigned long)units, 7);
		return units;
	}
};
} // namespace recns

int main(int argc, char **argv)
{
	long units = argc > 1 ? std::atol(argv[1]) : 30;
	recns::Worker<long> w;
	std::printf("cxx %ld\n", w.hot(units));
	return 0;
}
