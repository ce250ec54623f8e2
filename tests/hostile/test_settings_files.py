"""A settings file says where texts and keys are sent (an endpoint's URL, its key), so one that
another user could write, or replace through its folder, is refused in one line before anything
is read, sent or created: as ssh refuses such a config. Root's own files and folders count as the
person's (these tests run as root); another user is uid 65534."""

from __future__ import annotations

import grp
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import new_store
from tests.support.stores import ROOT

from .conftest import cli

OTHER_USER = 65534
NOGROUP = 65534  # the primary group of nobody (and others): shared, not root's own
ROOT_GROUP = 0
ENDPOINT = 'embed_base_url = "http://127.0.0.1:9/v1"\nembedder = "openai"\n'


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    """The person's config file, where platformdirs looks for it (folder 0700, file 0600)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "config" / "mnemoscope" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(ENDPOINT)
    os.chmod(path.parent, 0o700)
    os.chmod(path, 0o600)
    return path


@pytest.mark.parametrize("change, says", [
    (lambda p: os.chmod(p, 0o666), "others can write it (mode 666)"),
    (lambda p: os.chmod(p, 0o602), "others can write it (mode 602)"),
    (lambda p: (os.chown(p, -1, NOGROUP), os.chmod(p, 0o664)), f"the group {grp.getgrgid(NOGROUP).gr_name} can write it (mode 664)"),
    (lambda p: os.chown(p, OTHER_USER, OTHER_USER), f"it belongs to another user (uid {OTHER_USER})"),
    (lambda p: os.chmod(p.parent, 0o777), "others can change its folder"),
    (lambda p: (os.chown(p.parent, -1, NOGROUP), os.chmod(p.parent, 0o775)),
     f"the group {grp.getgrgid(NOGROUP).gr_name} can change its folder"),
    (lambda p: os.chown(p.parent, OTHER_USER, OTHER_USER), f"another user (uid {OTHER_USER}) can change its folder"),
    # a sticky folder lets others add files only; its owner still renames or deletes any file in it
    (lambda p: (os.chown(p.parent, OTHER_USER, OTHER_USER), os.chmod(p.parent, 0o1777)),
     f"another user (uid {OTHER_USER}) can change its folder"),
])
def test_a_config_file_others_can_change_is_refused_before_anything_is_read(config, tmp_path, change, says):
    """Fails before: the file was read, and its endpoint would have been sent the store's texts."""
    change(config)
    store = tmp_path / "m.db"
    code, _, err = cli("--store", store, "stats")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{config}: cannot read the config file ({says}" in err and not store.exists(), err


def test_group_writable_under_the_owners_private_group_is_read_under_a_shared_group_refused(config, tmp_path):
    """The default umask 002 of user-private groups (Debian, Ubuntu) makes a person's own files
    664 and folders 775 in a group that is theirs alone: such a config is read, as OpenSSH reads
    it (fails before: "others can write it (mode 664)"). The same modes under a group with another
    member are refused, and the line says the group."""
    if os.getuid() != 0:
        pytest.skip("giving a file to a chosen group needs root")
    if grp.getgrgid(ROOT_GROUP).gr_mem or any(u.pw_gid == ROOT_GROUP and u.pw_uid != 0 for u in pwd.getpwall()):
        pytest.skip("root's group is not root's alone on this machine")
    for path, mode in ((config, 0o664), (config.parent, 0o775)):
        os.chown(path, 0, ROOT_GROUP)
        os.chmod(path, mode)
    new_store(tmp_path / "m.db")
    code, out, err = cli("--store", tmp_path / "m.db", "stats", "--json")
    assert code == 0 and '"embedder": "openai"' in out, (out, err)
    shared = [g for g in grp.getgrall() if set(g.gr_mem) - {"root"}]
    if not shared:
        pytest.skip("no group on this machine has a member but root")
    os.chown(config, 0, shared[0].gr_gid)
    code, _, err = cli("--store", tmp_path / "m.db", "stats")
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot read the config file (the group {shared[0].gr_name} can write it (mode 664)" in err, err


def test_a_config_file_of_the_person_is_read_and_a_sticky_shared_folder_is_fine(config, tmp_path):
    new_store(tmp_path / "m.db")
    code, out, err = cli("--store", tmp_path / "m.db", "stats", "--json")
    assert code == 0 and '"embedder": "openai"' in out, (out, err)
    os.chmod(config.parent, 0o1777)  # like /tmp: others may add files, not replace this one
    assert cli("--store", tmp_path / "m.db", "stats")[0] == 0


def test_an_env_file_others_can_write_is_refused(tmp_path, capsys):
    named = tmp_path / "project.env"
    named.write_text("MNEMOSCOPE_EMBED_BASE_URL=http://127.0.0.1:9/v1\n")
    os.chmod(named, 0o646)
    code, _, err = cli("--env-file", named, "--store", tmp_path / "m.db", "stats")
    assert code == 2 and err.count("\n") == 1, err
    assert f"{named}: cannot read the env file (others can write it (mode 646)" in err and not (tmp_path / "m.db").exists()


def test_a_settings_file_holding_a_key_others_can_read_is_read_with_one_warning(config, tmp_path):
    """A key in a file other users can read is theirs too: the env file named and the config file
    are read (only one others could change is refused) and each is named in one warning line with
    the chmod that fixes it, the key never shown (fails before: nothing was said); at 0600 nothing."""
    new_store(tmp_path / "m.db")
    env = tmp_path / "keys.env"
    env.write_text("MNEMOSCOPE_LLM_API_KEY=sk-from-env\n")
    config.write_text(ENDPOINT + 'embed_api_key = "sk-from-config"\n')
    command = [sys.executable, "-m", "mnemoscope", "--env-file", str(env), "--store", str(tmp_path / "m.db"), "stats"]
    for mode, warned in ((0o644, [(env, 644), (config, 604)]), (0o600, [])):
        os.chmod(env, mode)
        os.chmod(config, mode & 0o604)
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0 and "sk-from" not in done.stderr, done.stderr
        assert [line for line in done.stderr.splitlines() if "API key" in line] == [
            f"mnemoscope: {path} holds an API key and others can read it (mode {shown}): chmod 600 {path}"
            for path, shown in warned], done.stderr


async def test_the_app_shows_the_warning_of_a_key_file_others_can_read(config, tmp_path):
    """The warning goes to stderr, which Textual holds while the app runs: the app said nothing
    (fails before: no notification). It is a warning notification now."""
    from tests.app.mnemo_testing import SIZE, build_app, empty_store, settle

    config.write_text('embed_api_key = "sk-from-config"\n')
    store = empty_store(tmp_path / "m.db")  # read at 0600: nothing to say
    os.chmod(config, 0o644)
    app = build_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert [(n.message, n.severity) for n in app.titled("Settings")] == [
        (f"{config} holds an API key and others can read it (mode 644): chmod 600 {config}", "warning")]


def test_a_config_file_under_a_folder_others_can_change_is_refused(config, tmp_path):
    """Who can change a folder above the config's renames its folder and puts one of theirs with
    another config in its place (fails before: only the config's own folder was asked)."""
    above = config.parent.parent
    os.chmod(above, 0o777)
    code, _, err = cli("--store", tmp_path / "m.db", "stats")
    assert code == 2 and err.count("\n") == 1, err
    assert f"cannot read the config file (others can change a folder on its way, {above} (mode 777, uid 0)" in err, err
    os.chmod(above, 0o1777)
    new_store(tmp_path / "m.db")
    assert cli("--store", tmp_path / "m.db", "stats")[0] == 0
