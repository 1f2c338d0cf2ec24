// SPDX-License-Identifier: BSD-2-Clause
/* The processes a filtered run follows, and the filter of their side-band records. */
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/record.h"
#include "fg/targets.h"

struct fg_targets {
	struct fg_hash *tgids;
	bool follow;
};

struct fg_targets *fg_targets_new(bool follow)
{
	struct fg_targets *t = fg_xcalloc(1, sizeof(*t));

	t->tgids = fg_hash_new(0);
	t->follow = follow;
	return t;
}

void fg_targets_free(struct fg_targets *t)
{
	if (!t)
		return;
	fg_hash_free(t->tgids);
	free(t);
}

void fg_targets_add(struct fg_targets *t, uint32_t tgid)
{
	fg_hash_upsert(t->tgids, &tgid, sizeof(tgid), NULL);
}

bool fg_targets_has(const struct fg_targets *t, uint32_t tgid)
{
	return fg_hash_get(t->tgids, &tgid, sizeof(tgid)) != NULL;
}

size_t fg_targets_count(const struct fg_targets *t)
{
	return fg_hash_count(t->tgids);
}

uint32_t fg_targets_at(const struct fg_targets *t, size_t i)
{
	uint32_t tgid;

	memcpy(&tgid, fg_hash_at(t->tgids, i)->key, sizeof(tgid));
	return tgid;
}

bool fg_targets_keep(void *targets, uint32_t type, const void *payload, size_t len)
{
	struct fg_targets *t = targets;
	uint32_t pid;

	/* (the kernel's code, BPF programs', is every process's) */
	if (type == FG_REC_SAMPLE || type == FG_REC_LOST || type == FG_REC_KSYM || len < 4)
		return true;
	memcpy(&pid, payload, 4); /* every other side-band record starts with the pid */
	if (type == FG_REC_FORK && t->follow && len >= sizeof(struct fg_rec_task)) {
		struct fg_rec_task task;

		memcpy(&task, payload, sizeof(task));
		if (fg_targets_has(t, task.ppid))
			fg_targets_add(t, task.pid);
	}
	return fg_targets_has(t, pid);
}
