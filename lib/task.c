// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fg/task.h"

/* Read a small /proc file whole into buf; its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

bool fg_task_alive(const char *proc, uint32_t id)
{
	char path[128], buf[512];
	const char *paren;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/stat", proc, id);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	/* "PID (COMM) STATE ...": the name may hold ')' itself, so the last one */
	paren = strrchr(buf, ')');
	return !paren || (paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X');
}

uint32_t fg_task_tgid(const char *proc, uint32_t tid)
{
	char path[128], buf[4096];
	const char *p;
	unsigned long tgid;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", proc, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%lu", &tgid) != 1 || tgid > UINT32_MAX)
		return 0;
	return (uint32_t)tgid;
}

int fg_caps_effective(uint64_t *caps)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	*caps = (uint64_t)data[1].effective << 32 | data[0].effective;
	return 0;
}
