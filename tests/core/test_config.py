"""Settings are checked when loaded, come only from where the person put them, and keys stay with their origin."""

import json
import logging
import os

import pytest

from mnemoscope.app.services import Services
from mnemoscope.engine import Memory
from mnemoscope.engine.config import ConfigError, Settings, default_store_path, env_file
from tests.support.cli import cli
from tests.support.openai_server import OpenAIServer


@pytest.fixture
def user_config(tmp_path, monkeypatch):
    """The user config directory, empty, under tmp_path; returns the config file's path."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "mnemoscope" / "config.toml"


@pytest.mark.parametrize("name, value, message", [
    ("embedder", "lsaa", "'lsaa' is not one of lsa, hash, openai"),
    ("fusion", "RRF", "'RRF' is not one of linear, rrf"),
    ("walk_greedy", "maybe", "'maybe' is not a boolean"),
    ("candidate_k", "5.5", "'5.5' is not an integer"),
    ("candidate_k", True, "True is not an integer"),
    ("bm25_k1", "nan", "'nan' is not a number"),
    ("llm_model", 3, "3 is not text"),
    ("embeder", "hash", "unknown setting; did you mean 'embedder'?"),
    ("max_retries", "-1", r"'-1' is out of range \(it must be at least 0\)"),
    ("dense_weight", "1.5", r"'1.5' is out of range \(it must be between 0 and 1\)"),
    ("walk_temperature", "0", r"'0' is out of range \(it must be more than 0\)"),
])
def test_a_bad_value_is_refused_where_it_was_given(name, value, message, monkeypatch, user_config):
    with pytest.raises(ConfigError, match=f"^{name}: {message}"):
        Settings.load(**{name: value})
    if name != "embeder" and isinstance(value, str):
        monkeypatch.setenv(f"MNEMOSCOPE_{name.upper()}", value)
        with pytest.raises(ConfigError, match=f"^MNEMOSCOPE_{name.upper()}: {message}"):
            Settings.load()


def test_good_values_are_read_as_their_type(user_config):
    s = Settings.load(walk_greedy="off", episode_judge="YES", candidate_k=" 50 ", bm25_k1="1", fusion="rrf")
    assert (s.walk_greedy, s.episode_judge, s.candidate_k, s.bm25_k1, s.fusion) == (False, True, 50, 1.0, "rrf")
    assert isinstance(s.bm25_k1, float) and s.replace(embedder="hash").embedder == "hash"
    with pytest.raises(ConfigError):
        s.replace(embedder="lsaa")


def test_an_unknown_variable_is_warned_about_once_in_one_line(monkeypatch, caplog, user_config):
    monkeypatch.setenv("MNEMOSCOPE_WALK_GREEDDY", "true")
    with caplog.at_level(logging.WARNING):
        Settings.load()
        Settings.load()
    [record] = [r for r in caplog.records if "WALK_GREEDDY" in r.getMessage()]
    assert record.getMessage() == ("mnemoscope: MNEMOSCOPE_WALK_GREEDDY is not a setting (ignored); "
                                   "did you mean 'walk_greedy'?")


def test_a_dotenv_in_the_working_folder_changes_nothing(tmp_path, monkeypatch, openai_server, user_config):
    other_store = tmp_path / "elsewhere.db"
    (tmp_path / ".env").write_text(f"MNEMOSCOPE_STORE={other_store}\nMNEMOSCOPE_EMBEDDER=openai\n"
                                   f"MNEMOSCOPE_EMBED_BASE_URL={openai_server.base_url}\nMNEMOSCOPE_EMBED_MODEL=spy\n")
    monkeypatch.chdir(tmp_path)
    assert Settings.load() == Settings()
    store = tmp_path / "mine.db"
    (tmp_path / "note.md").write_text("A private note about the harbour.\n")
    assert cli("--store", store, "ingest", tmp_path / "note.md")[0] == 0
    code, out = cli("--store", store, "recall", "harbour", "--json")
    assert code == 0 and json.loads(out)["hits"]
    assert openai_server.requests == [] and not other_store.exists()


def test_an_env_file_is_read_when_named_and_says_so(tmp_path, capsys, user_config, corpus):
    named = tmp_path / "named.db"
    settings = tmp_path / "work.env"
    settings.write_text(f"# for this project\nexport MNEMOSCOPE_STORE='{named}'\nMNEMOSCOPE_CANDIDATE_K=50\nDEBUG=1\n")
    assert cli("--env-file", settings, "ingest", corpus)[0] == 0 and named.exists()
    capsys.readouterr()
    code, out = cli("--env-file", settings, "stats", "--json")
    assert code == 0 and json.loads(out)["store"] == str(named)
    assert capsys.readouterr().err == (f"mnemoscope: settings read from {settings}: "
                                       "MNEMOSCOPE_CANDIDATE_K, MNEMOSCOPE_STORE\n")
    assert Settings.load().store == ""  # only while the command ran
    settings.write_text("MNEMOSCOPE_WALK_GREEDY=maybe\n")
    assert cli("--env-file", settings, "stats")[0] == 2
    assert capsys.readouterr().err == f"mnemoscope: error: {settings}: MNEMOSCOPE_WALK_GREEDY: 'maybe' is not a boolean (true or false)\n"
    assert cli("--env-file", tmp_path / "missing.env", "stats")[0] == 2
    assert "cannot read the env file" in capsys.readouterr().err


def test_precedence_arguments_environment_env_file_config_file(tmp_path, monkeypatch, user_config):
    user_config.parent.mkdir(parents=True)
    user_config.write_text('candidate_k = 10\nrrf_k = 11\ntopic_dim = 12\nfusion = "rrf"\n')
    assert Settings.load().fusion == "rrf"
    (tmp_path / "f.env").write_text("MNEMOSCOPE_CANDIDATE_K=20\nMNEMOSCOPE_RRF_K=21\n")
    monkeypatch.setenv("MNEMOSCOPE_CANDIDATE_K", "30")
    with env_file(tmp_path / "f.env"):
        s = Settings.load(topic_dim=40)
    assert (s.candidate_k, s.rrf_k, s.topic_dim) == (30, 21.0, 40)
    user_config.write_text("candidate_k = 1.5\n")
    with pytest.raises(ConfigError, match=f"^{user_config}: candidate_k: 1.5 is not an integer"):
        Settings.load()
    user_config.write_text("candidate_k = \n")
    with pytest.raises(ConfigError, match="not a readable TOML config file"):
        Settings.load()


def test_a_store_named_in_the_config_file_is_the_one_opened(tmp_path, user_config, corpus):
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'store = "{tmp_path / "configured.db"}"\n')
    assert cli("ingest", corpus)[0] == 0 and (tmp_path / "configured.db").exists()
    code, out = cli("stats", "--json")
    assert code == 0 and json.loads(out)["store"] == str(tmp_path / "configured.db")


def test_check_checks_the_store_the_config_file_names(tmp_path, user_config, corpus, capsys):
    """It checked the default store's path instead ("no store at ...", or another store's check
    and --recount), while every other command opened the configured one (fails before)."""
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'store = "{tmp_path / "configured.db"}"\n')
    assert cli("ingest", corpus)[0] == 0
    code, out = cli("check")
    assert code == 0 and out.startswith(f"{tmp_path / 'configured.db'}: ok\n"), (out, capsys.readouterr().err)


def test_a_key_goes_only_to_the_origin_it_was_configured_for(monkeypatch, user_config):
    for name in ("MNEMOSCOPE_LLM_API_KEY", "MNEMOSCOPE_EMBED_API_KEY", "MNEMOSCOPE_IMAGE_EMBED_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("MNEMOSCOPE_LLM_API_KEY", "sk-llm")
    local = "http://127.0.0.1:8000/v1"
    s = Settings.load(llm_base_url=local, embed_base_url="http://127.0.0.1:9000/v1", image_embed_model="clip")
    assert (s.llm_api_key, s.embed_api_key, s.image_embed_api_key) == ("sk-llm", "", "")
    s = Settings.load(llm_base_url=local, embed_base_url=local + "/other", image_embed_base_url="https://api.openai.com/v1")
    assert (s.embed_api_key, s.image_embed_api_key) == ("sk-llm", "sk-openai")  # the same origin; OpenAI's own
    monkeypatch.setenv("MNEMOSCOPE_EMBED_API_KEY", "sk-embed")
    s = Settings.load(llm_base_url=local, embed_base_url="http://127.0.0.1:9000/v1")
    assert (s.embed_api_key, s.image_embed_api_key) == ("sk-embed", "sk-embed")  # images default to the embed endpoint
    assert "sk-" not in repr(s)


def test_the_openai_key_is_not_sent_to_another_embedding_endpoint(tmp_path, monkeypatch, openai_server, user_config):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    with Memory(tmp_path / "m.db", extensions=False, embedder="openai", embed_base_url=openai_server.base_url,
                embed_model="toy", max_retries=0) as mem:
        mem.add_note("the harbour at dawn")
        assert mem.recall("harbour", strategy="dense").hits
    sent = [h.get("authorization", "") for _m, _p, h in openai_server.headers]
    assert sent and not any("sk-secret" in value for value in sent)
    assert os.environ["OPENAI_API_KEY"] == "sk-secret"


def test_the_app_opens_the_configured_store_not_the_one_a_dotenv_names(tmp_path, monkeypatch, user_config):
    (tmp_path / ".env").write_text(f"MNEMOSCOPE_STORE={tmp_path / 'dotenv.db'}\n")
    monkeypatch.chdir(tmp_path)
    assert Services().target_path() == default_store_path()
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'store = "{tmp_path / "configured.db"}"\n')
    assert Services().target_path() == tmp_path / "configured.db"
    (tmp_path / "named.env").write_text(f"MNEMOSCOPE_STORE={tmp_path / 'named.db'}\n")
    with env_file(tmp_path / "named.env"):
        assert Services().target_path() == tmp_path / "named.db"
    assert Services(tmp_path / "given.db").target_path() == tmp_path / "given.db"


def test_each_endpoint_is_sent_only_its_own_key(tmp_path, monkeypatch, openai_server, user_config):
    """The LLM endpoint (config file, with its key) and an embedding endpoint at another origin (an
    env file, no key): each request carries the key configured for its origin, or none."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'llm_base_url = "{openai_server.base_url}"\nllm_model = "m"\nllm_api_key = "sk-llm"\n')
    with OpenAIServer() as embeddings:
        (tmp_path / "work.env").write_text(f"MNEMOSCOPE_EMBEDDER=openai\nMNEMOSCOPE_EMBED_BASE_URL={embeddings.base_url}\n"
                                           "MNEMOSCOPE_EMBED_MODEL=toy\nMNEMOSCOPE_MAX_RETRIES=0\n")
        with env_file(tmp_path / "work.env"):
            assert Services().llm_status().reachable
            with Memory(tmp_path / "m.db", extensions=False) as mem:
                mem.add_note("the harbour at dawn")
                assert mem.recall("harbour", strategy="dense").hits
        to_embeddings = [h.get("authorization", "") for _m, _p, h in embeddings.headers]
    to_llm = [h.get("authorization", "") for _m, _p, h in openai_server.headers]
    assert to_llm and set(to_llm) == {"Bearer sk-llm"}
    assert to_embeddings and not any("sk-" in value for value in to_embeddings)
