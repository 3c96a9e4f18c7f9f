"""The PE array's column chunks of a block: full chunks one batch matrix each, the
ragged remainders of several matrices side by side in one chunk."""

from __future__ import annotations


def chunk_list(cols: int, batches: int, chunk: int) -> list[tuple[int, int, int, int]]:
    """The PE column chunks of a block: ``(first batch, batch count, column, width)``.

    Full chunks take one batch matrix each; the ragged remainders of several batch
    matrices share one chunk (side by side on the array's columns), because a chunk
    costs the PE array the same whatever its width.

    >>> chunk_list(300, 3, 128)          # 44-column remainders: two per chunk
    [(0, 1, 0, 128), (0, 1, 128, 128), (1, 1, 0, 128), (1, 1, 128, 128), (2, 1, 0, 128), (2, 1, 128, 128), (0, 2, 256, 44), (2, 1, 256, 44)]
    """
    full, rem = divmod(cols, chunk)
    out = [(b, 1, f * chunk, chunk) for b in range(batches) for f in range(full)]
    if rem:
        per = max(1, chunk // rem)
        out += [(b, min(per, batches - b), full * chunk, rem) for b in range(0, batches, per)]
    return out


def chunk_count(cols: int, batches: int, chunk: int) -> int:
    """``len(chunk_list(cols, batches, chunk))`` without the list (block sizes are
    tried by the thousand for tensors of many small matrices).

    >>> chunk_count(300, 3, 128), chunk_count(256, 5, 128), chunk_count(0, 4, 128)
    (8, 10, 0)
    """
    full, rem = divmod(cols, chunk)
    return batches * full + (-(-batches // max(1, chunk // rem)) if rem else 0)


__all__ = ["chunk_list", "chunk_count"]
