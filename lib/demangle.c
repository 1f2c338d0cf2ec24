// SPDX-License-Identifier: BSD-2-Clause
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "fg/demangle.h"

char *fg_demangle(const char *name)
{
	/* only names that claim to be mangled: "_Z..." (C++, legacy Rust), "_R..." (Rust v0) */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (strlen(name) > 16384) /* bound the demangler's work on hostile input */
		return NULL;
	return cplus_demangle(name, DMGL_AUTO);
}
