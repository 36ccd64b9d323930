"""The settings the window and the command line share: a JSON file that never stops a start."""

from __future__ import annotations

import json

from core.user_settings import read_settings, settings_file, write_settings


def test_the_settings_come_back_as_saved_and_only_the_shared_ones_are_kept(tmp_path):
    path = tmp_path / "settings.json"
    write_settings({"model": "anthropic/claude-3-5-haiku-latest", "warn_turn": 9, "budget_usd": 2.5,
                    "theme": "dark", "api_key": "sk-never"}, path)
    assert read_settings(path) == {"model": "anthropic/claude-3-5-haiku-latest", "warn_turn": 9, "budget_usd": 2.5}
    assert "sk-never" not in path.read_text(encoding="utf-8")  # keys live in the keyring, not here
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temporary file left beside it


def test_a_later_versions_settings_are_kept_when_this_one_saves(tmp_path):
    # The person went back to this version for a while: its Save must not lose what the later
    # one keeps in the same file, which they find again on returning to it.
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"model": "openai/gpt-5.4-mini", "voice_input": {"device": "usb"},
                                "sidebar": "left"}), encoding="utf-8")
    assert read_settings(path) == {"model": "openai/gpt-5.4-mini"}
    write_settings({"model": "anthropic/claude-sonnet-latest", "warn_turn": 9}, path)
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "voice_input": {"device": "usb"}, "sidebar": "left", "model": "anthropic/claude-sonnet-latest", "warn_turn": 9}


def test_a_missing_or_broken_file_gives_the_defaults_and_a_wrong_value_only_loses_itself(tmp_path, caplog):
    path = tmp_path / "settings.json"
    assert read_settings(path) == {}
    path.write_text("{ half a file", encoding="utf-8")
    assert read_settings(path) == {} and "cannot be read" in caplog.text
    path.write_text(json.dumps(["not", "an", "object"]), encoding="utf-8")
    assert read_settings(path) == {}
    path.write_text(json.dumps({"model": "openai/gpt-4o-mini", "max_turns": "many", "warn_turn": "12",
                                "danger_turn": True, "budget_usd": [1]}), encoding="utf-8")
    assert read_settings(path) == {"model": "openai/gpt-4o-mini", "warn_turn": 12}
    assert "max_turns" in caplog.text


def test_the_file_is_in_the_folder_the_environment_names(tmp_path, monkeypatch):
    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path))
    assert settings_file() == tmp_path / "settings.json"
    write_settings({"model": "openai/gpt-4o-mini"})
    assert read_settings() == {"model": "openai/gpt-4o-mini"}

