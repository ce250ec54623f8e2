"""A store another user could change, or read what is written into, is opened read-only with the
reason in every refusal: the file is theirs, others can write it, another user can change its
folder (the real one, or the one a link to it is in), or a file SQLite opens by name beside it
(-wal, -shm) is theirs or a link, which /tmp lets anyone put there first. A new store is created
only in a folder no other user can change. These tests run as root (root's own files count as the
person's); another user is uid 65534."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from mnemoscope.engine import Memory

from .conftest import cli

OTHER_USER = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


@pytest.fixture
def store(tmp_path) -> Path:
    """A store of the person's with one note, in a folder of theirs (0700)."""
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o700)
    path = folder / "m.db"
    with Memory(path, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    return path


def _writes_refused(path: Path, says: str) -> None:
    """A write is one line naming why, exit 2; recall answers; the file is unchanged."""
    note = path.parent.parent / "new.md"
    note.write_text("# New\nThe ferry leaves at dawn.\n")
    before = path.read_bytes()
    code, out, err = cli("--store", path, "ingest", note)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{path} is read-only ({says}" in err, err
    assert ": it is not written to): recall and browsing work, changes do not; nothing was changed" in err, err
    code, out, err = cli("--store", path, "recall", "harbour lanterns")
    assert code == 0 and "harbour lanterns" in out, err
    assert path.read_bytes() == before


def _create(path: Path) -> tuple[int, str, str]:
    """Make a store at ``path`` from the command line: ingest of an empty folder (the commands that
    only read refuse a path where no store is; ingest and import make one)."""
    with tempfile.TemporaryDirectory() as nothing:
        return cli("--store", path, "ingest", nothing)


@pytest.mark.parametrize("change, says", [
    (lambda p: (os.chown(p, OTHER_USER, OTHER_USER), os.chmod(p, 0o666)), f"it belongs to another user (uid {OTHER_USER})"),
    (lambda p: os.chmod(p, 0o666), "others can write it (mode 666)"),
    (lambda p: os.chmod(p.parent, 0o777), "others can change its folder"),
    (lambda p: os.chown(p.parent, OTHER_USER, OTHER_USER), f"another user (uid {OTHER_USER}) can change its folder"),
], ids=["theirs", "others-write", "folder-777", "folder-theirs"])
def test_a_store_another_user_could_change_opens_read_only(store, change, says):
    change(store)
    _writes_refused(store, says)


def test_a_link_to_a_store_from_a_folder_others_can_change_opens_read_only(store, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    (shared / "m.db").symlink_to(store)
    _writes_refused(shared / "m.db", f"others can change its folder {shared}")


@pytest.mark.parametrize("beside", ["-wal", "-shm"])
def test_a_file_planted_beside_a_store_makes_it_read_only(store, tmp_path, beside):
    """SQLite opens its -wal and -shm files by name; it refuses a link there itself, and the open
    failed with "unable to open database file" (before), saying nothing of why."""
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    (store.parent / (store.name + beside)).symlink_to(target)
    _writes_refused(store, f"m.db{beside} beside it is a link")
    assert target.read_text() == "precious\n"


def test_a_file_of_another_user_beside_a_store_makes_it_read_only(store):
    planted = store.parent / (store.name + "-wal")
    planted.write_bytes(b"")
    os.chown(planted, OTHER_USER, OTHER_USER)
    os.chmod(planted, 0o666)
    _writes_refused(store, f"m.db-wal beside it: it belongs to another user (uid {OTHER_USER})")


def test_the_activity_file_follows_no_link(store, tmp_path):
    """Beside the store during a write, the activity file was opened with O_TRUNC through any
    link put at its name (before: the link's target overwritten with the activity's JSON)."""
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    (store.parent / (store.name + "-activity")).symlink_to(target)
    _writes_refused(store, "m.db-activity beside it is a link")
    os.unlink(store.parent / (store.name + "-activity"))
    with Memory(store, extensions=False) as mem:  # a link put there after the open is not followed either
        os.symlink(target, store.parent / (store.name + "-activity"))
        mem.add_note("A second note.")
        assert len(mem.sources()) == 2
    assert target.read_text() == "precious\n"


@pytest.mark.parametrize("folder_mode, owner", [(0o777, 0), (0o755, OTHER_USER)], ids=["others-write", "theirs"])
def test_a_new_store_is_created_only_in_a_folder_no_other_user_can_change(tmp_path, folder_mode, owner):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chown(folder, owner, owner)
    os.chmod(folder, folder_mode)
    code, out, err = _create(folder / "new.db")
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot create the store {folder / 'new.db'}: " in err and "can change its folder" in err, err
    assert "nothing was created" in err and list(folder.iterdir()) == []


def test_a_store_in_a_sticky_shared_folder_is_neither_made_nor_written(tmp_path):
    """In /tmp (1777) no one replaces another's file, but anyone may put a link at a name not yet
    taken, and SQLite opens the store's -wal and -shm by name at each open (review's 17:05:
    before, a new store was made there and written)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    code, out, err = _create(folder / "new.db")
    assert code == 2 and err.count("\n") == 1 and list(folder.iterdir()) == [], err
    assert f"others can put files in its folder {folder} (mode 1777, uid 0) at the names SQLite opens" in err, err
    assert "WSL's /mnt/c" in err
    mine = tmp_path / "mine" / "m.db"
    mine.parent.mkdir(mode=0o700)
    with Memory(mine, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    shutil.move(mine, folder / "m.db")
    _writes_refused(folder / "m.db", f"others can put files in its folder {folder}")


def test_a_new_store_in_a_new_folder_of_a_sticky_shared_folder_is_made_in_a_folder_of_its_own(tmp_path):
    """`--store /tmp/notes/m.db` with /tmp/notes not yet there: the folder this makes is 0700 and
    the store's own, so the store is made (before: refused, telling the person to mkdir by hand);
    a folder another user made first at that name is refused."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    code, _, err = _create(folder / "notes" / "m.db")
    assert code == 0, err
    assert stat.S_IMODE(os.stat(folder / "notes").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder / "notes" / "m.db").st_mode) == 0o600
    theirs = folder / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 65534, 65534)
    code, _, err = _create(theirs / "deeper" / "m.db")
    assert code == 2 and err.count("\n") == 1, err
    assert "another user (uid 65534) can change its folder" in err and list(theirs.iterdir()) == [], err


@pytest.mark.parametrize("change, says", [
    (lambda p: os.chmod(p, 0o777), "others can change a folder on its way, {above} (mode 777, uid 0)"),
    (lambda p: os.chown(p, OTHER_USER, OTHER_USER), "another user (uid 65534) can change a folder on its way, {above}"),
], ids=["others-write", "theirs"])
def test_a_store_under_a_folder_another_user_can_change_is_not_private(tmp_path, change, says):
    """Its own folder 0700 is not enough: who can change a folder above it renames the store's
    folder and puts one of theirs in its place (before: only the store's own folder was asked,
    and such a store was made and written)."""
    above = tmp_path / "shared"
    folder = above / "mine"
    folder.mkdir(parents=True, mode=0o700)
    with Memory(folder / "m.db", extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    change(above)
    _writes_refused(folder / "m.db", says.format(above=above))
    code, out, err = _create(folder / "new.db")
    assert code == 2 and err.count("\n") == 1 and says.format(above=above) in err and "nothing was created" in err, err
    assert not (folder / "new.db").exists()
    os.chmod(above, 0o1777)  # sticky, as /tmp: no one renames another's folder in it
    os.chown(above, 0, 0)
    assert _create(folder / "new.db")[0] == 0
