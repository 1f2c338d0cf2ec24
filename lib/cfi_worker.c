// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fg/buf.h"
#include "fg/cfi_worker.h"
#include "fg/util.h"

/* processes gone without their exit record are looked for this often */
#define SWEEP_NS 5000000000ull

struct fg_cfi_worker {
	struct fg_cfi_loader *l;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock: what the writer queued (each: u32 type, u32 len, payload, padded to 8) */
	struct fg_buf queue;
	size_t max_bytes;
	bool stop;
	bool overflow; /* records were left out since the last batch: rescan */
	struct fg_cfi_worker_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* in the queue, a process to read from /proc (fg_cfi_worker_load()): not a record type */
#define LOAD_PID UINT32_MAX

/*
 * The records of one batch, to the loader (outside the lock); *loads, the processes
 * read.  Once the run is over (stop), no sample needs a process' tables any more: the
 * processes asked for are not read.
 */
static uint64_t feed(struct fg_cfi_loader *l, const struct fg_buf *b, bool stop, uint64_t *loads)
{
	uint64_t n = 0;

	for (size_t at = 0; at + 8 <= b->len;) {
		uint32_t hdr[2], pid;

		memcpy(hdr, b->data + at, sizeof(hdr));
		at += sizeof(hdr);
		if (hdr[0] == LOAD_PID && hdr[1] == sizeof(pid)) {
			memcpy(&pid, b->data + at, sizeof(pid));
			if (!stop) {
				fg_cfi_loader_rescan(l, pid);
				(*loads)++;
			}
		} else {
			fg_cfi_loader_record(l, hdr[0], b->data + at, hdr[1]);
			n++;
		}
		at += ((size_t)hdr[1] + 7) & ~(size_t)7;
	}
	return n;
}

static void *run(void *arg)
{
	struct fg_cfi_worker *w = arg;
	struct fg_buf batch = FG_BUF_INIT, swap;
	uint64_t loads = 0;
	uint64_t swept = mono_ns();
	bool again = false;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		bool overflow, stop;
		uint64_t n;

		/* (again: slots were freed while processes wait for room, read them now) */
		while (!w->queue.len && !w->overflow && !w->stop && !again) {
			struct timespec until;

			/* woken by the writer, or once a second to sweep */
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec++;
			if (pthread_cond_timedwait(&w->wake, &w->lock, &until) == ETIMEDOUT)
				break;
		}
		swap = w->queue;
		w->queue = batch;
		batch = swap;
		overflow = w->overflow;
		stop = w->stop;
		w->overflow = false;
		pthread_mutex_unlock(&w->lock);

		/* the loader is this thread's alone: the writer queues meanwhile */
		n = feed(w->l, &batch, stop, &loads);
		fg_buf_reset(&batch);
		if (overflow)
			fg_cfi_loader_rescan_all(w->l);
		if (mono_ns() - swept > SWEEP_NS) {
			fg_cfi_loader_sweep(w->l);
			swept = mono_ns();
		}
		again = fg_cfi_loader_sync(w->l);

		pthread_mutex_lock(&w->lock);
		w->st.records += n;
		w->st.loads = loads;
		w->st.rescans += overflow;
		w->st.batches++;
		if (stop && !w->queue.len)
			break;
	}
	pthread_mutex_unlock(&w->lock);
	fg_buf_release(&batch);
	return NULL;
}

int fg_cfi_worker_start(struct fg_cfi_worker **out, struct fg_cfi_loader *l, size_t max_bytes)
{
	struct fg_cfi_worker *w = fg_xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	w->l = l;
	w->max_bytes = max_bytes;
	fg_buf_init(&w->queue, 0);
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* signals go to the caller's thread, not this one (which inherits the mask) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		*out = NULL;
		return -err;
	}
	*out = w;
	return 0;
}

/* Into the queue, or left out and counted when it is full (the worker then reads /proc again). */
static void enqueue(struct fg_cfi_worker *w, uint32_t type, const void *payload, size_t len)
{
	static const char pad[8];
	uint32_t hdr[2] = {type, (uint32_t)len};
	size_t need = sizeof(hdr) + ((len + 7) & ~(size_t)7);

	pthread_mutex_lock(&w->lock);
	if (len > UINT32_MAX || w->queue.len + need > w->max_bytes) {
		w->st.dropped++;
		w->overflow = true;
	} else {
		fg_buf_add(&w->queue, hdr, sizeof(hdr));
		fg_buf_add(&w->queue, payload, len);
		fg_buf_add(&w->queue, pad, need - sizeof(hdr) - len);
		if (w->queue.len > w->st.queued_peak)
			w->st.queued_peak = w->queue.len;
	}
	if (w->overflow)
		pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void fg_cfi_worker_push(struct fg_cfi_worker *w, uint32_t type, const void *payload, size_t len)
{
	if (type != LOAD_PID && fg_cfi_loader_wants(type, payload, len))
		enqueue(w, type, payload, len);
}

void fg_cfi_worker_load(struct fg_cfi_worker *w, uint32_t pid, bool now)
{
	enqueue(w, LOAD_PID, &pid, sizeof(pid));
	if (now) {
		pthread_mutex_lock(&w->lock);
		w->st.asked++;
		pthread_mutex_unlock(&w->lock);
	}
}

void fg_cfi_worker_wake(struct fg_cfi_worker *w)
{
	pthread_mutex_lock(&w->lock);
	if (w->queue.len)
		pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void fg_cfi_worker_stop(struct fg_cfi_worker *w, struct fg_cfi_worker_stats *st)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	if (st)
		*st = w->st;
	fg_buf_release(&w->queue);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void fg_cfi_worker_report(struct fg_buf *out, const struct fg_cfi_worker_stats *st)
{
	fg_buf_addf(out,
		    "cfi: %" PRIu64 " side-band records to the tables' thread in %" PRIu64
		    " batches (%.1f KiB queued at most); %" PRIu64
		    " left out, its queue full (every process read again %" PRIu64
		    " times); %" PRIu64 " processes loaded at their first sample (%" PRIu64
		    " asked for by the program: new, without their mappings)\n",
		    st->records, st->batches, (double)st->queued_peak / 1024, st->dropped,
		    st->rescans, st->loads, st->asked);
}
