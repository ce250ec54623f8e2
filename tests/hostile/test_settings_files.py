"""A settings file says where texts and keys are sent (an endpoint's URL, its key), so one that
another user could write, or replace through its folder, is refused in one line before anything
is read, sent or created: as ssh refuses such a config. Root's own files and folders count as the
person's (these tests run as root); another user is uid 65534."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import cli

OTHER_USER = 65534
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
    (lambda p: os.chmod(p, 0o620), "others can write it (mode 620)"),
    (lambda p: os.chown(p, OTHER_USER, OTHER_USER), f"it belongs to another user (uid {OTHER_USER})"),
    (lambda p: os.chmod(p.parent, 0o777), "another user can change its folder"),
    (lambda p: os.chown(p.parent, OTHER_USER, OTHER_USER), "another user can change its folder"),
])
def test_a_config_file_others_can_change_is_refused_before_anything_is_read(config, tmp_path, change, says):
    """Fails before: the file was read, and its endpoint would have been sent the store's texts."""
    change(config)
    store = tmp_path / "m.db"
    code, _, err = cli("--store", store, "stats")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{config}: cannot read the config file ({says}" in err and not store.exists(), err


def test_a_config_file_of_the_person_is_read_and_a_sticky_shared_folder_is_fine(config, tmp_path):
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
