"""`tripane`: run, resume and inspect sessions headless.

Exit codes: 0 done, 1 failed or stopped, 2 bad usage or input, 3 waiting for a person.
`tripane --version` and `--help` import nothing heavy (no litellm, no Qt).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from core.build import version_text
from core.network import prepare_for_requests
from core.text import local_time, shown_text

EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_WAITING = 0, 1, 2, 3
HISTORY_FILES = {"plan": "task_plan.md", "findings": "findings.md", "progress": "progress.md"}
FOLLOW_INTERVAL_S = 0.5  # how often `tripane show --follow` looks for new events


REFLECT_HELP = ("when the task ends, reflect on it (one request to the summary model; the report goes to "
                "long-term memory); the default when Settings says to reflect on each task")


def _model_string(text: str) -> str:
    """--model as argparse takes it: a server's address there is refused, with where it goes."""
    from core.model_names import model_string_problem

    if problem := model_string_problem(text, "pass it with --api-base"):
        raise argparse.ArgumentTypeError(problem)
    return text


def _api_base(text: str) -> str:
    """--api-base as argparse takes it: one that is no web address is refused, with what it may mean."""
    from core.model_names import api_base_problem

    if problem := api_base_problem(text):
        raise argparse.ArgumentTypeError(problem)
    return text


KEY_ENV_HELP = ("the environment variable holding the model's API key, used for this command alone and never "
                "stored: the way to give a server of your own (sent only its own key, never a provider's variable) "
                "its key where no keyring is, as on a server; a variable, not the key, as a command line is seen by "
                "anyone's ps")


