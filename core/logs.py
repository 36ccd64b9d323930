"""Tripane's log files: what a person looks at, or sends, when something went wrong.

Started from a menu or a dock, the window has no terminal, so its warnings and unexpected errors
written to stderr would be lost. They also go to `<data folder>/logs/tripane.log`, rotated at 1 MB
with three old files kept. `tripane run` and `resume` write `tripane-cli.log` beside it: a run left
going in a terminal that has since closed keeps its record too, and a separate file means the window
and a CLI run never rotate one file under each other (on Windows, renaming a file another process
holds open fails). API keys never reach either: text shaped like a key is masked as the record is
formatted, traceback included.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path

LOG_FOLDER = "logs"
LOG_NAME = "tripane.log"  # the window's
CLI_LOG_NAME = "tripane-cli.log"  # tripane run / resume
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
OUR_LOGGERS = ("core", "gui")  # their INFO records are kept; other libraries' from WARNING up

# Provider key prefixes (OpenAI sk-/sk-proj-, Anthropic sk-ant-, Google AIza, Groq gsk_, xAI xai-,
# Hugging Face hf_), and any value given to a key-like name (api_key=…, "Authorization": "Bearer …").
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?|gsk_|xai-|hf_|AIza)[A-Za-z0-9_\-]{12,}"
    r"|(?P<label>(?i:(?:api[_-]?key|authorization|x-api-key|token)[\"']?\s*[:=]\s*[\"']?(?:bearer\s+)?))[^\s\"',;}]{8,}"
)
MASK = "«key masked»"
# extra= of a warning the person is told another way (the window's status bar, a line of `tripane
# run`): the log file keeps it, the console does not say it twice.
TOLD = {"told": True}


# The libraries that make model calls: their records of a failed call (litellm's with a traceback:
# a Vertex AI call without a sign-in printed forty lines) are what Tripane reports in its own words.
MODEL_CALL_LOGGERS = ("LiteLLM", "google.auth", "botocore")


def for_the_console(record: logging.LogRecord) -> bool:
    """Not what the person is told another way: a warning marked TOLD, and the model call
    libraries' own records. The log file keeps both."""
    return not getattr(record, "told", False) and not record.name.startswith(MODEL_CALL_LOGGERS)


def starts_an_error_to_report(line: str) -> bool:
    """Whether a log file's line starts an ERROR record worth a bug report: not a model call
    library's record of a failed call (a refused key, no cloud sign-in), which the person was told
    of in Tripane's words and mends on their side."""
    _, error, logger = line.partition(" ERROR ")
    return bool(error) and not logger.startswith(MODEL_CALL_LOGGERS)


def mask_secrets(text: str) -> str:
    return _KEY_SHAPES.sub(lambda match: (match.group("label") or "") + MASK, text)


class MaskingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return mask_secrets(super().format(record))


def log_path(data_dir: Path, name: str = LOG_NAME) -> Path:
    return data_dir / LOG_FOLDER / name


def log_paths(data_dir: Path) -> list[Path]:
    return [log_path(data_dir, name) for name in (LOG_NAME, CLI_LOG_NAME)]


def start_logging(data_dir: Path | None, name: str = LOG_NAME) -> Path | None:
    """Warnings to stderr, and (when the data folder can take it) INFO and up of Tripane's own
    loggers to the log file. Called again (a test, a second window in one process), it replaces
    what it set up before rather than writing every line twice. Returns the file, or None."""
    stop_logging()
    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING)
    console.setFormatter(MaskingFormatter("%(levelname)s %(name)s: %(message)s"))
    console.addFilter(for_the_console)
    handlers: list[logging.Handler] = [console]
    path = None
    if data_dir is not None:
        try:
            path = log_path(data_dir, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            file = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                        encoding="utf-8", delay=True)
        except OSError as exc:  # an unwritable data folder: the window says so on its own
            console.handle(logging.makeLogRecord({"levelno": logging.WARNING, "levelname": "WARNING",
                                                  "name": __name__, "msg": f"no log file: {exc}"}))
            path = None
        else:
            file.setLevel(logging.INFO)
            file.setFormatter(MaskingFormatter(FORMAT))
            handlers.append(file)
    for handler in handlers:
        handler.tripane = True
        root.addHandler(handler)
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    return path


def stop_logging() -> None:
    """Undo start_logging: close the file, leave logging as Python starts it."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "tripane", False)]:
        root.removeHandler(handler)
        handler.close()
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET)
