/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The processes a filtered run of fg-sample follows (-p, -t, COMMAND): a set
 * of thread group ids, and the filter that keeps their side-band records.
 * The BPF program filters the samples in the kernel; the side-band events
 * (mappings, comm, fork, exit, creds) come for every process, and this set
 * says which of them to write.  With `follow`, a process forked by a target
 * becomes one, as the records go by in time order (a fork before its child's
 * events).
 *
 *	struct fg_targets *t = fg_targets_new(true);
 *	fg_targets_add(t, pid);
 *	fg_reorder_flush(q, upto, w, fg_targets_keep, t);
 *	fg_targets_free(t);
 */
#ifndef FG_TARGETS_H
#define FG_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_targets;

/* Never NULL. */
struct fg_targets *fg_targets_new(bool follow);
/* NULL-safe. */
void fg_targets_free(struct fg_targets *t);
/* Follow process `tgid` (again: no change). */
void fg_targets_add(struct fg_targets *t, uint32_t tgid);
bool fg_targets_has(const struct fg_targets *t, uint32_t tgid);
/* The processes followed, in the order added: 0 <= i < fg_targets_count(t). */
size_t fg_targets_count(const struct fg_targets *t);
uint32_t fg_targets_at(const struct fg_targets *t, size_t i);
/*
 * Whether to write a record (type, payload of len bytes), as fg_reorder_keep_fn
 * with `targets` a struct fg_targets: samples and lost records always; a
 * side-band record when its process (the pid it starts with) is followed.
 * A fork of a followed process adds the child first, with `follow`.
 */
bool fg_targets_keep(void *targets, uint32_t type, const void *payload, size_t len);

#endif