def _hold_key_from_environment(args, model: str | None, api_base: str | None) -> None:
    """--api-key-env: the model's key, read from the variable it names, held for this process (see
    core.secrets.hold_api_key) under the name the model's requests look it up by."""
    variable = getattr(args, "api_key_env", None)
    if not variable or not model:
        return
    key = os.environ.get(variable, "").strip()
    if not key:
        raise ValueError(f"--api-key-env {variable}: there is no {variable} in this environment (or it is empty); "
                         f"set it to the key first (export {variable}=…)")
    from core.secrets import hold_api_key, key_name

    hold_api_key(key_name(model, api_base), key)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tripane", description="Supervise LLM agents that keep a three-file working memory.")
    parser.add_argument("--version", action="version", version=f"tripane {version_text()}")
    parser.add_argument("--data-dir", type=Path,
                        help="where sessions are stored (default: the one chosen in the window's Settings, else the "
                             "user data folder)")
    parser.add_argument("--selftest", action="store_true", help="check the installed app (window offscreen, scripted task)")
    # Also accepted after the command (`tripane run … --data-dir D`); SUPPRESS keeps the global value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command")

    run = commands.add_parser("run", help="start a session on a task", parents=[common])
    run.add_argument("task", nargs="?", help="what the agent should do (or --task-file)")
    run.add_argument("--task-file", type=Path, metavar="FILE",
                     help="the task read from a file (a long specification: UTF-8 text, or a PDF, Word, Excel or "
                          "PowerPoint file's text), in place of TASK; with TASK, what it says goes with it")
    run.add_argument("--picture", action="append", metavar="FILE", type=Path,
                     help="a picture to show the agent with the task (PNG, JPEG, GIF, WebP, at most 5 MB; a PDF of up "
                          "to 5 pages, such as a scan: its pages; again for more): a screenshot of what is wrong")
    run.add_argument("--give", action="append", metavar="FILE", type=Path,
                     help="a file from outside the work folder for the agent to read (a customer's support bundle, a "
                          "database, a long log; up to 256 MB): copied into the session, and named with the task "
                          "(again for more)")
    run.add_argument("--model", type=_model_string,
                     help="a litellm model string, e.g. openai/gpt-5.4-mini (default: the model, server, "
                          "context window and summary model chosen in the window's Settings)")
    run.add_argument("--api-base", type=_api_base, help="address of an OpenAI-compatible server (Ollama, llama.cpp, …)")
    run.add_argument("--api-key-env", metavar="VARIABLE", help=KEY_ENV_HELP)
    run.add_argument("--workdir", type=Path, default=Path.cwd(), help="the folder the agent may work in (default: here)")
    run.add_argument("--context-window", type=int, metavar="TOKENS",
                     help="how much the model reads at once (default: the model's own; for Ollama its length, "
                          "at most 16,384); for local servers, what the server was started with")
    run.add_argument("--summary-model", help="a cheaper model for the summaries that compact a long context "
                                            "(default: --model)")
    run.add_argument("--helper-model", help="a cheaper model that can call tools, for the research helpers "
                                           "(default: --model, which also reads when this one fails)")
    run.add_argument("--reasoning-effort", choices=EFFORT_CHOICES,
                     help="how hard a reasoning model thinks (Claude up to 4.5: a thinking budget; default: the model's own)")
    # Their defaults, and the turn thresholds', are the window's Settings (else 100, ask, no caps).
    run.add_argument("--max-turns", type=int,
                     help="end the session after this many turns (default: 100; the person is asked at turn 30)")
    run.add_argument("--approve", choices=("ask", "all", "none"),
                     help="risky tools (shell, network): ask the person (default), allow all, or refuse all")
    run.add_argument("--budget-tokens", type=int, help="ask the person once this many tokens are used (0: no cap)")
    run.add_argument("--budget-usd", type=float, help="ask the person once this much is spent (0: no cap)")
    run.add_argument("--answer-wait", type=int, metavar="MIN",
                     help="when the agent asks with a fallback and nobody answers for MIN minutes, it goes on with "
                          "its fallback (0: wait for the person; unattended runs then exit with code 3)")
    run.add_argument("--json", action="store_true", help="print every event as one JSON object per line")
    run.add_argument("--no-memory", action="store_true", help="run without long-term memory (no recall, no daily log)")
    run.add_argument("--no-project-instructions", action="store_true",
                     help="do not follow the workdir's AGENTS.md / CLAUDE.md (followed by default)")
    run.add_argument("--no-diagnosis", action="store_true",
                     help="do not have a failure that happens again, or work put back, diagnosed by the summary model (Settings: "
                          "'Diagnose it as soon as it happens again')")
    run.add_argument("--no-work-copy", action="store_true",
                     help="do not copy the work folder before the first shell command (what commands change is then "
                          "neither listed by `tripane changes` nor put back; Settings: 'Copy the work folder')")
    run.add_argument("--reflect", action="store_true", help=REFLECT_HELP)
    servers = run.add_mutually_exclusive_group()
    servers.add_argument("--servers", metavar="NAME[,NAME…]", help="give the agent these tool servers' tools, on or "
                         "off (default: those on; `tripane servers` lists them)")
    servers.add_argument("--no-servers", action="store_true", help="give the agent no tool server's tools")

    resume = commands.add_parser("resume", help="continue a session (after a crash, a stop, a question, or an error once its cause is fixed)", parents=[common])
    resume.add_argument("session", help="session id (or a unique prefix)")
    resume.add_argument("--answer", help="answer the session's open question with this choice")
    resume.add_argument("--text", default="", help="free text to go with the answer")
    resume.add_argument("--message", help="a new message for the agent (continues an ended session)")
    resume.add_argument("--picture", action="append", metavar="FILE", type=Path,
                        help="a picture to show the agent with the message, or alone (PNG, JPEG, GIF, WebP, at "
                             "most 5 MB; again for more): a screenshot of what is wrong")
    resume.add_argument("--give", action="append", metavar="FILE", type=Path,
                        help="a file from outside the work folder for the agent to read, copied into the session and "
                             "named with the message (again for more)")
    resume.add_argument("--model", type=_model_string,
                        help="go on with another model from here (the session's is gone, refused, too "
                             "weak or too dear); its server and window with --api-base, --context-window")
    resume.add_argument("--api-base", type=_api_base, help="with --model: the address of its server, for a local or self-hosted one")
    resume.add_argument("--api-key-env", metavar="VARIABLE", help=KEY_ENV_HELP)
    resume.add_argument("--context-window", type=int, metavar="TOKENS",
                        help="with --model: how much it reads at once (default: the model's own)")
    resume.add_argument("--reasoning-effort", choices=EFFORT_CHOICES,
                        help="how hard the model thinks from here (default: as before; 'default': the model's own)")
    resume.add_argument("--workdir", type=Path, metavar="FOLDER",
                        help="the work folder's new place, when it was moved or renamed (or the session was "
                             "imported from another computer): the agent works there from now on")
    resume.add_argument("--json", action="store_true")
    resume.add_argument("--no-memory", action="store_true", help="run without long-term memory")
    resume.add_argument("--reflect", action="store_true", help=REFLECT_HELP)
    reflect = commands.add_parser("reflect", help="what a session's work teaches: the summary model judges it (outcome, "
                                  "efficiency, errors, strategies, gaps); strategies three sessions share become "
                                  "lessons in long-term memory", parents=[common])
    reflect.add_argument("session", nargs="?", help="session id or a unique prefix (default: the newest session)")
    reflect.add_argument("--json", action="store_true", help="print the reflection event as one JSON object")
    reflect.add_argument("--api-key-env", metavar="VARIABLE", help=KEY_ENV_HELP)

    ask = commands.add_parser("ask", help="ask a research helper about a session's work, aside from its agent (which "
                              "never sees it): it reads the work folder, the agent's files and long-term memory",
                              parents=[common])
    ask.add_argument("question")
    ask.add_argument("--session", help="session id or a unique prefix (default: the newest session)")
    ask.add_argument("--no-memory", action="store_true", help="without long-term memory")
    ask.add_argument("--json", action="store_true", help="print the helper's steps as JSON objects, one a line")
    ask.add_argument("--api-key-env", metavar="VARIABLE", help=KEY_ENV_HELP)

    window = commands.add_parser("gui", help="open the window (also what `tripane` alone does)", parents=[common])
    window.add_argument("--settings", type=Path, help="an INI settings file instead of the user's settings")
    doctor = commands.add_parser("doctor", help="check this machine: Python, Qt, keyring, data folder, database, provider",
                                 parents=[common])
    doctor.add_argument("--model", type=_model_string,
                        help="also check that this model answers (one tiny request; default: the model "
                             "chosen in the window's Settings)")
    doctor.add_argument("--api-base", type=_api_base, help="the server address for --model, for local servers")
    doctor.add_argument("--api-key-env", metavar="VARIABLE", help=KEY_ENV_HELP)
    doctor.add_argument("--set-aside-damaged", action="store_true",
                        help="if the database is damaged: rename it beside itself (nothing is deleted) and read "
                             "back the sessions it still holds into a new one, before the checks")
    export = commands.add_parser("export", help="a session as a zip: the three files and the event log", parents=[common])
    export.add_argument("session", nargs="?", help="session id or a unique prefix (default: the newest session)")
    export.add_argument("--out", type=Path, help="the zip to write (default: ./tripane-ID.zip)")
    imported = commands.add_parser("import", help="a session exported elsewhere (tripane export), into this data folder",
                                   parents=[common])
    imported.add_argument("file", type=Path, help="the export's zip file")
    memory = commands.add_parser("memory", help="long-term memory: search it, check it, choose its embedding model",
                                 parents=[common])
    memory_commands = memory.add_subparsers(dest="memory_command", required=True)
    search = memory_commands.add_parser("search", help="hybrid search (meaning + keywords) of MEMORY.md, daily logs, skills",
                                        parents=[common])
    search.add_argument("query")
    search.add_argument("--top-k", type=int, default=8)
    search.add_argument("--mode", choices=("hybrid", "vector", "keyword"), default="hybrid")
    search.add_argument("--json", action="store_true")
    check = memory_commands.add_parser("doctor", help="duplicates, superseded entries, contradictions, old daily logs",
                                       parents=[common])
    check.add_argument("--apply", action="store_true", help="summarise daily logs older than 30 days (originals kept)")
    memory_commands.add_parser("status", help="what is indexed and how vectors are searched", parents=[common])
    memory_commands.add_parser("strategies", help="the strategies reflections suggested, how many sessions' "
                               "reflections did, and which became lessons", parents=[common])
    memory_commands.add_parser("learned", help="what the agent learned: the lessons in force and where each came "
                               "from, the strategies on their way, entries to confirm, the skills", parents=[common])
    review = memory_commands.add_parser("review", help="review a day's work across its tasks (by default the latest "
                                        "day not reviewed yet): what recurs from task to task, kept beside the "
                                        "reflections; its strategies count toward lessons", parents=[common])
    review.add_argument("--day", help="the day to review, YYYY-MM-DD")
    review.add_argument("--model", type=_model_string,
                        help="the model that reviews (default: the summary model chosen in Settings, "
                             "else the model)")
    review.add_argument("--api-base", type=_api_base, help="its server, for a local or self-hosted one")
    review.add_argument("--json", action="store_true", help="print what came of it as one JSON object")
    variant = memory_commands.add_parser("variant", help="test a skill's variant that waits for you, or set one aside "
                                         "(also during its test); `memory learned` lists them", parents=[common])
    variant.add_argument("skill", help="the skill's file name without .md (skills/<name>.md)")
    variant.add_argument("action", choices=("test", "drop"))
    config = memory_commands.add_parser("config", help="choose the embedding model and vector search for this data folder",
                                        parents=[common])
    config.add_argument("--embedding-model",
                        help="a litellm embedding model (e.g. openai/text-embedding-3-small), or 'local' for the offline one")
    config.add_argument("--vectors", choices=("auto", "sqlite-vec", "exact"),
                        help="auto: sqlite-vec where it loads, else the exact scan; exact: in memory, faster on large "
                             "indexes, needs RAM (1.5 KB a chunk)")
    config.add_argument("--api-base", default="", help="server address for a local embedding server")
    from core.tool_servers.cli import add_parser as add_servers_parser

    add_servers_parser(commands)
    sessions = commands.add_parser("sessions", aliases=["list"], help="list sessions, newest first", parents=[common])
    sessions.add_argument("search", nargs="?", default="",
                          help="only those whose task, title, model or work folder holds this text, or whose "
                               "conversation says it")
    spending = commands.add_parser("spending", help="what the models cost: by day, by model, by session",
                                   parents=[common])
    spending.add_argument("--days", type=int, default=30,
                          help="the last N days, today included (default 30; 0: the whole log)")
    spending.add_argument("--json", action="store_true")
    history = commands.add_parser("history", help="the versions of a session's plan, findings or progress: who "
                                  "wrote each, when, what it changed; or the whole text of one", parents=[common])
    history.add_argument("session", nargs="?", help="session id or a unique prefix (default: the newest session)")
    history.add_argument("--file", choices=tuple(HISTORY_FILES), default="plan",
                         help="plan (task_plan.md, the default), findings (findings.md) or progress (progress.md)")
    history.add_argument("--version", type=int, help="print the whole text this version left")
    history.add_argument("--diff", action="store_true", help="with --version: print what it changed instead")
    changes = commands.add_parser("changes", help="the files the agent changed in a session (with its file tools or "
                                  "shell commands), what was done to each, and putting files back as they were",
                                  parents=[common])
    changes.add_argument("session", nargs="?", help="session id or a unique prefix (default: the newest session)")
    changes.add_argument("paths", nargs="*", help="files of the work folder (as listed): print what the agent did "
                                                  "to each")
    # Its files either after it or before it: argparse takes `ID --put-back A B` and `ID A B --put-back`.
    changes.add_argument("--put-back", nargs="*", metavar="PATH",
                         help="put these files (or the PATHS) back as they were before the session (a file the agent "
                              "created is removed; a folder: the files changed in it, . all of them); the agent is "
                              "told at its next step")
    changes.add_argument("--why", default="", help="with --put-back: why, for the agent to read")
    changes.add_argument("--patch", action="store_true",
                         help="print what the agent changed (or the PATHS; a folder: the files changed in it) as one "
                              "patch in git's format, to review or apply elsewhere (git apply, patch -p1)")
    changes.add_argument("--output", "-o", metavar="FILE", help="with --patch: write it to FILE (PowerShell's > "
                                                               "would write it as UTF-16)")
    back = commands.add_parser("go-back", help="begin a new session from before one of a session's steps, with its "
                               "plan, findings, progress and the work folder's files the agent changed as they were "
                               "then, to tell the agent what to do instead (the session stays as it was)",
                               parents=[common])
    back.add_argument("session", help="session id or a unique prefix")
    back.add_argument("step", type=int, help="the agent's step to go back to before ([turn N] in `tripane show`)")
    back.add_argument("--leave-files", action="store_true",
                      help="leave the work folder's files as they are now (the agent is told which changed since)")
    back.add_argument("--dry-run", action="store_true", help="say what going back would put back, and do nothing")
    delete = commands.add_parser("delete", help="delete sessions: their event logs, three files, offloads and copies "
                                                "(the work folder is not touched)", parents=[common])
    delete.add_argument("sessions", nargs="+", metavar="SESSION", help="session ids or unique prefixes")
    delete.add_argument("--yes", "-y", action="store_true",
                        help="without asking (which a script, not at a terminal, must say)")
    show = commands.add_parser("show", help="print a session's events and where its files are", parents=[common])
    show.add_argument("session", nargs="?", help="session id or a unique prefix (default: the newest session)")
    shown_as = show.add_mutually_exclusive_group()
    shown_as.add_argument("--json", action="store_true", help="every event as one JSON object per line")
    shown_as.add_argument("--markdown", action="store_true",
                          help="the conversation as a Markdown transcript, to paste into an issue or a pull request")
    shown_as.add_argument("--summary", action="store_true",
                          help="the session at a glance: time, turns, tool calls and failures, questions, cost, changes")
    show.add_argument("--follow", "-f", action="store_true",
                      help="go on printing its events as they come (a run in another terminal or the window) until "
                           "the run ends; Ctrl+C stops following")
    return parser


