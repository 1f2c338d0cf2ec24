// SPDX-License-Identifier: BSD-2-Clause
/* The shared library of the unwinding fixtures (tests/unwind/fixture.c). */
#include "fixlib.h"

volatile unsigned long fixlib_sink;

__attribute__((noinline)) static void lib_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fixlib_sink += i * 7 + (fixlib_sink >> 3);
}

/* A call into the library that calls back into the program, then works itself. */
__attribute__((noinline)) unsigned long fixlib_work(unsigned long n,
						    unsigned long (*cb)(unsigned long))
{
	unsigned long r = cb(n);

	lib_spin(n);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* A call so short that the time goes to the PLT and the loop around it. */
__attribute__((noinline)) unsigned long fixlib_tiny(unsigned long x)
{
	return x * 3 + 1;
}
