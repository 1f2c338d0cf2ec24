#!/bin/sh
# gen-vmlinux-h.sh BTF [HEADER]: print vmlinux.h for the BPF build.
# With HEADER (the Makefile's VMLINUX_H), copy that header; else dump the
# kernel's BTF (default /sys/kernel/btf/vmlinux) as C with bpftool.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
header=${2:-}
if [ -n "$header" ]; then
	exec cat "$header"
fi
if [ ! -r "$btf" ]; then
	echo "gen-vmlinux-h.sh: no BTF at '${btf:-/sys/kernel/btf/vmlinux}'; build on a kernel with CONFIG_DEBUG_INFO_BTF or set VMLINUX_H=FILE" >&2
	exit 1
fi
exec "${BPFTOOL:-bpftool}" btf dump file "$btf" format c
