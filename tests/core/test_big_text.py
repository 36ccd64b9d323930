"""Large texts worked on in slices give what the one-call operations give."""

from __future__ import annotations

import hashlib

import pytest

from core import big_text
from core.agent.rules import error_signature

# Several slices, with multi-byte characters falling across slice boundaries.
TEXT = "".join(f"line {i}: café ✓ naïve \U0001f600\n" for i in range(200_000))


def test_decode_hash_count_and_write_match_the_plain_operations(tmp_path):
    data = TEXT.encode("utf-8")
    assert len(data) > 3 * big_text.SLICE
    assert big_text.decode_utf8(data) == TEXT
    assert big_text.sha256_hex(TEXT) == hashlib.sha256(data).hexdigest()
    assert big_text.count(TEXT, "\n") == TEXT.count("\n")
    big_text.write(tmp_path / "out.txt", TEXT)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == TEXT


def test_bytes_that_are_not_utf8_fail_as_a_plain_decode_does():
    data = TEXT.encode("utf-8") + b"\xff trailing"
    with pytest.raises(UnicodeDecodeError):
        big_text.decode_utf8(data)
    with pytest.raises(UnicodeDecodeError):
        big_text.decode_utf8(TEXT.encode("utf-8")[:-2])  # cut inside the last character (an emoji)


def test_a_long_failure_is_grouped_by_its_first_and_last_lines():
    long = "Command failed with exit code 1.\n" + TEXT + "FAILED tests/test_a.py::test_b - AssertionError\n"
    short = "Command failed with exit code 1.\nfew lines\nFAILED tests/test_a.py::test_b - AssertionError\n"
    assert error_signature("shell_run", "error", long) == error_signature("shell_run", "error", short)
