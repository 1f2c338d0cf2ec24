#!/bin/sh
# gen-vmlinux-h.sh BTF [HEADER]: print vmlinux.h for the BPF build.
# With HEADER (the Makefile's VMLINUX_H), copy that header (an .xz one
# decompressed: bpf/arm64/vmlinux.h.xz); else dump the kernel's BTF (default
# /sys/kernel/btf/vmlinux) as C with bpftool.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
header=${2:-}
case $header in
'') ;;
*.xz) exec xz -dc "$header" ;;
*) exec cat "$header" ;;
esac
if [ ! -r "$btf" ]; then
	echo "gen-vmlinux-h.sh: no BTF at '${btf:-/sys/kernel/btf/vmlinux}'; build on a kernel with CONFIG_DEBUG_INFO_BTF or set VMLINUX_H=FILE" >&2
	exit 1
fi
exec "${BPFTOOL:-bpftool}" btf dump file "$btf" format c
