"""The model strings offered as a person types a model's name, from litellm's bundled map."""

from __future__ import annotations

import datetime

import pytest

from core.llm import load_litellm
from core.model_names import (
    DEPRECATION_NOTICE_DAYS,
    PROVIDERS,
    api_base_problem,
    close_model_names,
    deprecated_on,
    deprecation_near,
    deprecation_words,
    known_chat_models,
    model_string_problem,
    models_on,
)
from core.secrets import provider_of


def test_the_models_offered_are_litellm_strings_of_tool_calling_chat_models():
    names = known_chat_models()
    # The map names OpenAI's and Anthropic's models bare; offered, they carry their provider.
    for family in ("openai/gpt-", "anthropic/claude-", "gemini/gemini-"):
        assert any(name.startswith(family) for name in names), family
    assert names[0].startswith("openai/")  # the providers most asked for come first
    assert len(names) == len(set(names))
    cost_map = load_litellm().model_cost
    for name in names:
        provider, bare = name.split("/", 1)
        assert provider in PROVIDERS and provider_of(name) == provider
        info = cost_map.get(name) or cost_map[bare]
        assert info["mode"] == "chat" and info["supports_function_calling"], name
    # not an embedding model, a fine-tune, a speech model, nor a deployment the person names on Azure
    assert not [name for name in names if "embedding" in name or "ft:" in name or "audio" in name
                or name.startswith("azure")]


def test_a_model_past_its_deprecation_date_or_close_to_it_is_not_offered():
    cost_map = load_litellm().model_cost
    dated = next((key, info["deprecation_date"]) for key, info in cost_map.items()
                 if info.get("litellm_provider") in ("openai", "anthropic") and info.get("mode") == "chat"
                 and info.get("supports_function_calling") and info.get("deprecation_date") and "/" not in key)
    key, ends = dated
    provider = cost_map[key]["litellm_provider"]
    day = datetime.date.fromisoformat(ends)
    notice = datetime.timedelta(days=DEPRECATION_NOTICE_DAYS)
    assert f"{provider}/{key}" in models_on((day - notice - datetime.timedelta(days=1)).isoformat())
    assert f"{provider}/{key}" not in models_on((day - notice).isoformat())  # the status bar would point it out
    assert f"{provider}/{key}" not in models_on((day + datetime.timedelta(days=1)).isoformat())


def test_a_mistyped_or_unprefixed_model_is_matched_to_the_names_it_may_mean(models_of_2026_11_25):
    assert close_model_names("gpt-4o-mni")[0] == "openai/gpt-4o-mini"  # without its provider, and mistyped
    assert close_model_names("openai/gpt-4o-mni")[0] == "openai/gpt-4o-mini"
    assert close_model_names("gpt-4o-mini")[0] == "openai/gpt-4o-mini"  # right, but without its provider
    assert close_model_names("openai/my-own-model") == [] and close_model_names("  ") == []


def test_a_models_deprecation_day_is_read_from_the_map_and_said_by_the_connection_test():
    from core.providers import Connection

    cost_map = load_litellm().model_cost
    assert deprecated_on("anthropic/claude-sonnet-4-5") == cost_map["claude-sonnet-4-5"]["deprecation_date"]
    assert deprecated_on("gemini/gemini-2.5-flash") == cost_map["gemini/gemini-2.5-flash"]["deprecation_date"]
    assert deprecated_on("openai/my-own-model") == "" and deprecated_on("anthropic/claude-sonnet-5") == ""
    soon = Connection("ready", 200_000, True, deprecated_on="2999-01-01").details()
    assert soon.startswith("(context window 200,000 tokens; prompt caching marked for Claude)")
    assert "deprecates this model on 2999-01-01" in soon and "choose a newer one" in soon
    gone = Connection("ready", 200_000, False, deprecated_on="2000-01-01").details()
    assert "deprecated this model on 2000-01-01" in gone and "may fail any day" in gone
    assert "deprecat" not in Connection("ready", 200_000, False).details()


def test_a_model_is_pointed_out_from_thirty_days_before_its_deprecation_day_on():
    day = load_litellm().model_cost["claude-sonnet-4-5"]["deprecation_date"]
    before = (datetime.date.fromisoformat(day) - datetime.timedelta(days=DEPRECATION_NOTICE_DAYS)).isoformat()
    earlier = (datetime.date.fromisoformat(day) - datetime.timedelta(days=DEPRECATION_NOTICE_DAYS + 1)).isoformat()
    after = (datetime.date.fromisoformat(day) + datetime.timedelta(days=90)).isoformat()
    model = "anthropic/claude-sonnet-4-5"
    assert deprecation_near(model, on=earlier) == ""
    assert deprecation_near(model, on=before) == day and deprecation_near(model, on=after) == day
    assert deprecation_near(model, "http://127.0.0.1:8080/v1", on=after) == ""  # a server's own model of that name
    assert deprecation_near("openai/my-own-model", on=after) == ""
    assert "deprecates this model on" in deprecation_words(day, on=before)
    assert "deprecated this model on" in deprecation_words(day, on=after)


@pytest.mark.parametrize("address", ["http://127.0.0.1:8000/v1", "https://api.example.com/v1", "127.0.0.1:11434",
                                     "localhost:8080", "localhost:1234/v1", "[::1]:8000"])
def test_a_servers_address_is_not_taken_for_a_model(address):
    assert model_string_problem(address).startswith(f"{address} is a server's address, not a model: put it under "
                                                    "API base")


@pytest.mark.parametrize("given, meant", [("127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
                                         ("localhost:11434", "http://localhost:11434"),
                                         ("http//127.0.0.1:1234/v1", "http://127.0.0.1:1234/v1"),
                                         ("https:/api.example.com/v1", "https://api.example.com/v1")])
def test_an_api_base_without_its_scheme_is_refused_with_what_it_may_mean(given, meant):
    # It reached litellm as a path: "The provider had an internal error: /127.0.0.1:8000/v1/chat/completions".
    assert api_base_problem(given) == f"The API base {given} lacks its http:// (or https://): {meant}, for instance."


def test_api_bases_that_are_web_addresses_are_taken():
    assert [api_base_problem(base) for base in ("", None, "http://127.0.0.1:8000/v1", "HTTPS://api.x.ai/v1")] == [""] * 4
    assert api_base_problem("ftp://files.example.com") == ("The API base ftp://files.example.com is not a web address: "
                                                           "it begins with http:// or https://.")


@pytest.mark.parametrize("model", ["openai/gpt-5.4-mini", "ollama_chat/llama3.1:8b", "hosted_vllm/Qwen/Qwen3-8B",
                                   "openrouter/anthropic/claude-sonnet-4.5", "gpt-4o",
                                   "bedrock/arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2"])
def test_model_strings_are_taken_as_they_are(model):
    assert model_string_problem(model) == ""
