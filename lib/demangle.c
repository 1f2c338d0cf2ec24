// SPDX-License-Identifier: BSD-2-Clause
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "fg/demangle.h"

static char *demangle(const char *name, int opts)
{
	/* only names that claim to be mangled: "_Z..." (C++, legacy Rust), "_R..." (Rust v0) */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (strlen(name) > 16384) /* bound the demangler's work on hostile input */
		return NULL;
	return cplus_demangle(name, opts);
}

char *fg_demangle(const char *name)
{
	return demangle(name, DMGL_AUTO);
}

char *fg_demangle_params(const char *name)
{
	return demangle(name, DMGL_AUTO | DMGL_PARAMS | DMGL_ANSI);
}
