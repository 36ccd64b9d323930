"""The log file: Tripane's own records from INFO, other libraries' from WARNING, keys never."""

from __future__ import annotations

import logging

import pytest

from core.llm import load_litellm
from core.logs import MASK, TOLD, log_path, mask_secrets, start_logging, stop_logging


@pytest.fixture
def logging_to(tmp_path):
    yield lambda: start_logging(tmp_path / "data")
    stop_logging()


@pytest.mark.parametrize("text", [
    "calling with sk-proj-AbCdEf0123456789xyz now",
    "Anthropic key sk-ant-api03-ZZZZZZZZZZZZZZZZ rejected",
    "{'api_key': 'f0e1d2c3b4a59687'}",
    "headers {\"Authorization\": \"Bearer abcdEFGH12345678\"}",
    "GEMINI AIzaSyA1234567890abcdefghijk",
])
def test_anything_shaped_like_a_key_is_masked(text):
    masked = mask_secrets(text)
    assert MASK in masked
    for secret in ("AbCdEf0123456789xyz", "ZZZZZZZZZZZZZZZZ", "f0e1d2c3b4a59687", "abcdEFGH12345678",
                   "1234567890abcdefghijk"):
        assert secret not in masked


def test_ordinary_text_is_left_alone():
    text = "turn 12: 18,822 tokens, cached 0.97; wrote task_plan.md (token budget 96,000)"
    assert mask_secrets(text) == text


def test_our_records_and_others_warnings_reach_the_file_with_keys_masked(logging_to, tmp_path):
    path = logging_to()
    assert path == log_path(tmp_path / "data")
    logging.getLogger("core.agent.loop").info("turn 3 done")
    logging.getLogger("somelibrary").info("chatter nobody needs")
    logging.getLogger("somelibrary").warning("provider slow")
    try:
        raise RuntimeError("refused key sk-proj-SECRETSECRETSECRET99")
    except RuntimeError:
        logging.getLogger("gui.window").exception("request failed")
    stop_logging()

    text = path.read_text(encoding="utf-8")
    assert "turn 3 done" in text and "provider slow" in text
    assert "chatter nobody needs" not in text
    assert "Traceback" in text and "RuntimeError" in text  # the traceback is kept …
    assert "SECRETSECRETSECRET99" not in text and MASK in text  # … without the key


def test_starting_twice_writes_each_record_once(logging_to):
    logging_to()
    path = logging_to()
    logging.getLogger("core").warning("only once")
    stop_logging()
    assert path.read_text(encoding="utf-8").count("only once") == 1


def test_a_data_folder_that_cannot_hold_a_log_still_starts(tmp_path, capsys):
    blocked = tmp_path / "data"
    blocked.mkdir()
    (blocked / "logs").write_text("a file where the folder should be", encoding="utf-8")
    try:
        assert start_logging(blocked) is None
        logging.getLogger("core").warning("still logged to the console")
    finally:
        stop_logging()
    err = capsys.readouterr().err
    assert "no log file" in err and "still logged to the console" in err


def test_a_warning_the_person_is_told_otherwise_is_kept_in_the_file_not_repeated_on_the_console(tmp_path, capsys):
    path = start_logging(tmp_path / "data")
    try:
        logging.getLogger("core.llm").warning("model call failed (unreachable); retry 1 in 1.0 s", extra=TOLD)
        logging.getLogger("core.agent.loop").warning("the fixed prompt alone exceeds the budget")
    finally:
        stop_logging()
    err = capsys.readouterr().err
    assert "exceeds the budget" in err and "retry 1" not in err  # the run's own line says it
    assert "retry 1 in 1.0 s" in path.read_text(encoding="utf-8")


def test_litellms_record_of_a_failed_call_is_kept_in_the_file_not_printed_on_the_console(tmp_path, capsys):
    load_litellm()  # as Tripane loads it (litellm brings a console handler of its own)
    path = start_logging(tmp_path / "data")
    try:
        try:
            raise RuntimeError("Your default credentials were not found.")
        except RuntimeError:
            logging.getLogger("LiteLLM").exception("Failed to load vertex credentials")
        logging.getLogger("google.auth._default").warning("Authentication failed using Compute Engine")
    finally:
        stop_logging()
    err = capsys.readouterr().err
    assert "vertex credentials" not in err and "Compute Engine" not in err  # the run's own line says what to do
    kept = path.read_text(encoding="utf-8")
    assert "Failed to load vertex credentials" in kept and "Traceback" in kept


def test_litellms_own_printing_stays_for_a_person_who_asked_litellm_for_more(monkeypatch):
    from core.llm import _quiet_on_the_console

    logger = logging.getLogger("LiteLLM")
    handler = logging.StreamHandler()
    logger.addHandler(handler)
    try:
        monkeypatch.setenv("LITELLM_LOG", "DEBUG")  # debugging a provider: each request as litellm sends it
        _quiet_on_the_console()
        assert handler in logger.handlers
        monkeypatch.setenv("LITELLM_LOG", "ERROR")  # as Tripane sets it
        _quiet_on_the_console()
        assert handler not in logger.handlers
    finally:
        logger.removeHandler(handler)
