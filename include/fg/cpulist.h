/* SPDX-License-Identifier: BSD-2-Clause */
/* CPU lists as the kernel writes them ("0-3,6"): for -C and /sys/devices/system/cpu/online. */
#ifndef FG_CPULIST_H
#define FG_CPULIST_H

#include <stdbool.h>

/*
 * Add the CPUs of list `s` ("0,2-3") to cpus[*n], skipping those already
 * there.  0, -EINVAL for a malformed list, -E2BIG when more than `max` CPUs
 * or a CPU number of `max` or more.
 */
int fg_cpulist_parse(const char *s, int *cpus, int *n, int max);
/* The CPUs listed in `path` (NULL: /sys/devices/system/cpu/online).  Their number, or -errno. */
int fg_cpus_online(const char *path, int *cpus, int max);
/* True when `cpu` is among the n CPUs of cpus[]. */
bool fg_cpulist_has(const int *cpus, int n, int cpu);

#endif
