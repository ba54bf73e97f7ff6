// symcxx.cc - a C++ method whose name the symbolizer must demangle.
#include "symprog.h"

namespace ns {
struct Klass {
	probe_fn *probe;
	int method(int x);
};

__attribute__((noinline)) int Klass::method(int x)
{
	probe(P_CXX); /* @cxx */
	return x + 1;
}
} // namespace ns

extern "C" int symcxx_entry(probe_fn *probe)
{
	ns::Klass k = {probe};
	return k.method(1);
}
