"""The array file's whole check runs once per version of the file (engine/array_file.py): a file
unchanged since it was written or checked is opened without reading its arrays, and anything that
changes it through the file system (a byte flipped in place, a truncation, a file renamed over it,
a copy) makes it checked whole again, so a damaged or torn file is still refused; a crash before
the rename leaves the old file, still good."""

import os
import shutil
import time
import signal
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine import array_file
from mnemoscope.engine.array_file import (MAGIC, STAMP_SUFFIX, Unusable, Version, _stamp, date_again, map_arrays,
                                          read_arrays, write_arrays)

ROOT = Path(__file__).resolve().parents[2]
ARRAYS = {
    "ids": np.arange(1000, dtype=np.int64),
    "vectors": np.linspace(-1, 1, 3000, dtype=np.float32).reshape(1000, 3),
    "codes": (np.arange(1000) % 7).astype(np.int8),
    "alive": np.arange(1000) % 3 > 0,
    "counts": np.arange(10, dtype=np.uint32),
}


def stamp_of(path: Path) -> Path:
    return path.with_name(path.name + STAMP_SUFFIX)


def opened(path: Path) -> bool:
    """Whether the file opens (every check passed); raises Unusable otherwise. True: its arrays'
    checksums were not read (this version was checked before)."""
    mapped = map_arrays(path)
    mapped.check()
    return mapped.checked_before


def flip_byte(path: Path, at: int) -> None:
    """One byte of the file changed in place (same inode), as a disk or another program might."""
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x01]))


@pytest.fixture
def written(tmp_path: Path) -> Path:
    path = tmp_path / "arrays"
    write_arrays(path, {"log_id": 7}, ARRAYS)
    return path


