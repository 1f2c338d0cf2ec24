// SPDX-License-Identifier: BSD-2-Clause
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/elfsyms.h"
#include "fg/unwind_dw.h"

struct reported {
	dev_t dev;
	ino_t ino;
	uint64_t bias;
};

struct fg_unwind_dw {
	Dwfl *dwfl;
	bool attached;
	struct reported *files;
	size_t nfiles, alloc;
	/* the sample being unwound, for the callbacks */
	uint32_t tid;
	const struct fg_cfi_regs *regs;
	uint64_t sp;
	const uint8_t *data;
	size_t size;
	int read_end; /* why the last read failed: FG_UNWIND_END_TRUNCATED or _UNREADABLE */
	struct fg_unwind_frame *frames;
	size_t n, max;
};

/* libdwfl must not look for debug files by name: the oracle reads what it is given */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = NULL,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct fg_unwind_dw *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct fg_unwind_dw *u = arg;

	(void)dwfl;
	*thread_argp = u;
	return (uint32_t)tid == u->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct fg_unwind_dw *u = arg;

	(void)dwfl;
	if (addr >= u->sp && u->size >= 8 && addr - u->sp <= u->size - 8) {
		memcpy(result, u->data + (addr - u->sp), 8);
		return true;
	}
	u->read_end = addr >= u->sp ? FG_UNWIND_END_TRUNCATED : FG_UNWIND_END_UNREADABLE;
	return false;
}

/* arm64: the slots' registers as its DWARF numbers them (x29, x30, sp), the pc apart */
static bool set_arm64_registers(Dwfl_Thread *thread, const struct fg_cfi_regs *g)
{
	static const struct {
		int slot, dwarf;
	} regs[] = {{FG_CFI_A64_FP, 29}, {FG_CFI_A64_LR, 30}, {FG_CFI_A64_SP, 31}};

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		Dwarf_Word v = g->r[regs[i].slot];

		if ((g->valid & FG_CFI_BIT(regs[i].slot)) &&
		    !dwfl_thread_state_registers(thread, regs[i].dwarf, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, g->r[FG_CFI_A64_PC]);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct fg_unwind_dw *u = arg;

	if (u->regs->arch == FG_CFI_ARCH_ARM64)
		return set_arm64_registers(thread, u->regs);
	for (int i = 0; i < FG_CFI_NREGS; i++) {
		Dwarf_Word v = u->regs->r[i];

		if ((u->regs->valid & FG_CFI_BIT(i)) &&
		    !dwfl_thread_state_registers(thread, i, 1, &v))
			return false;
	}
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

struct fg_unwind_dw *fg_unwind_dw_new(void)
{
	struct fg_unwind_dw *u = fg_xcalloc(1, sizeof(*u));

	elf_version(EV_CURRENT);
	u->dwfl = dwfl_begin(&callbacks);
	if (!u->dwfl) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	return u;
}

void fg_unwind_dw_free(struct fg_unwind_dw *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	free(u->files);
	free(u);
}

int fg_unwind_dw_map(struct fg_unwind_dw *u, const char *name, int fd, uint64_t start, uint64_t end,
		     uint64_t pgoff)
{
	struct fg_elf_load *loads;
	struct stat st;
	uint64_t vaddr, bias;
	size_t nloads;
	Elf *elf;
	int dfd;
	bool placed;

	(void)end;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	elf = fg_elf_begin_fd(fd); /* libdwfl then reads the file checked */
	if (!elf)
		return -errno;
	nloads = fg_elf_loads(elf, &loads);
	placed = fg_elf_offset_to_addr(loads, nloads, pgoff, &vaddr);
	free(loads);
	elf_end(elf);
	if (!placed)
		return -ENOEXEC;
	bias = start - vaddr;
	for (size_t i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == st.st_dev && u->files[i].ino == st.st_ino &&
		    u->files[i].bias == bias)
			return 0;
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	dwfl_report_begin_add(u->dwfl);
	/* libdwfl owns dfd from here; base is the load bias (add_p_vaddr) */
	Dwfl_Module *mod = dwfl_report_elf(u->dwfl, name, name, dfd, bias, true);
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!mod)
		return -ENOEXEC;
	FG_ALLOC_GROW(u->files, u->nfiles + 1, u->alloc);
	u->files[u->nfiles++] = (struct reported){st.st_dev, st.st_ino, bias};
	return 0;
}

int fg_unwind_dw_map_image(struct fg_unwind_dw *u, const char *name, const void *image, size_t size,
			   uint64_t start)
{
	int fd = memfd_create("fg-image", MFD_CLOEXEC), err = 0;
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t w = write(fd, (const char *)image + done, size - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)w;
	}
	/* the image is mapped whole from its first byte */
	if (!err)
		err = fg_unwind_dw_map(u, name, fd, start, start + size, 0);
	close(fd);
	return err;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct fg_unwind_dw *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (u->n == u->max)
		return DWARF_CB_ABORT;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* a frame past the leaf is an activation when the frame before it is a signal frame */
	if (activation && u->n)
		u->frames[u->n - 1].flags |= FG_UNWIND_F_SIGNAL;
	u->frames[u->n++] = (struct fg_unwind_frame){
	    .pc = pc,
	    .flags = activation ? FG_UNWIND_F_EXACT : 0,
	};
	return DWARF_CB_OK;
}

/* No frame from libdwfl (no module to attach to, nothing it can read): the leaf, as fg_unwind gives
 * it. */
static size_t leaf_only(const struct fg_cfi_regs *regs, struct fg_unwind_frame *frames, size_t max)
{
	if (!max || !(regs->valid & FG_CFI_BIT(FG_CFI_RIP)))
		return 0;
	frames[0] = (struct fg_unwind_frame){.pc = regs->r[FG_CFI_RIP], .flags = FG_UNWIND_F_EXACT};
	return 1;
}

size_t fg_unwind_dw(struct fg_unwind_dw *u, uint32_t tid, const struct fg_cfi_regs *regs,
		    uint64_t sp, const void *stack, size_t size, struct fg_unwind_frame *frames,
		    size_t max, enum fg_unwind_end *end, const char **msg)
{
	int r;

	if (msg)
		*msg = "";
	u->tid = tid;
	u->regs = regs;
	u->sp = sp;
	u->data = stack;
	u->size = size;
	u->frames = frames;
	u->n = 0;
	u->max = max;
	u->read_end = -1;
	*end = FG_UNWIND_END_NOMAP;
	if (!u->attached) {
		/* the architecture comes from the first module reported */
		if (!dwfl_attach_state(u->dwfl, NULL, (pid_t)tid, &thread_callbacks, u)) {
			if (msg)
				*msg = dwfl_errmsg(-1);
			return leaf_only(regs, frames, max);
		}
		u->attached = true;
	}
	r = dwfl_getthread_frames(u->dwfl, (pid_t)tid, frame_cb, u);
	if (r == 0) {
		*end = FG_UNWIND_END_STOP;
	} else if (u->n == max) {
		*end = FG_UNWIND_END_MAXDEPTH;
	} else {
		int e = dwfl_errno();
		const char *m = dwfl_errmsg(e);

		if (msg)
			*msg = m;
		if (u->read_end >= 0)
			*end = (enum fg_unwind_end)u->read_end;
		else if (m && strstr(m, "address range"))
			*end = FG_UNWIND_END_NOMAP;
		else
			*end = FG_UNWIND_END_NOINFO;
	}
	return u->n ? u->n : leaf_only(regs, frames, max);
}
