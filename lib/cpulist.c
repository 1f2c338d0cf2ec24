// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/cpulist.h"

bool fg_cpulist_has(const int *cpus, int n, int cpu)
{
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

int fg_cpulist_parse(const char *s, int *cpus, int *n, int max)
{
	if (!*s)
		return -EINVAL;
	while (*s) {
		char *end;
		long a, b;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			b = strtol(s, &end, 10);
			if (b < a)
				return -EINVAL;
		}
		if (b >= max)
			return -E2BIG;
		for (long c = a; c <= b; c++) {
			if (fg_cpulist_has(cpus, *n, (int)c))
				continue;
			if (*n >= max)
				return -E2BIG;
			cpus[(*n)++] = (int)c;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -EINVAL;
		s = end;
	}
	return 0;
}

int fg_cpus_online(const char *path, int *cpus, int max)
{
	char buf[4096];
	int fd = open(path ? path : "/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	int n = 0, rc;
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	rc = len < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	if (len == 0)
		return -EINVAL;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	rc = fg_cpulist_parse(buf, cpus, &n, max);
	return rc < 0 ? rc : n;
}
