/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FIXLIB_H
#define FIXLIB_H
unsigned long fixlib_work(unsigned long n, unsigned long (*cb)(unsigned long));
unsigned long fixlib_tiny(unsigned long x);
#endif
