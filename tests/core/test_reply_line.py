"""While the model is asked, a terminal's passing line says for how long, and how far its reply has come."""

from __future__ import annotations

import asyncio
import io

from core.journal import CallWriting, TextDelta
from core.reply_line import ReplyLine


def test_the_line_counts_the_wait_then_the_thinking_then_the_reply_and_goes_without_a_trace():
    now = [100.0]
    out = io.StringIO()

    async def scenario() -> None:
        line = ReplyLine(out, clock=lambda: now[0])
        line.began("thinking")
        line.draw()
        assert out.getvalue() == ""  # a quick reply comes without the line flashing by
        now[0] += 12
        line.draw()
        assert out.getvalue() == "\r  … waiting for the model · 12 s"
        line.streamed(TextDelta("s", "Let me see", reasoning=True))
        now[0] += 3
        line.draw()
        assert out.getvalue().endswith("\r  … thinking · 15 s".ljust(len("\r  … waiting for the model · 12 s")))
        line.streamed(TextDelta("s", "x" * 1500))
        line.draw()
        assert out.getvalue().endswith("\r  … writing its reply · 1,500 characters · 15 s")
        for piece in (CallWriting("s", "file_write", 9000), CallWriting("s", "file_write", 3400)):
            line.streamed(piece)  # a long file being written
        line.draw()
        assert out.getvalue().endswith("\r  … writing a call to file_write · 12,400 characters · 15 s")
        line.stop()
        assert out.getvalue().endswith("\r" + " " * len("  … writing a call to file_write · 12,400 characters · 15 s")
                                       + "\r")
        line.stop()  # stopped twice (the reply, then the step's line): nothing more is written
        written = out.getvalue()
        now[0] += 30
        line.draw()
        assert out.getvalue() == written

    asyncio.run(scenario())


def test_the_line_is_redrawn_each_second_while_the_model_is_asked():
    out = io.StringIO()

    async def scenario() -> None:
        line = ReplyLine(out)
        line.SHOWN_AFTER_S, line.INTERVAL_S = 0.0, 0.02
        line.began("thinking")
        await asyncio.sleep(0.15)
        line.stop()
        drawn = out.getvalue().count("waiting for the model")
        await asyncio.sleep(0.1)
        assert drawn >= 3 and out.getvalue().count("waiting for the model") == drawn

    asyncio.run(scenario())


def test_a_compaction_is_counted_as_well():
    now = [0.0]
    out = io.StringIO()

    async def scenario() -> None:
        line = ReplyLine(out, clock=lambda: now[0])
        line.began("compacting")  # a local model's summary of a long history
        now[0] += 12
        line.draw()
        line.stop()

    asyncio.run(scenario())
    assert out.getvalue().startswith("\r  … compacting the context · 12 s")