def _utf8_output() -> None:
    """Print UTF-8 where the stream would not take it. On Windows, output sent to a pipe or a file
    uses the ANSI code page (cp1252), which has no ✓, ■ or the agent's Chinese text: printing them
    raised UnicodeEncodeError and lost the rest of the output."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")


def _task_given(parser: argparse.ArgumentParser, task: str | None, task_file: Path | None) -> str:
    """`tripane run`'s task: as typed, read from --task-file, or typed with the file's text after it
    (as a file dropped on the window's task box goes). A specification pasted on a command line
    meets the shell's quoting, and cmd's 8,191-character limit."""
    from core.documents import NoText, PicturesOnly, document_text, kind_of_file
    from core.dropped_files import as_carried

    if task_file is None:
        if not task or not task.strip():
            parser.error("give the task: what the agent should do (or --task-file FILE)")
        return task
    from core.archives import archive_kind

    if kind := archive_kind(task_file):  # (a customer's support bundle: the agent reads it in the work folder)
        parser.error(f"the task file {task_file} is a {kind} archive: give it to the agent with --give {task_file} "
                     "and the task as TASK (the agent reads the files in it)")
    try:
        if kind := kind_of_file(task_file):  # (a specification written in Word, a paper as a PDF)
            text = document_text(task_file, task_file.name, kind).text
        else:
            text = task_file.read_bytes().decode("utf-8-sig")
    except PicturesOnly as why:  # (a scanned letter: its pages are pictures, which --picture shows)
        parser.error(f"the task file {why} To show its pages to a model that sees pictures, give it with --picture "
                     f"{task_file} and the task as TASK.")
    except NoText as why:
        parser.error(f"the task file {why}")
    except OSError as exc:
        parser.error(f"the task file {task_file} cannot be read: {exc.strerror or exc}")
    except UnicodeDecodeError:
        parser.error(f"the task file {task_file} is not UTF-8 text")
    if not text.strip():
        parser.error(f"the task file {task_file} is empty")
    return f"{task.strip()}\n\n{as_carried(task_file, text)}" if task and task.strip() else text


def main(argv: list[str] | None = None) -> int:
    _utf8_output()
    prepare_for_requests()  # the computer's certificates trusted, no proxy for its own servers
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        args.task = _task_given(parser, args.task, args.task_file)
    for name in ("task", "message", "answer", "text"):  # bytes a terminal sent that are not UTF-8
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, shown_text(getattr(args, name)))
    if args.command in (None, "gui"):
        return _open_window(args)
    # imported here so --version/--help stay light
    from core.store import StoreError, as_disk_full

    try:
        return asyncio.run(_dispatch(args))
    except BrokenPipeError:  # `tripane show … | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_DONE
    except (StoreError, OSError) as exc:
        if full := as_disk_full(exc, args.data_dir):  # not the command's fault: run it again with room
            print(f"tripane: {full}", file=sys.stderr)
            return EXIT_FAILED
        if isinstance(exc, OSError):
            raise
        print(f"tripane: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"tripane: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_FAILED


def _open_window(args: argparse.Namespace) -> int:
    # The one place core reaches up into gui/: the console entry point. Imported by name so that
    # importing core (tests, the headless CLI) never loads Qt.
    import importlib

    from core.doctor import no_display

    if no_display() and not getattr(args, "selftest", False):
        print("tripane: there is no display here (DISPLAY and WAYLAND_DISPLAY are not set), so the window cannot "
              "open. Run it from a desktop session; `tripane --help` lists the command-line commands, and "
              "`QT_QPA_PLATFORM=offscreen tripane --selftest` checks the app without a display.", file=sys.stderr)
        return EXIT_USAGE
    argv = ["--selftest"] if getattr(args, "selftest", False) else []
    if args.data_dir:
        argv += ["--data-dir", str(args.data_dir)]
    if getattr(args, "settings", None):
        argv += ["--settings", str(args.settings)]
    return importlib.import_module("gui.app").main(argv)


async def _dispatch(args: argparse.Namespace) -> int:
    from core.paths import DB_NAME
    from core.store import Store
    from core.user_settings import saved_data_dir

    data_dir = (args.data_dir or saved_data_dir()).expanduser()
    if args.command == "doctor":
        return await _doctor(data_dir, args)
    if args.command == "memory":
        from core.memory.cli import memory_command

        return await memory_command(data_dir, args)
    if args.command == "servers":
        from core.tool_servers.cli import servers_command

        try:
            return await servers_command(args)
        finally:
            await _end_tool_servers()
    store = Store(data_dir / DB_NAME)
    try:
        if args.command in ("sessions", "list"):
            return _list_sessions(store, data_dir, args.search)
        if args.command == "show":
            return _show(store, data_dir, args)
        if args.command == "history":
            return _history(store, args)
        if args.command == "changes":
            return _changes(store, data_dir, args)
        if args.command == "spending":
            return _spending(store, data_dir, args)
        if args.command == "import":
            return _import(store, data_dir, args.file)
        if args.command == "delete":
            return _delete(store, data_dir, args.sessions, args.yes)
        if args.command == "go-back":
            return _go_back(store, data_dir, args)
        if args.command == "export":
            from core.export import export_session

            row = _chosen_session(store, args.session)
            print(export_session(store, data_dir, row.id, args.out or Path(f"tripane-{row.id}.zip")))
            return EXIT_DONE
        if args.command == "run":  # before long-term memory loads: a missing model is said at once
            args.run_settings = _run_settings(args)
            _hold_key_from_environment(args, args.run_settings["model"], args.run_settings["api_base"])
        return await _run(store, data_dir, args)
    finally:
        await _end_tool_servers()
        store.close()


async def _end_tool_servers() -> None:
    """The tool servers a run started end with it (none was, unless a run's session has some)."""
    pool = sys.modules.get("core.tool_servers.pool")
    if pool is not None:
        await pool.POOL.close_all()


def _servers_chosen(args) -> tuple[str, ...] | None:
    """The tool servers `run` gives the agent: --servers names them (each must be one of the
    person's), --no-servers none; None: those on."""
    if args.no_servers:
        return ()
    if not args.servers:
        return None
    from core.tool_servers.config import read_servers

    names = tuple(dict.fromkeys(name.strip() for name in args.servers.split(",") if name.strip()))
    known = {server.name for server in read_servers()}
    if unknown := [name for name in names if name not in known]:
        raise ValueError(f"no tool server named {', '.join(unknown)} (`tripane servers` lists them: "
                         f"{', '.join(sorted(known)) or 'none yet'})")
    return names


def _model_client():
    from core.llm import LiteLLMClient
    from core.secrets import get_api_key

    return LiteLLMClient(api_key=get_api_key)


async def _doctor(data_dir: Path, args) -> int:
    from core.doctor import report, run_checks
    from core.user_settings import SHARED, read_settings

    if args.set_aside_damaged:
        from core.paths import DB_NAME
        from core.salvage import set_aside_if_damaged

        print(set_aside_if_damaged(data_dir / DB_NAME) + ".\n")
    model, api_base = args.model, args.api_base
    saved = {**SHARED, **read_settings()}
    if not model:  # the model chosen in the window's Settings, with its server
        model, api_base = saved["model"] or None, api_base or saved["api_base"] or None
    _hold_key_from_environment(args, model, api_base)
    checks = await run_checks(data_dir, model, api_base, copies_mb=int(saved["copies_mb"]))
    print(report(checks))
    return EXIT_FAILED if any(check.level == "fail" for check in checks) else EXIT_DONE


def _chosen_session(store, prefix: str | None):
    """The session a command names, or the newest one when it names none (the one just run)."""
    from core.store import StoreError

    if prefix:
        return store.find_session(prefix)
    newest = store.sessions()[:1]
    if not newest:
        raise StoreError("there are no sessions yet")
    return newest[0]


def _list_sessions(store, data_dir: Path, search: str = "") -> int:
    from core.events import shown_status
    from core.run_lock import live_status
    from core.store import rows_matching

    rows = live_status(data_dir, store.sessions())
    if not rows:
        print("No sessions yet. Start one with: tripane run \"TASK\" (the model chosen in the window's Settings, or "
              "--model MODEL)")
    mentioning = store.sessions_mentioning(search.strip()) if search.strip() else set()
    for row in rows_matching(rows, search, mentioning):
        said = "  (said in its conversation)" if row.id in mentioning else ""
        print(f"{row.id}  {shown_status(row.status):<14} {row.model:<28} {row.title}{said}")
    return EXIT_DONE


def _delete(store, data_dir: Path, prefixes: list[str], confirmed: bool) -> int:
    """Each session named, after the person confirms (at a terminal) or said --yes; one another
    Tripane runs is kept and said."""
    from core.events import shown_status
    from core.run_lock import live_status
    from core.session import SessionBusy, delete_session

    rows = live_status(data_dir, list({row.id: row for row in map(store.find_session, prefixes)}.values()))
    for row in rows:
        print(f"{row.id}  {shown_status(row.status):<14} {row.title}")
    if not confirmed:
        if not sys.stdin.isatty():
            print("tripane: deleting cannot be undone: run it at a terminal to be asked, or add --yes", file=sys.stderr)
            return EXIT_USAGE
        try:
            answer = input(f"Delete {'this session' if len(rows) == 1 else f'these {len(rows)} sessions'}? "
                           "This cannot be undone. [y/N] ")
        except EOFError:  # Ctrl+D
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing deleted.")
            return EXIT_DONE
    kept = 0
    for row in rows:
        try:
            delete_session(store, data_dir, row.id)
        except SessionBusy as busy:
            kept += 1
            print(f"Kept {row.id}: {busy}", file=sys.stderr)
        else:
            print(f"Deleted {row.id}")
    return EXIT_FAILED if kept else EXIT_DONE


def _import(store, data_dir: Path, source: Path) -> int:
    from core.agent.state import SessionState
    from core.events import shown_status
    from core.export import ImportRefused, import_session
    from core.paths import missing_work_folder

    try:
        session_id = import_session(store, data_dir, source.expanduser())
    except ImportRefused as refused:
        print(refused, file=sys.stderr)
        return EXIT_USAGE
    from core.run_lock import live_status

    [row] = live_status(data_dir, [store.session(session_id)])  # one recorded as running runs nowhere here
    print(f"Imported {session_id}: {row.title} ({shown_status(row.status)}). Read it in the window, or with: tripane show {session_id}")
    state = SessionState(session_id)
    for record in store.iter_records(session_id):
        state.apply(record)
    if missing_work_folder(state.workdir):
        print(f"Its work folder, {state.workdir}, is not on this computer: to go on with it, give it one with "
              f"tripane resume {session_id} --workdir FOLDER (or Session → Move work folder… in the window).")
    return EXIT_DONE


def _spending(store, data_dir: Path, args) -> int:
    from core.spending import as_json, report, since_days, spending

    if args.days < 0:
        print("--days takes 0 (the whole log) or a number of days", file=sys.stderr)
        return EXIT_USAGE
    spent = spending(store, since_days(args.days), data_dir / "memory")
    print(json.dumps(as_json(spent), ensure_ascii=False) if args.json else report(spent))
    return EXIT_DONE


def _show(store, data_dir: Path, args) -> int:
    from core.changes import changes_line
    from core.events import SessionEnded
    from core.export import record_json
    from core.paths import session_dir
    from core.render import render
    from core.run_lock import run_by_nobody

    row = _chosen_session(store, args.session)
    if (args.markdown or args.summary) and args.follow:
        raise ValueError("--follow prints events as they come; a transcript or a summary is of a whole session")
    if args.markdown:
        from core.transcript import transcript

        print(transcript(store.records(row.id), row.title), end="")
        return EXIT_DONE
    if args.summary:
        from core.summary import summarize, summary_rows

        print(f"{row.title} ({row.id})")
        for what, value in summary_rows(summarize(store.iter_records(row.id))):
            print(f"  {what + ':':<28}{value}")
        return EXIT_DONE

    def printed(records) -> tuple[int, bool]:
        """Print the records; the last one's number, and whether one ended the run."""
        last, ended = 0, False
        for record in records:
            if args.json:
                print(record_json(record))
            elif (line := render(record)) is not None:
                print(line)
            last, ended = record.seq, isinstance(record.event, SessionEnded)
        return last, ended

    last, ended = printed(store.iter_records(row.id))
    if args.follow and not ended:
        sys.stdout.flush()  # what came before, at once: the reader may be another program
        print(f"Following {row.id} as it runs (Ctrl+C to stop)…", file=sys.stderr)
        try:
            while not ended:
                time.sleep(FOLLOW_INTERVAL_S)
                new_last, ended = printed(store.iter_records(row.id, after_seq=last))
                last = new_last or last
                sys.stdout.flush()
        except KeyboardInterrupt:
            return EXIT_DONE
    if not args.json:
        if not ended and row.status == "running" and run_by_nobody(data_dir, row.id):
            print("\n".join(_left_unfinished(store.records(row.id), session_dir(data_dir, row.id), row.id)))
        elif kept := _left_running_lines(store.records(row.id), session_dir(data_dir, row.id)):
            print("\n".join(kept))  # (a dev server kept for the person as the task ended)
        if changed := changes_line(store.iter_records(row.id)):
            print(changed)
        folder = session_dir(data_dir, row.id)
        print(f"\nFiles: {folder / 'task_plan.md'}\n       {folder / 'findings.md'}\n       {folder / 'progress.md'}")
    return EXIT_DONE


def _left_unfinished(records, folder: Path, session_id: str) -> list[str]:
    """A session Tripane stopped mid-run, as the window shows it: its calls left unfinished, with
    whether each one's command still runs and the end of what it had printed (see running_calls)."""
    from core.agent.running_calls import (
        kept_output,
        still_running,
    )
    from core.agent.state import SessionState

    state = SessionState(session_id)
    for record in records:
        state.apply(record)
    lines = []
    for call_id, name in state.pending_calls.items():
        group = still_running(folder, call_id)
        runs = f"; its command still runs without Tripane, as process group {group} (kill -- -{group})" if group else ""
        lines.append(f"  … {name} unfinished: the run stopped{runs}")
        if printed := kept_output(folder, call_id).strip("\n"):
            lines += [f"{LiveEcho.MARGIN}{line}" for line in printed.splitlines()[-SHOWN_UNFINISHED_LINES:]]
    lines += _left_running_lines(records, folder, "without Tripane", "; resuming or ending the session stops it")
    return [*lines, f"○ interrupted mid-run: tripane resume {session_id} goes on from here"]


def _left_running_lines(records, folder: Path, how: str = "", then: str = "") -> list[str]:
    """What commands left running after their run that still runs: a dev server kept for the person
    as the task ended, or one a killed run's end never stopped (`how`, `then`: said of those)."""
    from core.agent.running_calls import left_running_by_call
    from core.events import AssistantMessage
    from core.text import one_line

    lines = []
    if left := left_running_by_call(folder):
        calls = {call.id: call for record in records if isinstance(record.event, AssistantMessage)
                 for call in record.event.tool_calls}
        for call_id, group in left.items():
            command = calls[call_id].command_line() if call_id in calls else ""
            what = f"`{one_line(command, 60)}`" if command else "a command"
            lines.append(f"  ⚠ what {what} left running still runs{' ' + how if how else ''}, as process group "
                         f"{group} (kill -- -{group}){then}")
    return lines


SHOWN_UNFINISHED_LINES = 10  # of what an unfinished call had printed, in `tripane show`


def _history(store, args) -> int:
    from core.memory.history import Unrebuildable, file_versions, text_at

    row = _chosen_session(store, args.session)
    name = HISTORY_FILES[args.file]
    versions = file_versions(store, row.id, name)
    if args.version is None:
        if args.diff:
            raise ValueError("--diff goes with --version N: the version whose changes to print")
        print(f"{name} of {row.id} ({row.title}): {len(versions)} version{'s' if len(versions) != 1 else ''}")
        for version in versions:
            counted = "created" if version.version == 1 else f"+{version.added} -{version.removed}"
            print(f"  v{version.version:<5} {local_time(version.ts)}  {version.who:<16} {counted}")
        print(f"The whole text of one: tripane history {row.id} --file {args.file} --version N")
        return EXIT_DONE
    chosen = next((version for version in versions if version.version == args.version), None)
    if chosen is None:
        raise ValueError(f"{name} of {row.id} has no version {args.version} (it has v1 to v{versions[-1].version})")
    if args.diff:
        print(chosen.diff, end="")
        return EXIT_DONE
    try:
        print(text_at(versions, args.version), end="")
    except Unrebuildable as exc:
        print(f"tripane: {exc}. What it changed: --diff", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_DONE


def _go_back(store, data_dir: Path, args) -> int:
    from core.branch import go_back, going_back, step_seq
    from core.render import branched_note
    from core.scripted import ScriptedModel
    from core.session import Session

    row = _chosen_session(store, args.session)
    plan = going_back(store, data_dir, row.id, step_seq(store.records(row.id), args.step))
    if args.dry_run:
        print(f"Going back to before step {args.step} of {row.id} would put back: {', '.join(plan.as_then) or 'nothing'}"
              + (f"; remove (made after it): {', '.join(plan.removed)}" if plan.removed else ""))
        for path, why in sorted(plan.not_put_back.items()):
            print(f"  not put back: {path} ({why})")
        return EXIT_DONE
    new_id = go_back(store, data_dir, plan, put_back=not args.leave_files)
    # The way left, waiting for an answer or paused (nothing runs it: go_back made sure), is ended
    # where it is, as the window's going back ends it: an answer to its question would run it again.
    left = Session.open(store, data_dir, row.id, ScriptedModel([]))
    if left.stop_unrun():
        print(f"  ■ {row.id}, which waited for you, is ended where it was (as Stop ends it)")
    print(f"  ↶ {branched_note(store.records(new_id)[-1].event)}")
    print(f"New session {new_id} waits for your word: tripane resume {new_id} --message \"what to do instead\"")
    return EXIT_DONE


def _changes(store, data_dir: Path, args) -> int:
    from core.render import put_back_note
    from core.scripted import ScriptedModel
    from core.session import Session
    from core.work_changes import chosen_paths, counted_changes

    # Opened for its state (the work folder may have moved) and its log; nothing runs, so no
    # model is asked anything.
    if args.output and not args.patch:
        raise ValueError("--output goes with --patch: it is where the patch is written")
    if args.patch and args.put_back is not None:
        raise ValueError("--patch prints the changes and --put-back undoes them: ask for one at a time")
    session = Session.open(store, data_dir, _chosen_session(store, args.session).id, ScriptedModel([]))
    if args.put_back is not None:
        if not (paths := [*args.put_back, *args.paths]):
            raise ValueError("--put-back needs the files to put back, as `tripane changes SESSION` lists them")
        event = session.put_back(chosen_paths(paths, session.changed_files()), args.why)
        print(f"  ↶ {put_back_note(event)}")
        return EXIT_DONE
    listed = session.changed_files()
    if args.patch:
        return _changes_patch(session, listed, args)
    if not args.paths:
        print(f"{session.id}: {counted_changes(listed)}. {session.changes_not_listed().text()}")
        for change in listed:
            print(f"  {change.path}  ·  {change.what()}")
        if listed:
            print(f"What one did: tripane changes {session.id} PATH; as before the session: --put-back PATH… "
                  "(a folder: the files changed in it); all the agent did, as one patch: --patch")
        return EXIT_DONE
    by_path = {change.path: change for change in listed}
    for path in args.paths:
        change = by_path.get(path)
        if change is None:
            raise ValueError(f"{path} was not changed by the agent in session {session.id}")
        print(f"--- {path} (before the {'first command' if change.by_command else 'session'})\n"
              f"+++ {path} (now: {change.what()})")
        print("\n".join(session.changed_file_diff(change)))
    return EXIT_DONE


def _changes_patch(session, listed: list, args) -> int:
    """`tripane changes --patch`: the agent's changes (those of the PATHS given; a file changed not
    by the agent only when named) as one patch, on stdout or in --output."""
    from core.paths import named_files
    from core.work_changes import chosen_paths

    if args.paths:
        wanted = set(chosen_paths(args.paths, listed))
        if unknown := wanted - {change.path for change in listed}:
            raise ValueError(f"{sorted(unknown)[0]} was not changed by the agent in session {session.id}")
        chosen = [change for change in listed if change.path in wanted]
    else:
        chosen = [change for change in listed if not change.outside]
        if outside := [change.path for change in listed if change.outside and change.now != "as before"]:
            print(f"tripane: not in the patch, changed not by the agent: {named_files(outside, 5)} (name them to put "
                  "them in)", file=sys.stderr)
    patch = session.changes_patch(chosen)
    if args.output:
        Path(args.output).write_bytes(patch)
        print(f"The patch is in {Path(args.output).resolve()}.", file=sys.stderr)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(patch)  # (its bytes as they are: a file's CRLF, another encoding)
        sys.stdout.buffer.flush()
    return EXIT_DONE


async def _run(store, data_dir: Path, args) -> int:
    from core.logs import CLI_LOG_NAME, start_logging, stop_logging

    start_logging(data_dir, CLI_LOG_NAME)
    try:
        return await _run_with_memory(store, data_dir, args)
    finally:
        stop_logging()


async def _run_with_memory(store, data_dir: Path, args) -> int:
    long_memory = None
    if not getattr(args, "no_memory", False):
        from core.memory.longterm import LongTermMemory
        from core.secrets import get_api_key

        long_memory = await asyncio.to_thread(LongTermMemory.open, data_dir, api_key=get_api_key)
        notice = long_memory.status().notice
        if notice:
            print(f"tripane: memory: {notice}", file=sys.stderr)
    try:
        return await _run_session(store, data_dir, args, long_memory)
    finally:
        if long_memory is not None:
            long_memory.close()


EFFORT_CHOICES = ("low", "medium", "high", "default")


def _effort(choice: str | None) -> str | None:
    """A --reasoning-effort as a session takes it: "default" is the model's own (""); None: not given."""
    return None if choice is None else "" if choice == "default" else choice


def _run_settings(args) -> dict:
    """`tripane run`'s model and limits: what the command line says, else what was chosen in the
    window's Settings. The server, context window, summary and helpers' models go with the saved model
    only: another --model is not sent to the saved model's server."""
    from core.user_settings import SHARED, read_settings

    saved = {**SHARED, **read_settings()}
    if args.model:
        model = {"model": args.model, "api_base": args.api_base, "context_window": args.context_window,
                 "summary_model": args.summary_model, "helper_model": args.helper_model}
    elif saved["model"]:
        model = {"model": saved["model"], "api_base": args.api_base or saved["api_base"] or None,
                 "context_window": args.context_window or saved["context_window"] or None,
                 "summary_model": args.summary_model or saved["summary_model"] or None,
                 "helper_model": args.helper_model or saved["helper_model"] or None}
    else:
        raise ValueError("no model: pass --model (a litellm model string, e.g. openai/gpt-5.4-mini), or choose one "
                         "in the window's Settings, which `tripane run` then uses too")

    def given(value, name: str):
        return value if value is not None else saved[name]

    # How hard a model thinks is not one model's setting: it goes with any.
    return {**model, "reasoning_effort": given(_effort(args.reasoning_effort), "reasoning_effort"),
            "max_turns": given(args.max_turns, "max_turns"), "approval": given(args.approve, "approval"),
            "budget_tokens": given(args.budget_tokens, "budget_tokens"),
            "budget_usd": given(args.budget_usd, "budget_usd"), "warn_turn": saved["warn_turn"],
            "danger_turn": saved["danger_turn"], "strike_limit": saved["strike_limit"],
            "diagnose_errors": bool(saved["diagnose_errors"]) and not args.no_diagnosis,
            "copy_work_folder": bool(saved["copy_work_folder"]) and not args.no_work_copy,
            "answer_wait_min": given(args.answer_wait, "answer_wait_min")}


async def _run_session(store, data_dir: Path, args, long_memory) -> int:
    from core.session import Session, SessionConfig

    if args.command in ("reflect", "ask"):  # (their models at the session's server share its key)
        session = Session.open(store, data_dir, _chosen_session(store, args.session).id, _model_client(),
                               long_memory=long_memory)
        _hold_key_from_environment(args, session.state.model, session.state.api_base)
        if args.command == "reflect":
            return await _reflect(session, args.json)
        return await _ask(session, args.question, args.json)
    from core.agent.loop import LoopSettings

    # On a terminal, a task done with a server it started running keeps it for the person (see
    # _hold_what_runs_on); with nobody there, it is stopped as the run ends.
    at_terminal = sys.stdin.isatty() and not args.json
    settings = LoopSettings(keeps_left_running=at_terminal)
    if args.command == "run":
        given = _given_with_task(args.give or [])
        config = SessionConfig(task=args.task + "".join(f"\n{said}" for _, _, said in given), workdir=args.workdir,
                               **args.run_settings, project_instructions=not args.no_project_instructions,
                               pictures=_pictures_read(args.picture or []),
                               given=tuple((source, name) for source, name, _ in given),
                               tool_servers=_servers_chosen(args))
        session = Session.create(store, data_dir, config, _model_client(), long_memory=long_memory, settings=settings)
        _say_started(session)
    else:
        session = Session.open(store, data_dir, args.session, _model_client(), long_memory=long_memory,
                               settings=settings)
        if not args.model and (args.api_base or args.context_window):
            raise ValueError("--api-base and --context-window go with --model (the model they are for)")
        _hold_key_from_environment(args, *((args.model, args.api_base) if args.model else
                                           (session.state.model, session.state.api_base)))
        changed = None
        if args.model:
            changed = await session.change_model(args.model, args.api_base, args.context_window,
                                                 _effort(args.reasoning_effort))
        elif args.reasoning_effort:  # the same model, thinking harder or less
            state = session.state
            changed = await session.change_model(state.model, state.api_base, state.context_window,
                                                 _effort(args.reasoning_effort))
        if changed and not args.json:  # (with --json, stdout is events only, and this one came before the run)
            from core.render import model_change_note

            print(f"  ⇄ {model_change_note(changed)}", flush=True)
        if args.workdir is not None and (moved := session.move_workdir(args.workdir)) and not args.json:
            from core.render import workdir_note

            print(f"  ↦ {workdir_note(moved)}", flush=True)
        if args.answer is not None:
            question = session.state.runs_question
            if question is None:
                raise ValueError(f"session {session.id} has no open question to answer")
            from core.agent.options import option_typed

            await session.answer(question.qid, option_typed(args.answer, question) or args.answer, args.text)
        if args.message or args.picture or args.give:
            from core.given_files import mention

            given = [mention(file, session.keep_given(file)) for file in args.give or []]
            await session.send("\n".join(part for part in (args.message, *given) if part),
                               _pictures_kept(session, args.picture or []))
        # Ended on an error, its cause fixed (--model, a key, a server started): the failed step again.
        elif session.state.ended and not session.reopen_after_error():
            from core.events import ended_word

            print(f"Session {session.id} has ended ({ended_word(session.state.status)}). "
                  "Give it a new instruction with --message.")
            return EXIT_DONE
    await _point_out_deprecation(session)
    if args.picture and not await asyncio.to_thread(session.sees_pictures):
        from core.pictures import not_seen_note

        print(f"tripane: {not_seen_note(session.state.model)}", file=sys.stderr, flush=True)
    await asyncio.to_thread(_keep_copies_under_budget, store, data_dir, session.id)
    status = await _drive(session, args.json)
    if session.state.ended and status != EXIT_WAITING and (args.reflect or _reflects_after_tasks(session)):
        reflected = await _reflect(session, args.json)
        status = status if reflected == EXIT_DONE else reflected
    if session.state.ended and long_memory is not None and not args.json:  # --json: stdout is events only
        from core.memory.cli import review_finished_day

        await review_finished_day(long_memory)
    if at_terminal and status == EXIT_DONE:  # (after the reflection and the review: Ctrl+C means the end)
        await _hold_what_runs_on(session)
    return status


KEPT_POLL_S = 1.0  # how often a server held for the person is looked at, to end with it when it ends


async def _hold_what_runs_on(session) -> None:
    """A task done with what its commands left running still running (the dev server the person
    asked for, to try): tripane holds the terminal as the server itself would, until Ctrl+C, the
    terminal closing, or the server ending by itself; then it is stopped, and that recorded. Before,
    it was stopped as the run ended, and the person had to start it again by hand."""
    from core.tools.shell import LiveOutput, kept_in_background, listen_to_kept

    if not kept_in_background(session.id):
        return
    echo = LiveEcho(sys.stderr)  # what it prints from now on, as in a terminal of its own

    def shown(text: str) -> None:
        with contextlib.suppress(OSError):  # (a terminal gone: see below)
            echo.write(text)
    live = LiveOutput(shown)
    stop_listening = listen_to_kept(session.id, live.feed)
    loop = asyncio.get_running_loop()
    stopped_by: asyncio.Future[str] = loop.create_future()
    for signum, by in ((signal.SIGINT, "person"), (signal.SIGTERM, "quit"), (signal.SIGHUP, "quit")):
        loop.add_signal_handler(signum, lambda by=by: stopped_by.done() or stopped_by.set_result(by))
    by, stopped = "quit", []
    try:
        with contextlib.suppress(OSError):  # (once Ctrl+C does; a terminal closed already: stopped below)
            print("  Ctrl+C stops it and ends tripane.", flush=True)
        while not stopped_by.done() and await asyncio.to_thread(kept_in_background, session.id):
            await asyncio.wait([stopped_by], timeout=KEPT_POLL_S)
        if not stopped_by.done():
            with contextlib.suppress(OSError):
                echo.end_line()
                print("  It has ended by itself.", flush=True)
            return
        by = stopped_by.result()
    finally:
        stop_listening()
        live.close()
        # Whatever ends the wait, nothing is left running with nobody to stop it; stopped first (the
        # terminal may be gone), with the signals still taken (a second Ctrl+C does not cut it short).
        stopped = await session.stop_kept(by=by)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)
    from core.events import BackgroundStopped
    from core.render import render

    said = next((r for r in reversed(session.records) if isinstance(r.event, BackgroundStopped)), None)
    with contextlib.suppress(OSError):  # (a closed terminal: what stopped it is said in the log and progress.md)
        echo.end_line()
        print(flush=True)  # (after the ^C the terminal echoed)
        if stopped and said is not None:
            print(render(said), flush=True)


def _given_with_task(files: list[Path]) -> list[tuple[str, str, str]]:
    """The files named by --give: each one's path, the name its copy is kept under in the session,
    and the line the task names it in (as a file dropped on the window's task box is named)."""
    from core.given_files import hold_given, mention, named

    held: list[tuple[Path, str]] = []
    typed = {file.resolve(): file for file in reversed(files)}  # (the task names each as it was typed)
    for file in files:
        hold_given(held, file.resolve())  # (NotGiven, a ValueError: said before the session is made)
    return [(str(file), name, mention(typed[file], named(name))) for file, name in held]


def _pictures_read(files: list[Path]) -> tuple[tuple[bytes, str], ...]:
    """The pictures named by --picture: each one's bytes and suffix, checked as they will be kept."""
    from core.pictures import LARGEST_PICTURE_BYTES, PictureRefused, refusal

    read: list[tuple[bytes, str]] = []
    for file in files:
        if _is_pdf(file):  # (a scanned letter, a form: its pages, as the window draws them when one is dropped)
            read.extend((page, ".png") for page in _pdf_pages(file))
            continue
        try:
            data = file.read_bytes()
            if why := refusal(data, file.suffix):
                if len(data) > LARGEST_PICTURE_BYTES:  # (the command line has no image library to scale it)
                    why += (" (the window scales a picture down as it takes it: drop this one there, or make it at "
                            "most 1,568 pixels wide and high first)")
                raise PictureRefused(why)
        except (PictureRefused, OSError) as exc:
            raise ValueError(f"cannot show {file}: {(exc.strerror or exc) if isinstance(exc, OSError) else exc}") from None
        read.append((data, file.suffix))
    return tuple(read)


def _is_pdf(file: Path) -> bool:
    from core.documents import kind_of_file

    return file.is_file() and kind_of_file(file) == "pdf"


def _pdf_pages(file: Path) -> list[bytes]:
    """A PDF's pages given with --picture, drawn as pictures: at most DROPPED_SCAN_PAGES_MAX."""
    from core.documents import NoText
    from core.dropped_files import DROPPED_SCAN_PAGES_MAX
    from core.pdf_pages import NotDrawn, page_png
    from core.pdf_text import page_count

    try:
        pages = page_count(file, file.name)
        if pages > DROPPED_SCAN_PAGES_MAX:
            raise ValueError(f"cannot show {file}: a PDF of {pages:,} pages, more than go with a message as pictures "
                             f"({DROPPED_SCAN_PAGES_MAX}); put it in the work folder, where the agent reads it")
        return [page_png(file, page) for page in range(1, pages + 1)]
    except (NotDrawn, NoText) as why:
        raise ValueError(f"cannot show {file}: {why}") from None


def _pictures_kept(session, files: list[Path]) -> tuple[str, ...]:
    """The pictures named by --picture, kept in the session folder to go with the message."""
    return tuple(session.keep_picture(data, suffix) for data, suffix in _pictures_read(files))


def _say_started(session) -> None:
    """Its id at once (to follow it elsewhere: tripane show ID -f), and where it works: the
    current folder by default, which may be the home folder."""
    from core.alongside import alongside_note, served_note
    from core.paths import HOME_FOLDER_NOTE, is_home_folder

    workdir = Path(session.state.workdir)
    print(f"Session {session.id}, working in {workdir}", file=sys.stderr, flush=True)
    # Where to steer it from: the plan edited there, in any editor, reaches the agent at its next step.
    print(f"Its plan, findings and progress: {session.dir} (edit task_plan.md there to steer it)",
          file=sys.stderr, flush=True)
    if is_home_folder(workdir):
        print(f"tripane: that is {HOME_FOLDER_NOTE} (--workdir names a project's folder)", file=sys.stderr, flush=True)
    if alongside := session.state.config.alongside:
        print(f"tripane: {alongside_note(alongside, started=True)}", file=sys.stderr, flush=True)
    if served := session.state.config.served:
        print(f"tripane: {served_note(served, started=True)}", file=sys.stderr, flush=True)


async def _point_out_deprecation(session) -> None:
    """A model its provider deprecates soon, or has, is said before the run (its requests will fail)."""
    from core.model_names import deprecation_near, deprecation_words

    state = session.state
    day = await asyncio.to_thread(deprecation_near, state.model, state.api_base)
    if day:
        print(f"tripane: {state.model}: {deprecation_words(day)}. Another model: tripane resume {session.id} "
              "--model …", file=sys.stderr, flush=True)


def _keep_copies_under_budget(store, data_dir: Path, running: str) -> None:
    """As the window does as a session starts: the oldest sessions' copies of their work folders
    removed while all take more than Settings allows (core/copies.py)."""
    from core.copies import keep_under_budget
    from core.run_lock import live_status
    from core.user_settings import SHARED, read_settings

    budget = read_settings().get("copies_mb", SHARED["copies_mb"])
    keep_under_budget(data_dir, live_status(data_dir, store.sessions()), int(budget), in_use={running})


def _reflects_after_tasks(session) -> bool:
    """Whether Settings says to reflect on each task as it ends, and this one is reflected on so
    (not after Ctrl+C): the command line does as the window."""
    from core.memory.reflection import reflected_on_by_itself
    from core.user_settings import read_settings

    return bool(read_settings().get("reflect_after_tasks")) and reflected_on_by_itself(session.records)


async def _ask(session, question: str, as_json: bool) -> int:
    """The person's question, answered by a research helper: its reads on stderr, its answer on stdout."""
    from core.agent.state import asked_aside
    from core.events import HumanQuestion, Record, ResearchStep
    from core.export import record_json
    from core.llm import ModelError
    from core.render import aside_note
    from core.session import CannotRun

    def read(line: str) -> None:
        print(f"  ⌕ {line.rstrip()}", file=sys.stderr, flush=True)

    interactive = sys.stdin.isatty() and not as_json
    answering: set[asyncio.Task] = set()

    def asks(notice) -> None:
        """The helper asks to fetch a page: asked here (on stderr: stdout is the answer), or, with
        nobody to ask, withdrawn."""
        if isinstance(notice, Record) and isinstance(notice.event, HumanQuestion) and asked_aside(notice.event):
            task = asyncio.ensure_future(_answer_aside(session, notice, interactive))
            answering.add(task)
            task.add_done_callback(answering.discard)

    unsubscribe = session.subscribe(asks)
    try:
        asked, report = await session.ask_helper(question, on_read=None if as_json else read)
    except (CannotRun, ValueError) as exc:
        print(f"tripane: ask: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except ModelError as exc:
        print(f"tripane: ask: the helper's model call failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        unsubscribe()
    steps = [r for r in session.records if isinstance(r.event, ResearchStep) and r.event.call_id == asked]
    if as_json:
        for record in steps:
            print(record_json(record), flush=True)
        return EXIT_DONE
    print(report.text or "(The helper ended without an answer.)")
    print(f"\n{aside_note(steps[-1].event, question)}", file=sys.stderr)
    return EXIT_DONE


async def _answer_aside(session, record, interactive: bool) -> None:
    from core.render import render

    question = record.event
    if not interactive:
        await session.withdraw(question.qid, NOBODY_TO_ASK)
        return
    print(render(record), file=sys.stderr, flush=True)
    try:
        choice, text = await _ask_on_terminal(question, sys.stderr)
    except EOFError:  # Ctrl+D: the helper goes on without the page
        await session.withdraw(question.qid, "the input ended without an answer")
        return
    await session.answer(question.qid, choice, text)


async def _reflect(session, as_json: bool) -> int:
    """Reflect on the session's work since its last reflection, and say what came of it."""
    from core.export import record_json
    from core.memory.reflection import describe
    from core.render import reflection_note
    from core.session import CannotRun

    if not as_json:
        print(f"Reflecting on session {session.id}…", file=sys.stderr, flush=True)
    try:
        event, report, promotions = await session.reflect()
    except CannotRun as exc:
        print(f"tripane: reflect: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if as_json:
        print(record_json(session.records[-1]), flush=True)
        return EXIT_DONE
    print(f"✦ {reflection_note(event)}")
    if report is not None:
        print(f"\n{describe(report)}\n")
    print_promotions(promotions)
    return EXIT_DONE


def print_promotions(promotions) -> None:
    """The lessons a reflection's (or a review's) strategies became, or why one could not."""
    from core.memory.strategies import suggested_in

    for promotion in promotions:
        sessions = len(promotion.candidate.sessions)
        if promotion.lesson is None:
            print(f"Not made a lesson ({suggested_in(sessions)}): {promotion.why}")
            continue
        print(f"New lesson {promotion.lesson.id} in MEMORY.md, {suggested_in(sessions)}: "
              f"“{promotion.lesson.text}”")
        for other in promotion.contradicts:
            print(f"  It may contradict {other.id} “{other.text}”: confirm in MEMORY.md (tripane memory doctor).")


class LiveEcho:
    """A running command's output, written as it comes, each line indented under the call."""

    MARGIN = "  │ "

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.mid_line = False

    def write(self, text: str) -> None:
        pieces = []
        for piece in text.splitlines(keepends=True):  # "\r" too: a progress bar redrawn keeps its margin
            pieces.append(piece if self.mid_line else self.MARGIN + piece)
            self.mid_line = not piece.endswith(("\n", "\r"))
        self.stream.write("".join(pieces))
        self.stream.flush()

    def end_line(self) -> None:
        """Something else is printed: it starts on a line of its own."""
        if self.mid_line:
            self.stream.write("\n")
            self.mid_line = False


async def _drive(session, as_json: bool) -> int:
    from core.events import HumanAnswer, HumanQuestion, Record
    from core.export import record_json
    from core.journal import CallWriting, StatusChanged, TextDelta, ToolOutput
    from core.render import TIMED_ACTIVITIES, render
    from core.reply_line import ReplyLine

    interactive = sys.stdin.isatty() and not as_json
    waiting: asyncio.Queue[HumanQuestion] = asyncio.Queue()
    answered: dict[str, asyncio.Future[None]] = {}  # by qid: set when an answer is recorded, from anywhere
    # On a terminal, what a command prints shows as it comes (on stderr: stdout stays the events).
    echo = LiveEcho(sys.stderr) if sys.stderr.isatty() and not as_json else None
    waiting_line = ReplyLine(sys.stderr) if echo is not None else None  # while the model is asked

    def show(notice) -> None:
        if waiting_line is not None:
            if isinstance(notice, (TextDelta, CallWriting)):
                waiting_line.streamed(notice)
                return
            waiting_line.stop()
            if isinstance(notice, StatusChanged) and notice.activity in TIMED_ACTIVITIES:
                waiting_line.began(notice.activity)
                return
        if isinstance(notice, ToolOutput):
            if echo is not None:
                echo.write(notice.text)
            return
        if echo is not None:
            echo.end_line()
        if isinstance(notice, StatusChanged) and notice.activity == "retrying":
            print(f"tripane: {notice.detail}", file=sys.stderr, flush=True)  # stdout stays the events
        if not isinstance(notice, Record):
            return
        if as_json:
            print(record_json(notice), flush=True)
        elif (line := render(notice)) is not None:
            print(line, flush=True)
        if isinstance(notice.event, HumanQuestion):
            waiting.put_nowait(notice.event)
        if isinstance(notice.event, HumanAnswer) and not (done := answered.setdefault(
                notice.event.qid, asyncio.get_running_loop().create_future())).done():
            done.set_result(None)

    unsubscribe = session.subscribe(show)
    try:
        return await _drive_run(session, as_json, waiting, interactive, answered)
    finally:  # what is recorded after the run (a reflection) is printed by whoever records it
        unsubscribe()
        if waiting_line is not None:
            waiting_line.stop()


async def _drive_run(session, as_json: bool, waiting: asyncio.Queue, interactive: bool,
                     answered: dict[str, asyncio.Future[None]]) -> int:
    from core.agent.state import asked_by_helper
    from core.changes import changes_line
    from core.events import HumanQuestion
    from core.render import render
    from core.store import DiskFull

    if session.state.open_question is not None and not as_json:
        print(render(next(r for r in reversed(session.records) if isinstance(r.event, HumanQuestion))))
        waiting.put_nowait(session.state.open_question)
    loop = asyncio.get_running_loop()
    if sys.platform != "win32":
        loop.add_signal_handler(signal.SIGINT, session.stop)
        loop.add_signal_handler(signal.SIGTERM, session.stop)
    task = session.start()
    while not task.done():
        asker = asyncio.ensure_future(waiting.get())
        await asyncio.wait([task, asker], return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            asker.cancel()
            break
        question = asker.result()
        if question.qid in session.state.answers:
            continue
        minutes = _waits_for_fallback(session, question)
        if not interactive and asked_by_helper(question):  # leaving would end the helper with the process
            await session.withdraw(question.qid, NOBODY_TO_ASK)
            continue
        if not interactive:
            if not minutes:
                return await _leave_waiting(session)
            print(f"tripane: nobody can answer here; the agent goes on with its fallback in {minutes} min",
                  file=sys.stderr, flush=True)
            continue
        if minutes:
            print(f"  (no answer within {minutes} min: the agent goes on with its fallback — "
                  f"{question.context['fallback']})", flush=True)
        elsewhere = answered.setdefault(question.qid, loop.create_future())
        asker = asyncio.ensure_future(_ask_on_terminal(question, session=session))
        await asyncio.wait([task, asker, elsewhere], return_when=asyncio.FIRST_COMPLETED)
        if not asker.done():  # Ctrl+C at the prompt stopped the run, or the wait ran out
            asker.cancel()
            print(flush=True)
            if elsewhere.done() and not task.done():
                continue
            break
        try:
            choice, text = asker.result()
        except EOFError:  # Ctrl+D, or the input ended: the question stays open for later
            print(flush=True)
            return await _leave_waiting(session)
        await session.answer(question.qid, choice, text)
    try:
        status = task.result()
    except DiskFull as full:  # the run stopped where the disk filled; what was saved stays
        print(f"tripane: {full.what}\nFree some space, then go on with `tripane resume {session.id}`.",
              file=sys.stderr)
        return EXIT_FAILED
    if not as_json and session.state.ended and (changed := changes_line(session.records)):
        print(changed, flush=True)
        if _kept_any(session):
            print(f"  (what, file by file, or put them back: tripane changes {session.id})", flush=True)
    if status == "error" and not as_json:
        print(f"Once the cause is fixed, go on from where it stopped: tripane resume {session.id} "
              "(--model M for another model)", file=sys.stderr)
    return EXIT_DONE if status == "done" else EXIT_FAILED


# Why a research helper's question is withdrawn in a run that is not interactive.
NOBODY_TO_ASK = "nobody can answer here (the command reads no answers when its input is not a terminal, or with --json)"


def _kept_any(session) -> bool:
    """Whether the agent's file tools kept any file of the session's (an unreadable list, or a
    work folder gone: none to show)."""
    try:
        return bool(session.changed_files())
    except ValueError:  # OriginalsUnreadable, WorkFolderMissing
        return False


def _waits_for_fallback(session, question) -> int:
    """The minutes after which the agent goes on without an answer to this question; 0: never."""
    config = session.state.config
    has_fallback = question.reason == "ask_user" and str(question.context.get("fallback", "")).strip()
    return config.answer_wait_min if has_fallback and config is not None else 0


async def _leave_waiting(session) -> int:
    question = session.state.runs_question
    await session.close()
    print(f"Waiting for a person: answer with `tripane resume {session.id} --answer CHOICE [--text TEXT]`",
          file=sys.stderr)
    if question is not None and question.reason == "budget":  # how much more, else as much again
        print("  (the budget: --answer continue --text '$2 more', or '50000 more tokens'; without --text, as much "
              "again as the cap)", file=sys.stderr)
    return EXIT_WAITING


class _Prompt:
    """The line the terminal's reader thread gives next, and whether that thread is reading."""
    line: asyncio.Future[str] | None = None
    reading: asyncio.AbstractEventLoop | None = None  # the loop the reading thread answers to


def _read_line(prompt: str, out=None) -> asyncio.Future[str]:
    """A line typed at the terminal, read on a daemon thread: a prompt left waiting when the run
    stops (Ctrl+C) must not hold up the exit, as a thread of the loop's executor would until Enter.
    The thread reads the descriptor itself: blocked in input(), it would hold sys.stdin's lock, and
    Python aborts at exit on a lock a daemon thread holds. EOFError at Ctrl+D. One thread reads at
    a time: a prompt given up on (its question answered by the wait running out) leaves its thread
    reading, and the next prompt's line comes from it, not from a second thread racing it."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()
    _Prompt.line = line
    print(prompt, end="", flush=True, file=out or sys.stdout)  # (sys.stdout as it is now: tests replace it)
    if _Prompt.reading is loop:
        return line
    _Prompt.reading = loop

    def settle(outcome: str | BaseException) -> None:
        _Prompt.reading = None
        waiting = _Prompt.line
        if waiting is None or waiting.done():  # nobody asks any more: the line was typed for nothing
            return
        if isinstance(outcome, BaseException):
            waiting.set_exception(outcome)
        else:
            waiting.set_result(outcome)

    def read() -> None:
        typed = b""
        try:
            while not typed.endswith(b"\n"):
                chunk = os.read(sys.stdin.fileno(), 4096)
                if not chunk:
                    raise EOFError
                typed += chunk
            outcome: str | BaseException = typed.decode(sys.stdin.encoding or "utf-8", "replace").rstrip("\r\n")
        except (EOFError, OSError) as exc:
            outcome = exc
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:  # the loop is closed: nobody waits for this line any more
            pass

    threading.Thread(target=read, name="prompt", daemon=True).start()
    return line


async def _ask_on_terminal(question, out=None, session=None) -> tuple[str, str]:
    """The person's answer typed at the terminal, asked on `out` (stdout by default). 3-Strike's
    "edit_plan" waits for the person to edit the session's plan in their editor, which reaches the
    agent as their edit (a diff), as the window's editor does."""
    from core.agent.options import option_typed, options_typed
    from core.agent.state import more_budget_words
    from core.events import ToolCall

    out = out or sys.stdout
    typed = question.reason in ("three_strike", "danger_turn", "approval", "budget")
    for key, value in question.context.get("reboot", {}).items():
        if value:
            print(f"    {key}: {value}", file=out)
    if question.reason == "approval":
        arguments = ToolCall("", "", str(question.context.get("arguments", ""))).readable_arguments()
        print(f"    {question.context.get('tool')}: {arguments}", file=out)
    while True:
        answer = (await _read_line("  your choice: ", out)).strip()
        choice = option_typed(answer, question) or ("" if typed else answer)  # (the agent's: any answer)
        if choice:
            break
        print(f"  please answer one of: {options_typed(question)} (its name or its number)", file=out)
    if question.reason == "three_strike" and choice == "edit_plan" and session is not None:
        await _edit_plan_in_editor(session, out)
    more = ""
    if question.reason == "budget" and choice == "continue":
        again = more_budget_words(int(question.context.get("more_tokens") or 0),
                                  float(question.context.get("more_usd") or 0))
        more = (await _read_line(f"  how much more? (Enter: as much again, {again}): ", out)).strip() or again
    text = (await _read_line("  details (optional): ", out)).strip()
    return choice, ". ".join(part for part in (more, text) if part)


async def _edit_plan_in_editor(session, out) -> None:
    from core.memory.working import PLAN

    path = session.memory.path(PLAN)
    print(f"  Edit the plan in your editor and save it: {path}", file=out)
    await _read_line("  press Enter once it is saved: ", out)
    try:
        session.take_persons_edit(PLAN)
    except OSError as exc:
        print(f"  the plan could not be read ({exc.strerror or exc}): the agent goes on without your edit", file=out)


if __name__ == "__main__":
    sys.exit(main())