def test_a_file_unchanged_since_it_was_written_is_opened_without_reading_its_arrays(written: Path):
    assert stamp_of(written).stat().st_mode & 0o777 == 0o600
    assert opened(written) and opened(written)
    read = read_arrays(written)
    assert read.meta == {"log_id": 7}
    assert all(np.array_equal(read.arrays[k], v) for k, v in ARRAYS.items())


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_a_byte_flipped_in_any_array_after_the_stamp_is_refused(written: Path, name: str):
    offset, length, _crc = map_arrays(written).checksums[name]
    assert length > 0
    flip_byte(written, offset + length // 2)
    with pytest.raises(Unusable, match=f"array {name!r} fails its checksum"):
        opened(written)
    with pytest.raises(Unusable):  # and again: a refused file is never stamped
        opened(written)


def test_a_byte_flipped_in_the_header_is_refused(written: Path):
    flip_byte(written, 40)
    with pytest.raises(Unusable, match="damaged header|not an array file"):
        opened(written)


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_torn_file_is_refused(written: Path, keep: float):
    os.truncate(written, int(written.stat().st_size * keep))
    with pytest.raises(Unusable, match="out of bounds"):
        opened(written)


def test_a_file_replaced_after_its_check_is_checked_again(written: Path, tmp_path: Path):
    assert opened(written)
    damaged = tmp_path / "damaged"
    shutil.copyfile(written, damaged)
    damaged.chmod(0o600)
    offset, length, _crc = map_arrays(written).checksums["vectors"]
    flip_byte(damaged, offset + length - 1)
    os.replace(damaged, written)  # renamed over it: another inode, the stamp names the old one
    with pytest.raises(Unusable, match="'vectors' fails its checksum"):
        opened(written)

    other = tmp_path / "other"
    write_arrays(other, {"log_id": 8}, {"ids": np.arange(5, dtype=np.int64)})
    os.replace(other, written)  # a good file from elsewhere (its stamp is beside its old name)
    assert not opened(written)  # read whole, passed, stamped
    assert opened(written) and read_arrays(written).meta == {"log_id": 8}


def test_a_copy_of_a_file_and_its_stamp_is_checked_whole(written: Path, tmp_path: Path):
    folder = tmp_path / "copy"
    folder.mkdir()
    for path in (written, stamp_of(written)):
        shutil.copy2(path, folder / path.name)  # times and mode kept, not the inode
    assert not opened(folder / written.name)
    assert opened(folder / written.name)


def test_a_stamp_no_later_than_the_files_change_is_not_believed(written: Path):
    """A write in place within the file system's clock tick of the stamp would keep the times it
    names: such a stamp vouches for nothing (the file is read whole, then stamped anew)."""
    changed = written.stat().st_ctime_ns
    os.utime(stamp_of(written), ns=(changed, changed))
    assert not opened(written)
    assert opened(written)


@pytest.mark.parametrize("spoil", ["public", "garbage", "nested", "another version"])
def test_a_stamp_that_is_public_damaged_or_of_another_version_is_not_believed(written: Path, spoil: str):
    stamp = stamp_of(written)
    if spoil == "public":
        stamp.chmod(0o644)
    elif spoil == "garbage":
        stamp.write_bytes(b"{not json")
    elif spoil == "nested":
        stamp.write_bytes(b"[" * 4096)  # deeper than json's recursion: RecursionError, not ValueError
    else:
        stamp.write_text(stamp.read_text().replace('"size": ', '"size": 1'))
    assert not opened(written)


CRASHING_WRITER = """
import os, sys, time
import numpy as np
from mnemoscope.engine.array_file import write_arrays

def hang(*args):
    print("renaming", flush=True)
    time.sleep(600)

os.replace = hang  # the process dies here: the new file is whole in its temporary file, not renamed
write_arrays(sys.argv[1], {"log_id": 9}, {"ids": np.arange(2_000_000, dtype=np.int64)})
"""


def test_a_crash_during_a_write_leaves_the_old_file_stamped_and_good(written: Path):
    child = subprocess.Popen([sys.executable, "-c", CRASHING_WRITER, str(written)], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "renaming\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    left = [p.name for p in written.parent.iterdir() if p.name.endswith(".partial")]
    assert left  # the crash left its temporary file, which no reader opens
    assert opened(written)
    assert read_arrays(written).meta == {"log_id": 7}


def test_a_saved_index_reopened_unchanged_is_not_read_whole(demo_copy: Path):
    """The index file a store saved is stamped: the next open maps it without its checksums."""
    with Memory(demo_copy, save_index_above=0) as mem:
        assert not mem.index_from_file
    index = demo_copy.with_name(f"{demo_copy.name}-index")
    assert map_arrays(index).checked_before
    with Memory(demo_copy, save_index_above=0) as mem:
        assert mem.index_from_file and mem.recall("who adopted a dog").hits
    offset, length, _crc = max(map_arrays(index).checksums.values(), key=lambda c: c[1])
    flip_byte(index, offset + length // 2)
    with Memory(demo_copy, save_index_above=0) as mem:  # damaged: rebuilt from the rows, saved and stamped again
        assert not mem.index_from_file and mem.recall("who adopted a dog").hits
    assert map_arrays(index).checked_before


def test_a_stamp_that_cannot_be_written_costs_a_whole_check_not_an_error(tmp_path: Path):
    path = tmp_path / "arrays"
    stamp_of(path).mkdir()  # a folder where the stamp would go: never written, never believed
    write_arrays(path, {}, ARRAYS)
    assert not opened(path) and not opened(path)
    assert read_arrays(path).arrays["codes"].tolist() == ARRAYS["codes"].tolist()


OPEN_BESIDE_A_FIFO = """
import sys
import zlib
from pathlib import Path
from mnemoscope.engine.array_file import Unusable, map_arrays

try:
    print("stamped" if map_arrays(Path(sys.argv[1])).checked_before else "to check", flush=True)
except Unusable as exc:
    print("unusable:", exc, flush=True)
"""


@pytest.mark.parametrize("where", ["the stamp", "the file"])
def test_a_named_pipe_in_place_of_the_stamp_or_the_file_is_refused_at_once(written: Path, where: str):
    """Opening a FIFO waits for a writer that may never come: another user may place one where a
    store in a shared folder such as /tmp keeps its stamp. It is refused, not waited on."""
    fifo = stamp_of(written) if where == "the stamp" else written
    fifo.unlink()
    os.mkfifo(fifo, 0o600)
    done = subprocess.run([sys.executable, "-c", OPEN_BESIDE_A_FIFO, str(written)], cwd=ROOT, capture_output=True,
                          text=True, timeout=30)
    assert done.stdout == ("to check\n" if where == "the stamp" else "unusable: not a private regular file of this user\n")


def test_a_check_that_ends_after_a_newer_file_was_saved_leaves_the_newer_files_stamp(written: Path):
    """A reader checking the file whole while another process saves a new one over it: the new
    file's writer stamped it, and the reader's stamp of the version it checked (no longer at the
    path) would replace that stamp, costing the next open a whole read of the new file."""
    stamp_of(written).unlink()
    older = map_arrays(written)  # to check whole: not stamped
    assert not older.checked_before
    write_arrays(written, {"log_id": 8}, ARRAYS)  # saved meanwhile, and stamped by its writer
    older.check()  # the older version passes (read through its own mapping)
    assert map_arrays(written).checked_before
    assert read_arrays(written).meta == {"log_id": 8}


def test_a_header_nested_deeper_than_json_reads_is_refused(tmp_path: Path):
    """A header whose CRC holds but whose JSON nests past the parser's recursion is "no file", as
    any other damaged header, not a RecursionError out of the store's open."""
    path, raw = tmp_path / "arrays", b"[" * 4096
    path.write_bytes(MAGIC + len(raw).to_bytes(8, "little") + raw + zlib.crc32(raw).to_bytes(4, "little"))
    path.chmod(0o600)
    with pytest.raises(Unusable, match="damaged header"):
        opened(path)


SECOND = 1_000_000_000
CHANGED = 1_764_700_000 * SECOND + 123_456_789  # a file's change time, dated by a clock finer than a second


@pytest.mark.parametrize("dated, waited, again", [
    (CHANGED, 0, True),  # the same tick as the change: the clock moves on within a tick
    (CHANGED - 4_000_000, 0, True),  # a coarser clock's tick behind the change (a kernel's, 4 ms)
    (CHANGED, 60_000_000, False),  # waited three ticks: the clock does not move on
    (CHANGED - 3600 * SECOND, 0, False),  # an hour behind the file: the clock was stepped back after the save
    (CHANGED - 50_000_000, 0, False),  # behind by more than a tick
    (1_764_700_000 * SECOND, 0, False),  # whole seconds: a file system dating in seconds waits a second or two
])
def test_the_stamp_is_dated_again_only_while_waiting_can_date_it_after_the_change(dated: int, waited: int, again: bool):
    changed = 1_764_700_000 * SECOND if dated % SECOND == 0 else CHANGED
    assert date_again(dated, changed, waited) is again


def test_a_stamp_behind_a_change_in_the_future_is_given_up_at_once(written: Path, monkeypatch):
    """A file changed "an hour from now" (the clock stepped back after it was saved: no test can
    set a change time ahead without root, so the version stamped names one): no wait, no stamp
    left, where the loop before wrote the stamp 200 times with a sleep between."""
    sleeps: list[float] = []
    monkeypatch.setattr(array_file.time, "sleep", sleeps.append)
    info = written.stat()
    ahead = Version(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, time.time_ns() + 3600 * SECOND, 0)
    stamp_of(written).unlink()
    _stamp(written, ahead)
    assert sleeps == [] and not stamp_of(written).exists()


def test_a_change_a_few_milliseconds_ahead_is_waited_out_and_stamped(written: Path):
    """Within a tick of the clock: the stamp is dated again until it is later than the change."""
    info = written.stat()
    ahead = Version(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, time.time_ns() + 3_000_000, 0)
    _stamp(written, ahead)
    assert stamp_of(written).stat().st_mtime_ns > ahead.ctime_ns


def test_a_file_checked_whole_is_fsynced_before_its_stamp(written: Path, tmp_path: Path, monkeypatch):
    """A file copied in by a program that does not fsync (cp) may be in the page cache alone: the
    check reads those pages, and a stamp on the disk must not vouch for bytes a power cut could
    leave otherwise. The reader fsyncs the file before it writes the stamp."""
    copy = tmp_path / "copy"
    shutil.copyfile(written, copy)
    copy.chmod(0o600)
    synced: list[tuple[str, bool]] = []  # (the file fsynced, whether its stamp existed then)
    fsync = os.fsync

    def noted(fd: int) -> None:
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), stamp_of(copy).exists()))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", noted)
    assert not opened(copy)
    assert synced and (str(copy), False) in synced
    assert opened(copy)  # and stamped
