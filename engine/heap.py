"""glibc's malloc in a long process: what it keeps of freed memory, and giving it back.

Elsewhere than glibc (no ``libc.so.6``) there is nothing to do, and these do nothing.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MALLOC_KEEP_BYTES = 32 * 2**20  # glibc's largest dynamic mmap threshold on 64-bit


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def keep_freed_blocks() -> None:
    """Let glibc's malloc keep freed blocks of up to 32 MB for reuse, as it does by itself once a
    process has freed such a block (its dynamic mmap threshold). A rebuild frees many, so queries
    after it reuse memory; an index read from the file frees none, and every query's million-slot
    arrays were then mapped and faulted in afresh, making recall at 1M markedly slower than after a
    rebuild (docs/scaling.md has the figures)."""
    if (libc := _libc()) is not None:
        libc.mallopt(M_MMAP_THRESHOLD, MALLOC_KEEP_BYTES)
        libc.mallopt(M_TRIM_THRESHOLD, 2 * MALLOC_KEEP_BYTES)  # (what the dynamic rule sets beside it)


def give_back_freed() -> None:
    """Return the freed pages of the heap to the system (``malloc_trim(0)``: in every arena, the
    free pages between blocks still in use too). ``free`` gives back only the heap's top, so
    after a bulk write (an ingest's fits, its catch-up's pieces) the process stays resident in
    memory it no longer uses, and a large step after it (the topic tree's rebuild at a long
    source's end) stands on all of it. A few milliseconds; what is still in use stays."""
    if (libc := _libc()) is not None:
        libc.malloc_trim(0)
