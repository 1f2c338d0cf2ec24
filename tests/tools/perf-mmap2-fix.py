#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""perf-mmap2-fix.py PERF_DATA: clear a misc flag the kernel set by mistake on perf's MMAP2 records.

While another perf event asks for build-ids in its mmap records
(perf_event_attr.build_id, as fg-sample's sideband events do), the kernel
(seen on 6.18) sets PERF_RECORD_MISC_MMAP_BUILD_ID on the shared mmap event
when it writes the record for that event, and leaves it set for the records
it then writes for the other events, perf record's among them, whose payload
still holds the device and inode.  perf script then reads those as a build-id
of up to 255 bytes: "assertion failed at util/build-id.c:1010", then "stack
smashing detected".  A perf.data recorded without build-ids in its mmap
records (perf record without --buildid-mmap) cannot have the flag rightly:
this clears it, in place.  Prints how many records it fixed.
"""
import struct
import sys

MAGIC = b"PERFILE2"
RECORD_MMAP2 = 10
MISC_MMAP_BUILD_ID = 1 << 14
ATTR_BUILD_ID = 1 << 34  # perf_event_attr's flags word: the bit of `build_id`


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: perf-mmap2-fix.py PERF_DATA")
    with open(sys.argv[1], "r+b") as f:
        d = bytearray(f.read())
        if d[:8] != MAGIC:
            sys.exit(f"perf-mmap2-fix: '{sys.argv[1]}': not a perf.data file")
        attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<QQQQQ", d, 16)
        # each attribute's flags word is at byte 40 of its perf_event_attr
        for at in range(attrs_off, attrs_off + attrs_size, attr_size):
            if struct.unpack_from("<Q", d, at + 40)[0] & ATTR_BUILD_ID:
                print(0)  # recorded with build-ids: the flag may be right
                return 0
        at, end, fixed = data_off, data_off + data_size, 0
        while at + 8 <= end:
            typ, misc, size = struct.unpack_from("<IHH", d, at)
            if size < 8:
                break
            if typ == RECORD_MMAP2 and misc & MISC_MMAP_BUILD_ID:
                struct.pack_into("<H", d, at + 4, misc & ~MISC_MMAP_BUILD_ID)
                fixed += 1
            at += size
        f.seek(0)
        f.write(d)
    print(fixed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
