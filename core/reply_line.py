"""A passing line on a terminal while the model is asked, or the context compacted.

A model on the person's own computer may read a long context for minutes before its first word,
and write a long answer at a few words a second; `tripane run` prints a step's line only once its
reply is whole. Without this line that is minutes of silence, which reads as a hang. It is redrawn
in place each second, and wiped before anything else is printed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TextIO

from core.journal import CallsWritten, CallWriting, TextDelta
from core.render import activity_progress


class ReplyLine:
    INTERVAL_S = 1.0
    SHOWN_AFTER_S = 2.0  # a quick reply (most of a hosted model's) comes without the line flashing by

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.clock = clock
        self.activity = "thinking"
        self.started: float | None = None  # when the run began it; None: it does none of them
        self.thought = self.written = 0  # characters of its thinking and of its reply so far
        self.call = CallsWritten()
        self._shown = 0  # the length of the line on the terminal, to wipe it
        self._ticking: asyncio.Task | None = None

    def began(self, activity: str) -> None:
        """The run began one of TIMED_ACTIVITIES (the model asked, a compaction): the line counts from now."""
        self.activity = activity
        self.started, self.thought, self.written, self.call = self.clock(), 0, 0, CallsWritten()
        if self._ticking is None or self._ticking.done():
            self._ticking = asyncio.get_running_loop().create_task(self._tick())

    def streamed(self, piece: TextDelta | CallWriting) -> None:
        if isinstance(piece, CallWriting):  # a long file being written
            self.call.add(piece)
        elif piece.reasoning:
            self.thought += len(piece.text)
        else:
            self.written += len(piece.text)

    def stop(self) -> None:
        """The reply is whole, or something else happens: the line goes."""
        self.started = None
        if self._ticking is not None:
            self._ticking.cancel()
            self._ticking = None
        self.wipe()

    def draw(self) -> None:
        seconds = self.clock() - self.started if self.started is not None else 0.0
        if self.started is None or seconds < self.SHOWN_AFTER_S:
            return
        progress = activity_progress(self.activity, seconds, self.thought, self.written, self.call.name, self.call.chars)
        line = f"  … {progress}"
        # Spaces, not an escape sequence, clear the rest: a console on Windows may not read escapes.
        self.stream.write("\r" + line.ljust(self._shown))
        self.stream.flush()
        self._shown = len(line)

    def wipe(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0

    async def _tick(self) -> None:
        while self.started is not None:
            await asyncio.sleep(self.INTERVAL_S)
            self.draw()
