/* A C++ program whose template functions hold inlined member functions, for fg-fold --inline tests. */
#include <cstdlib>
volatile unsigned long sink;
namespace fixture {
template <typename T> struct Counter {
	inline __attribute__((always_inline)) T count(T n)
	{
		for (T i = 0; i < n; i++)
			sink += (unsigned long)i;
		return n;
	}
};
template <typename T> __attribute__((noinline, noipa)) T twice(T v)
{
	Counter<T> c;
	return c.count(v) * 2;
}
} // namespace fixture
int main(int argc, char **argv)
{
	long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000;
	return (int)(fixture::twice<long>(n) + fixture::twice<int>((int)n)) & 1;
}
