#!/usr/bin/env python3
"""file_union.py PID...: the distinct pages a set of live processes holds,
from their physical frames, beside what max_rss's rule counts for them.

max_rss counts the tree's file-backed and shmem pages as the largest such set
of any one process (docs/how-it-works.md, "Remaining error"). This reads each
process's page frames from /proc/PID/pagemap (root only: without
CAP_SYS_ADMIN the kernel hides the frame numbers) and prints, in MiB:
  - each process's file+shmem and private anonymous frames;
  - the union of the file+shmem frames and the largest single set;
  - the union of everything, against the rule (largest set + anon union).
Stop the processes first (SIGSTOP) for a consistent reading.
Exit 2 on bad input or without the privilege."""
import struct
import sys

PAGE = 4096
PRESENT = 1 << 63
FILE_OR_SHARED = 1 << 61  # a file page or shared anonymous (shmem) memory
PFN_MASK = (1 << 55) - 1


def frames(pid):
    """(file+shmem frames, private anonymous frames) of pid's present pages."""
    file_frames, anon_frames = set(), set()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap, open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            path = fields[5] if len(fields) > 5 else ""
            if path == "[vsyscall]":
                continue  # no page table entries to read
            pagemap.seek(start // PAGE * 8)
            data = pagemap.read((end - start) // PAGE * 8)
            for (entry,) in struct.iter_unpack("<Q", data):
                if not entry & PRESENT:
                    continue
                pfn = entry & PFN_MASK
                if pfn == 0:
                    raise PermissionError("frame numbers are hidden (run as root)")
                (file_frames if entry & FILE_OR_SHARED else anon_frames).add(pfn)
    return file_frames, anon_frames


def mib(pages):
    return pages * PAGE / (1 << 20)


def main(argv):
    if len(argv) < 2 or not all(a.isdigit() for a in argv[1:]):
        print("usage: file_union.py PID...", file=sys.stderr)
        return 2
    sets = {}
    try:
        for pid in argv[1:]:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
            sets[pid] = (name, *frames(pid))
    except (OSError, PermissionError) as e:
        print(f"file_union.py: {e}", file=sys.stderr)
        return 2
    for pid, (name, file_frames, anon_frames) in sets.items():
        print(f"{pid:>8} {name:<16} file+shmem {mib(len(file_frames)):7.1f} MiB  anon {mib(len(anon_frames)):7.1f} MiB")
    file_union = set().union(*(s[1] for s in sets.values()))
    anon_union = set().union(*(s[2] for s in sets.values()))
    largest = max(len(s[1]) for s in sets.values())
    union_total = len(file_union) + len(anon_union)
    rule_total = largest + len(anon_union)
    print(f"file+shmem: union {mib(len(file_union)):.1f} MiB, largest single set {mib(largest):.1f} MiB")
    print(f"all pages:  union {mib(union_total):.1f} MiB, the rule {mib(rule_total):.1f} MiB, "
          f"the rule low by {mib(union_total - rule_total):.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
