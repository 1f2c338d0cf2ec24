/* SPDX-License-Identifier: BSD-2-Clause */
/* Facts about processes and threads from /proc, and this process's capabilities. */
#ifndef FG_TASK_H
#define FG_TASK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * True while process or thread `id` runs: PROC/ID/stat exists and its state
 * is neither zombie nor dead (proc: "/proc" unless testing).
 */
bool fg_task_alive(const char *proc, uint32_t id);
/* The process (thread group) of thread `tid`, from PROC/TID/status; 0 when gone. */
uint32_t fg_task_tgid(const char *proc, uint32_t tid);
/* This process's effective capabilities as a bit mask (bit N: capability N).  0 or -errno. */
int fg_caps_effective(uint64_t *caps);

#define FG_CAP_SYS_ADMIN 21
#define FG_CAP_PERFMON 38
#define FG_CAP_BPF 39

#endif
