// SPDX-License-Identifier: BSD-2-Clause
/* fg-fold's command line, checked.  See include/fg/fold_args.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/fold_args.h"
#include "fg/foldopts.h"
#include "fg/util.h"

static int add_pids(struct fg_fold_args *a, const char *arg, char *why, size_t len)
{
	char *copy = fg_xstrdup(arg), *save = NULL;
	int err = 0;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (fg_parse_u64(t, 0, UINT32_MAX, &v) != 0) {
			err = fg_refuse(why, len, "invalid pid '%s'", t);
			break;
		}
		FG_ALLOC_GROW(a->pids, a->n_pids + 1, a->a_pids);
		a->pids[a->n_pids++] = v;
	}
	free(copy);
	return err;
}

/* --state S,D: each name as fg-sym and perf's sched_switch print prev_state */
static int add_states(struct fg_fold_args *a, const char *arg, char *why, size_t len)
{
	char *copy = fg_xstrdup(arg), *save = NULL;

	FG_ALLOC_GROW(a->copies, a->n_copies + 1, a->a_copies);
	a->copies[a->n_copies++] = copy;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strlen(t) > 2 || !strchr("RSDTtXZPI", t[0]) || (t[1] && strcmp(t, "R+") != 0))
			return fg_refuse(
			    why, len, "invalid task state '%s' (R, R+, S, D, T, t, X, Z, P or I)",
			    t);
		FG_ALLOC_GROW(a->states, a->n_states + 1, a->a_states);
		a->states[a->n_states++] = t;
	}
	if (!a->n_states)
		return fg_refuse(why, len, "invalid task state list '%s'", arg);
	return 0;
}

int fg_fold_arg(struct fg_fold_args *a, int c, const char *arg, char *why, size_t len)
{
	struct fg_fold_opts *o = &a->fold;

	switch (c) {
	case 'o':
		a->output = arg;
		return 0;
	case 'v':
		a->verbose = true;
		return 0;
	case FG_FOLD_ARG_ADDRS:
		o->include_addrs = true;
		return 0;
	case FG_FOLD_ARG_ALL:
		o->annotate_kernel = o->annotate_jit = true;
		return 0;
	case FG_FOLD_ARG_CONTEXT:
		o->inline_context = o->inline_frames = true;
		return 0;
	case FG_FOLD_ARG_INLINE:
		o->inline_frames = true;
		return 0;
	case FG_FOLD_ARG_JIT:
		o->annotate_jit = true;
		return 0;
	case FG_FOLD_ARG_KERNEL:
		o->annotate_kernel = true;
		return 0;
	case FG_FOLD_ARG_ONLY_COMM:
		FG_ALLOC_GROW(a->comms, a->n_comms + 1, a->a_comms);
		a->comms[a->n_comms++] = arg;
		return 0;
	case FG_FOLD_ARG_ONLY_PID:
		return add_pids(a, arg, why, len);
	case FG_FOLD_ARG_SKIP_AFTER:
		FG_ALLOC_GROW(a->skip_after, a->n_skip_after + 1, a->a_skip_after);
		a->skip_after[a->n_skip_after++] = arg;
		return 0;
	case FG_FOLD_ARG_SRCLINE:
		o->srcline = true;
		return 0;
	case FG_FOLD_ARG_STATE:
		return add_states(a, arg, why, len);
	case FG_FOLD_ARG_WALL:
		o->wall = true;
		return 0;
	default:
		return fg_fold_opt_why(c, arg, o, &a->every_ns, why, len);
	}
}

int fg_fold_args_check(struct fg_fold_args *a, char *why, size_t len)
{
	struct fg_fold_opts *o = &a->fold;

	o->skip_after = a->skip_after;
	o->n_skip_after = a->n_skip_after;
	o->only_comms = a->comms;
	o->n_only_comms = a->n_comms;
	o->only_pids = a->pids;
	o->n_only_pids = a->n_pids;
	o->states = a->states;
	o->n_states = a->n_states;
	if (!a->every_ns)
		return 0;
	if (!a->output)
		return fg_refuse(why, len, "--every needs -o DIR, the directory of the windows");
	if (o->input != FG_FOLD_AUTO && o->input != FG_FOLD_PERF)
		return fg_refuse(why, len, "--every reads perf script text, not %s input",
				 fg_fold_input_name(o->input));
	o->input = FG_FOLD_PERF;
	a->dir = a->output;
	a->output = NULL;
	return 0;
}

void fg_fold_args_release(struct fg_fold_args *a)
{
	free(a->skip_after);
	free(a->comms);
	free(a->states);
	for (size_t i = 0; i < a->n_copies; i++)
		free(a->copies[i]);
	free(a->copies);
	free(a->pids);
	*a = (struct fg_fold_args)FG_FOLD_ARGS_INIT;
}
