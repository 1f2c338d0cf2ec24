/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-sample's JVMs: at the end of a run, each Java virtual machine whose
 * samples the run took is asked to write its perf map (/tmp/perf-PID.map,
 * which fg-sym reads to name JIT frames): `jcmd PID Compiler.perfmap`
 * (JDK 17+), run as the process's own user and group, never as root for
 * another user's process, within a time bound.
 *
 *	struct fg_jvmmaps *j = fg_jvmmaps_new("/proc");
 *	fg_jvmmaps_seen(j, pid);		// each sample's process
 *	fg_jvmmaps_write(j, 10000, &st);	// at the end
 *	fg_jvmmaps_free(j);
 *
 * A JVM is a process whose executable is named "java".
 */
#ifndef FG_JVMMAPS_H
#define FG_JVMMAPS_H

#include <stdint.h>

#define FG_JVMMAPS_MAX 64 /* JVMs asked at the end of one run, at most (the rest counted) */
#define FG_JVMMAPS_PIDS (1u << 20) /* processes remembered as JVM or not */

struct fg_jvmmaps_stats {
	uint64_t jvms;	    /* JVMs sampled and still running at the end */
	uint64_t written;   /* jcmd said it wrote the map (exit 0) */
	uint64_t failed;    /* jcmd could not run, or failed (no JDK, attach refused) */
	uint64_t timed_out; /* jcmd killed at the time bound */
	uint64_t skipped;   /* over FG_JVMMAPS_MAX, or whose user could not be read */
};

struct fg_jvmmaps;

struct fg_jvmmaps *fg_jvmmaps_new(const char *proc);
void fg_jvmmaps_free(struct fg_jvmmaps *j);
/* A sample of process pid: looked at once (its executable's name). */
void fg_jvmmaps_seen(struct fg_jvmmaps *j, uint32_t pid);
/* Ask each JVM seen, still running, for its perf map; wait at most timeout_ms in all. */
void fg_jvmmaps_write(struct fg_jvmmaps *j, unsigned timeout_ms, struct fg_jvmmaps_stats *st);

#endif
