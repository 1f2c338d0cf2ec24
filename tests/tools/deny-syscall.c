// SPDX-License-Identifier: BSD-2-Clause
/*
 * deny-syscall [-e ERRNO] SYSCALL[,SYSCALL...] COMMAND [ARG...]: run COMMAND
 * with the system calls named failing with ERRNO (default EPERM), as a
 * container's seccomp profile makes them fail (Docker's default profile
 * denies perf_event_open and bpf).  SYSCALL is a name from the table below
 * or a number.  The filter is installed with no_new_privs and passes on to
 * everything COMMAND runs.  Exit 125 on a usage error or when the filter
 * cannot be installed, 127 when COMMAND cannot be run.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "deny-syscall: add this architecture's AUDIT_ARCH"
#endif

#define MAX_DENY 16

static const struct {
	const char *name;
	long nr;
} names[] = {
    {"bpf", SYS_bpf},	  {"perf_event_open", SYS_perf_event_open},
    {"mmap", SYS_mmap},	  {"openat", SYS_openat},
    {"prctl", SYS_prctl}, {"ioctl", SYS_ioctl},
};

static void usage(void)
{
	fputs("usage: deny-syscall [-e errno] syscall[,syscall...] command [arg ...]\n", stderr);
	exit(125);
}

static long syscall_nr(const char *s)
{
	char *end;
	long nr;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].nr;
	errno = 0;
	nr = strtol(s, &end, 10);
	if (errno || end == s || *end || nr < 0 || nr > 4095) {
		fprintf(stderr, "deny-syscall: unknown system call '%s'\n", s);
		exit(125);
	}
	return nr;
}

int main(int argc, char **argv)
{
	struct sock_filter f[4 + 2 * MAX_DENY + 1];
	long deny[MAX_DENY];
	unsigned n = 0, k = 0;
	unsigned long err = EPERM;
	char *list, *tok, *save;

	if (argc > 2 && strcmp(argv[1], "-e") == 0) {
		char *end;

		errno = 0;
		err = strtoul(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || err == 0 || err > 4095)
			usage();
		argv += 2;
		argc -= 2;
	}
	if (argc < 3)
		usage();
	list = argv[1];
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_DENY)
			usage();
		deny[n++] = syscall_nr(tok);
	}
	if (!n)
		usage();

	/* another architecture's calls are let through; this one's named calls fail */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < n; i++) {
		f[k++] =
		    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)deny[i], 0, 1);
		f[k++] =
		    (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (__u32)err);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("deny-syscall: prctl(PR_SET_NO_NEW_PRIVS)");
		return 125;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("deny-syscall: seccomp(SECCOMP_SET_MODE_FILTER)");
		return 125;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "deny-syscall: cannot run '%s': %s\n", argv[2], strerror(errno));
	return 127;
}
