"""The CLI as a person runs it: a real process, the real litellm path, a scripted server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from filelock import FileLock

from core.agent.research import READING_TOOLS
from core.events import UserMessage, encode
from core.paths import RUN_LOCK
from core.store import Store
from tests.support.local_site import send_page, serving
from tests.support.marks import needs_git
from tests.support.office import docx_bytes
from tests.support.openai_server import (
    Failure,
    Script,
    ScriptedServer,
    Turn,
    positional,
    tool,
)
from tests.support.pdfs import write_pdf

ROOT = Path(__file__).resolve().parents[2]


def tripane(*args: str, data_dir: Path, cwd: Path | None = None, env: dict[str, str] | None = None,
            **kwargs) -> subprocess.Popen:
    env = {**os.environ, "TRIPANE_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT), **(env or {})}
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen([sys.executable, "-m", "core.cli", *args], cwd=cwd or ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", **kwargs)


def work_folder(tmp_path: Path) -> Path:
    """A work folder beside the data folder's own (the data folder itself is refused)."""
    folder = tmp_path / "work"
    folder.mkdir(exist_ok=True)
    return folder


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_version_imports_neither_litellm_nor_qt():
    code = ("import sys\nfrom core.cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('litellm', 'PySide6', 'qasync')]\n"
            "assert not heavy, heavy\nprint('light')")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("light")


def test_bad_usage_and_bad_input_exit_2_with_a_message(tmp_path):
    code, _, err = finish(tripane("run", "task without model", data_dir=tmp_path))
    assert code == 2 and "--model" in err
    code, _, err = finish(tripane("run", "t", "--model", "m", "--workdir", str(tmp_path / "nope"), data_dir=tmp_path))
    assert code == 2 and "does not exist" in err
    code, _, err = finish(tripane("run", "t", "--model", "m", "--workdir", str(work_folder(tmp_path)), "--context-window", "512",
                                  data_dir=tmp_path))
    assert code == 2 and "give at least 4,096" in err and "Traceback" not in err
    code, _, err = finish(tripane("show", data_dir=tmp_path))
    assert code == 2 and "there are no sessions yet" in err and "Traceback" not in err
    (tmp_path / "tripane.db").write_text("not a database", encoding="utf-8")
    code, _, err = finish(tripane("sessions", data_dir=tmp_path))
    assert code == 2 and "not an SQLite database" in err and "Traceback" not in err
    assert (tmp_path / "tripane.db").read_text(encoding="utf-8") == "not a database"


def test_a_question_without_a_terminal_exits_3_and_resume_answers_it(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = license_script()
    with ScriptedServer(script) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url)
        code, out, err = finish(tripane("run", "Add a license", *args, "--workdir", str(work), data_dir=tmp_path))
        assert code == 3, err
        assert "Which license?" in out and "[1. MIT / 2. GPL]" in out
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        assert err.startswith(f"Session {session_id}, working in {work.resolve()}\n"  # its id at once
                              f"Its plan, findings and progress: {tmp_path / 'sessions' / session_id} (edit "
                              "task_plan.md there to steer it)\n")
        assert "your home folder" not in err

        # While another Tripane (here, this process) runs the session, resume refuses to touch it.
        window = FileLock(str(tmp_path / "sessions" / session_id / RUN_LOCK))
        with window:
            code, _, err = finish(tripane("resume", session_id, "--answer", "MIT", data_dir=tmp_path))
        assert code == 2 and "is being run by another Tripane" in err and "Traceback" not in err

        code, out, err = finish(tripane("resume", session_id[:15], "--answer", "1", "--text", "the usual",
                                        data_dir=tmp_path))  # (by its number, as the question listed it)
        assert code == 0, err
        assert "Changed in the work folder: LICENSE (created)" in out  # told as the run ends
    assert (work / "LICENSE").read_text(encoding="utf-8") == "The person answered: MIT\nthe usual"
    code, out, _ = finish(tripane("show", session_id, data_dir=tmp_path))
    assert code == 0 and ": MIT — the usual\n" in out and "ended: done" in out
    assert "Changed in the work folder: LICENSE (created)" in out
    # Named by no id, show and export take the newest session: the one just run.
    code, newest, _ = finish(tripane("show", data_dir=tmp_path))
    assert code == 0 and newest == out
    code, out, err = finish(tripane("export", data_dir=tmp_path, cwd=tmp_path))
    assert code == 0 and (tmp_path / f"tripane-{session_id}.zip").is_file(), err
    code, out, _ = finish(tripane("list", data_dir=tmp_path))
    assert code == 0 and out.startswith(session_id)
    # --data-dir works after the command too, as the usage line puts it.
    code, out, _ = finish(tripane("sessions", "--data-dir", str(tmp_path), data_dir=tmp_path / "elsewhere"))
    assert code == 0 and session_id in out


def four_listings():
    """Four listings (110 tokens a request, as the server counts them), then done: a cap of 250
    tokens stops it after the third, at 330."""
    listing = Turn(tool_calls=(tool("file_list"),))
    return positional([listing] * 4 + [Turn(tool_calls=(tool("task_done", summary="listed"),))])


def test_a_budget_cap_without_a_terminal_says_how_to_grant_more_and_resume_grants_it(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer(four_listings()) as server:
        code, out, err = finish(tripane("run", "List it", "--model", "openai/scripted", "--api-base", server.url,
                                        "--workdir", str(work), "--budget-tokens", "250", "--no-memory",
                                        data_dir=tmp_path))
        assert code == 3 and "--answer continue --text '$2 more', or '50000 more tokens'" in err
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        code, out, err = finish(tripane("resume", session_id, "--answer", "continue", "--text", "120 more tokens",
                                        "--no-memory", data_dir=tmp_path))
    assert code == 0 and "listed" in out  # 330 used + 120: the fourth request (440) stays under the cap


@pytest.mark.parametrize("today, said", [("2099-01-01", True), ("2000-01-01", False)])
def test_a_run_on_a_model_its_provider_deprecates_says_so_first(tmp_path, monkeypatch, capsys, today, said):
    import core.model_names
    from core import cli
    from core.llm import load_litellm
    from core.scripted import ScriptedModel, call, reply

    monkeypatch.setattr(core.model_names, "today", lambda: today)
    monkeypatch.setattr(cli, "_model_client", lambda: ScriptedModel([reply("", call("task_done", summary="ok"))]))
    work = tmp_path / "work"
    work.mkdir()
    code = cli.main(["--data-dir", str(tmp_path), "run", "Say hello", "--model", "anthropic/claude-sonnet-4-5",
                     "--workdir", str(work), "--no-memory"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_DONE, err
    day = load_litellm().model_cost["claude-sonnet-4-5"]["deprecation_date"]
    session_id = Store(tmp_path / "tripane.db").sessions()[0].id
    assert (f"tripane: anthropic/claude-sonnet-4-5: Its provider deprecated this model on {day} (litellm's model "
            f"map) and retires it some time after: its requests may fail any day. Another model: tripane resume "
            f"{session_id} --model …" in err) is said


def test_resume_goes_on_with_another_model_when_the_sessions_is_gone(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    gone = positional([], default=Failure(404, "The model `gpt-4-32k` has been deprecated"))
    done = positional([Turn(tool_calls=(tool("task_done", summary="done on the other model"),))])
    with ScriptedServer(gone) as old, ScriptedServer(done) as new:
        code, out, err = finish(tripane("run", "Sum the numbers", "--model", "openai/gpt-4-32k", "--api-base",
                                        old.url, "--workdir", str(work), "--no-memory", data_dir=tmp_path))
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        assert code == 1 and "does not know this model" in out + err
        assert f"go on from where it stopped: tripane resume {session_id}" in err
        code, _, err = finish(tripane("resume", session_id, "--api-base", new.url, data_dir=tmp_path))
        assert code == 2 and "go with --model" in err and "Traceback" not in err
        code, out, err = finish(tripane("resume", session_id, "--model", "openai/served-model", "--api-base",
                                        new.url, "--no-memory", data_dir=tmp_path))  # (no --message needed)
        assert code == 0, err
    assert "model changed by the person from openai/gpt-4-32k to openai/served-model" in out
    assert "done on the other model" in out and [body["model"] for body in new.requests] == ["served-model"]


def test_a_reasoning_effort_is_asked_for_on_the_command_line_and_changed_on_resume(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = positional([Turn(text="Thought it through.")] * 3)
    with ScriptedServer(script) as server:
        code, out, err = finish(tripane("run", "Say hello", "--model", "anthropic/claude-sonnet-4-5", "--api-base",
                                        server.url, "--reasoning-effort", "low", "--workdir", str(work), "--no-memory",
                                        data_dir=tmp_path))
        assert code == 0 and "(thought 7 words) Thought it through." in out, err
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        code, out, err = finish(tripane("resume", session_id, "--reasoning-effort", "default", "--message", "Again.",
                                        "--no-memory", data_dir=tmp_path))
        assert code == 0, err
    assert "reasoning effort of anthropic/claude-sonnet-4-5 set to the model's own by the person" in out
    code, shown, _ = finish(tripane("show", session_id, data_dir=tmp_path))
    assert "model anthropic/claude-sonnet-4-5 · reasoning effort low · workdir" in shown
    assert [body.get("thinking") for body in server.requests] == [{"type": "enabled", "budget_tokens": 1024}, None]
    code, out, _ = finish(tripane("run", "x", "--reasoning-effort", "extreme", data_dir=tmp_path))
    assert code == 2 and "invalid choice: 'extreme'" in out + _


def test_the_workdirs_agents_md_is_followed_unless_the_person_says_not(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("- Run the tests with `make check`.\n", encoding="utf-8")
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    systems = []
    for flags in ((), ("--no-project-instructions",)):
        with ScriptedServer(done) as server:
            code, _, err = finish(tripane("run", "Check the project", "--model", "openai/scripted", "--api-base",
                                          server.url, "--workdir", str(work), "--no-memory", *flags,
                                          data_dir=tmp_path))
            assert code == 0, err
            systems.append(server.requests[0]["messages"][0]["content"])
    assert "# Project instructions — AGENTS.md" in systems[0] and "`make check`" in systems[0]
    assert "make check" not in systems[1]


def test_a_reply_that_breaks_off_is_retried_and_the_retry_is_said_on_stderr(tmp_path):
    finished = Turn(text="All checked.", tool_calls=(tool("task_done", summary="ok"),))
    served = []

    def script(request):
        served.append(request)
        return Turn(text=finished.text, tool_calls=finished.tool_calls, break_after=2) if len(served) == 1 else finished

    with ScriptedServer(script) as server:
        code, out, err = finish(tripane("run", "Check the project", "--model", "openai/scripted", "--api-base",
                                        server.url, "--workdir", str(work_folder(tmp_path)), "--no-memory", data_dir=tmp_path))
    assert code == 0, err
    assert len(served) == 2
    assert "tripane: The provider's reply broke off in the middle: " in err and "(attempt 2 of 5)." in err
    assert "broke off" not in out and out.count("All checked.") == 1
    # The run has its own log file, beside the window's: the retry and the run's start and end.
    log = (tmp_path / "logs" / "tripane-cli.log").read_text(encoding="utf-8")
    assert "WARNING core.llm: model call failed" in log and "retry 1" in log
    assert "run starts at turn 0" in log and "run ends done" in log
    assert not (tmp_path / "logs" / "tripane.log").exists()


def test_a_long_task_is_read_from_a_file_and_a_bad_one_is_refused_plainly(tmp_path):
    spec = tmp_path / "spec.md"
    spec.write_text("Build the importer.\n" + "".join(f"- Rule {i}: kind {i} goes to t{i}.\n" for i in range(900)),
                    encoding="utf-8")
    work = work_folder(tmp_path)
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(done) as server:
        code, _, err = finish(tripane("run", "--task-file", str(spec), "--model", "openai/scripted", "--api-base",
                                      server.url, "--workdir", str(work), "--no-memory", data_dir=tmp_path))
    assert code == 0, err
    store = Store(tmp_path / "tripane.db")
    session = store.sessions()[0]
    assert store.records(session.id)[0].event.task == spec.read_text(encoding="utf-8")
    assert session.title == "Build the importer."
    assert (tmp_path / "sessions" / session.id / "offload" / "task.md").exists()  # (and the plan points there)

    (tmp_path / "latin1.md").write_bytes("Café: r\xe9sum\xe9".encode("latin-1"))
    (tmp_path / "empty.md").write_text("  \n", encoding="utf-8")
    write_pdf(tmp_path / "scan.pdf", [None])
    with tarfile.open(tmp_path / "bundle.tar.gz", "w:gz") as bundle:  # (a customer's support bundle)
        bundle.add(tmp_path / "empty.md", arcname="logs/app.log")
    for args, said in ((["--task-file", str(tmp_path / "scan.pdf")], "the task file scan.pdf has no text, only "
                                                                      "pictures of its 1 page"),
                       (["--task-file", str(tmp_path / "bundle.tar.gz")], "bundle.tar.gz is a tar archive: give it to "
                                                                           "the agent with --give"),
                       ([], "give the task: what the agent should do (or --task-file FILE)"),
                       (["--task-file", str(tmp_path / "nope.md")], "nope.md cannot be read: No such file"),
                       (["--task-file", str(tmp_path / "latin1.md")], "latin1.md is not UTF-8 text"),
                       (["--task-file", str(tmp_path / "empty.md")], "empty.md is empty")):
        code, _, err = finish(tripane("run", *args, "--model", "m", "--workdir", str(work), data_dir=tmp_path))
        assert code == 2 and said in err and "Traceback" not in err, (args, err)


def test_a_file_given_on_the_command_line_is_copied_into_the_session_for_the_agent(tmp_path):
    # Over SSH, a customer's bundle in ~/incoming: --task-file took only text, and the agent reads
    # nothing outside the work folder.
    import zipfile

    incoming = tmp_path / "incoming"
    incoming.mkdir()
    with zipfile.ZipFile(incoming / "bundle.zip", "w") as bundle:
        bundle.writestr("logs/app.log", "10:07 ERROR pool exhausted\n")
    work = work_folder(tmp_path)

    def read_it(request):
        task = request["messages"][1]["content"]
        assert "(copied for the agent as `offload:given/bundle.zip`)" in task, task
        return Turn(tool_calls=(tool("file_read", path="offload:given/bundle.zip/logs/app.log"),))

    (incoming / "web-2.log").write_bytes(b"10:09 ERROR pool exhausted on web-2\n" * 60_000)  # (2 MB: no message)
    steps = positional([read_it, Turn(tool_calls=(tool("task_done", summary="ok"),)),
                        Turn(tool_calls=(tool("file_search", query="web-2", path="offload:given/web-2.log"),)),
                        Turn(tool_calls=(tool("task_done", summary="both"),))])
    with ScriptedServer(steps) as server:
        code, _, err = finish(tripane("run", "Why did it fail?", "--give", str(incoming / "bundle.zip"), "--model",
                                      "openai/scripted", "--api-base", server.url, "--workdir", str(work), "--no-memory",
                                      data_dir=tmp_path))
        assert code == 0, err
        store = Store(tmp_path / "tripane.db")
        session = store.sessions()[0]
        # The other machine's log, given with a message to go on.
        code, _, err = finish(tripane("resume", session.id, "--give", str(incoming / "web-2.log"), "--no-memory",
                                      data_dir=tmp_path))
        assert code == 0, err
    results = [r.event for r in store.records(session.id) if r.event.kind == "tool_result"]
    assert "10:07 ERROR pool exhausted" in results[0].content
    assert results[2].content.startswith("offload:given/web-2.log:1: 10:09 ERROR pool exhausted on web-2")
    said = [r.event for r in store.records(session.id) if r.event.kind == "user_message"][-1]
    assert said.text == f"`{incoming / 'web-2.log'}` (copied for the agent as `offload:given/web-2.log`)"
    code, _, err = finish(tripane("run", "Why?", "--give", str(incoming / "gone.zip"), "--model", "m", "--workdir",
                                  str(work), data_dir=tmp_path))
    assert code == 2 and "gone.zip is not a file" in err and "Traceback" not in err
    assert len(store.sessions()) == 1


def test_a_specification_in_word_or_pdf_is_a_task_file_and_a_task_typed_with_it_says_what_to_do(tmp_path):
    spec = tmp_path / "Downloads" / "export spec.docx"
    spec.parent.mkdir()
    spec.write_bytes(docx_bytes([("1", "Export"), "The CSV has a header row."]))
    work = work_folder(tmp_path)
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(done) as server:
        for args in (["--task-file", str(spec)], ["Build what this asks", "--task-file", str(spec)]):
            code, _, err = finish(tripane("run", *args, "--model", "openai/scripted", "--api-base", server.url,
                                          "--workdir", str(work), "--no-memory", data_dir=tmp_path))
            assert code == 0, err
    store = Store(tmp_path / "tripane.db")
    alone, typed = sorted(store.sessions(), key=lambda s: s.id)
    assert store.records(alone.id)[0].event.task == "# Export\nThe CSV has a header row.\n"
    assert store.records(typed.id)[0].event.task == (f"Build what this asks\n\n`{spec}`:\n```\n# Export\n"
                                                     "The CSV has a header row.\n```\n")


def test_a_run_in_the_home_folder_says_so_first(tmp_path):
    home = work_folder(tmp_path)
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(done) as server:
        code, _, err = finish(tripane("run", "Tidy up", "--model", "openai/scripted", "--api-base", server.url,
                                      "--no-memory", data_dir=tmp_path, cwd=home,
                                      env={"HOME": str(home), "USERPROFILE": str(home)}))
    assert code == 0, err
    assert "that is your home folder: the agent may read and change any of your files" in err


def test_a_run_where_another_sessions_agent_waits_says_so_first(tmp_path):
    work = work_folder(tmp_path)
    script = positional([Turn(tool_calls=(tool("human_ask", question="Which parser?"),)),
                         Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(script) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url, "--workdir", str(work), "--no-memory")
        code, _, err = finish(tripane("run", "Fix the parser", *args, data_dir=tmp_path))
        assert "Waiting for a person" in err and "works in this folder" not in err  # (no stdin: it waits)
        code, _, err = finish(tripane("run", "Restyle the page", *args, data_dir=tmp_path))
    assert ("tripane: “Fix the parser” (waiting for the person's answer) works in this folder now, and two agents "
            "changing the same files undo each other's work: this session's agent is told") in err


def test_the_context_window_summary_and_helper_model_flags_are_the_sessions(tmp_path):
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(done) as server:
        code, _, err = finish(tripane("run", "Check", "--model", "openai/scripted", "--api-base", server.url,
                                      "--workdir", str(work_folder(tmp_path)), "--no-memory", "--context-window", "16384",
                                      "--summary-model", "openai/cheap", "--helper-model", "openai/reader",
                                      data_dir=tmp_path))
    assert code == 0, err
    store = Store(tmp_path / "tripane.db")
    started = store.records(store.sessions()[0].id)[0].event
    assert (started.context_window, started.summary_model, started.helper_model) == (16384, "openai/cheap",
                                                                                      "openai/reader")


def test_run_without_a_model_takes_the_settings_chosen_in_the_window(tmp_path):
    """The person chose a model, a local server and thresholds in the window's Settings: `tripane
    run "task"` uses them, and every command finds the sessions in the data folder chosen there."""
    from core.user_settings import write_settings

    config, data, work = tmp_path / "config", tmp_path / "chosen-data", tmp_path / "work"
    work.mkdir()
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(done) as server:
        write_settings({"model": "openai/scripted", "api_base": server.url, "context_window": 16384,
                        "warn_turn": 5, "danger_turn": 12, "approval": "all", "data_dir": str(data)},
                       config / "settings.json")
        env = {"TRIPANE_CONFIG_DIR": str(config)}
        code, _, err = finish(tripane("run", "Check", "--workdir", str(work), "--no-memory", data_dir=tmp_path, env=env))
        assert code == 0, err
        store = Store(data / "tripane.db")
        started = store.records(store.sessions()[0].id)[0].event
        assert (started.model, started.api_base, started.context_window) == ("openai/scripted", server.url, 16384)
        assert (started.warn_turn, started.danger_turn, started.approval) == (5, 12, "all")
        assert started.diagnose_errors  # a failure that comes again is diagnosed, unless turned off
        assert started.copy_work_folder  # and the work folder copied before the first command
        code, out, _ = finish(tripane("sessions", data_dir=tmp_path, env=env))
        assert code == 0 and "openai/scripted" in out
        _, out, _ = finish(tripane("doctor", data_dir=tmp_path, env=env))  # checks the chosen model
        assert "✓ Provider: openai/scripted answered" in out and str(data) in out

        # Another model named on the command line: the saved server and window do not go with it.
        code, _, err = finish(tripane("run", "Again", "--model", "openai/scripted", "--api-base", server.url,
                                      "--workdir", str(work), "--no-memory", "--no-diagnosis", "--no-work-copy", data_dir=tmp_path,
                                      env=env))
        assert code == 0, err
        again = next(r.event for row in store.sessions() if (r := store.records(row.id)[0]).event.task == "Again")
        assert again.context_window is None and not again.diagnose_errors and not again.copy_work_folder
        store.close()


@needs_git
def test_a_run_keeps_the_sessions_copies_of_work_folders_under_what_settings_allow(tmp_path):
    from core.paths import session_dir
    from core.scripted import ScriptedModel
    from core.session import Session, SessionConfig
    from core.snapshot import SNAPSHOT_DIR, WorkFolderSnapshot
    from core.user_settings import write_settings

    config, data, work = tmp_path / "config", tmp_path / "data", tmp_path / "work"
    work.mkdir()
    (work / "blob.bin").write_bytes(os.urandom(1200 * 1024))  # (does not compress)
    store = Store(data / "tripane.db")
    earlier = Session.create(store, data, SessionConfig(task="Earlier", model="scripted", workdir=work), ScriptedModel([]))
    store.close()
    WorkFolderSnapshot(session_dir(data, earlier.id)).take(work)
    done = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(done) as server:
        write_settings({"model": "openai/scripted", "api_base": server.url, "approval": "all", "data_dir": str(data),
                        "copies_mb": 1}, config / "settings.json")
        code, _, err = finish(tripane("run", "Check", "--workdir", str(work), "--no-memory", data_dir=tmp_path,
                                      env={"TRIPANE_CONFIG_DIR": str(config)}))
    assert code == 0, err
    assert not (session_dir(data, earlier.id) / SNAPSHOT_DIR).exists()
    assert "was removed on" in WorkFolderSnapshot(session_dir(data, earlier.id)).why_not


def test_the_answer_a_run_ends_with_is_printed_whole_as_written(tmp_path):
    """`tripane run "Review mod.py"` in a terminal: the answer is what the person ran it for. The
    agent's line shows its start; the end gives all of it, its Markdown lines as they are."""
    answer = "## Review of `mod.py`\n\n" + "\n".join(f"{n}. Point {n}: " + "detail " * 20 for n in range(1, 9))
    assert len(answer) > 1000
    done = positional([Turn(text=answer)])
    with ScriptedServer(done) as server:
        code, out, err = finish(tripane("run", "Review mod.py", "--model", "openai/scripted", "--api-base", server.url,
                                        "--workdir", str(work_folder(tmp_path)), "--no-memory", data_dir=tmp_path))
    assert code == 0, err
    ending = out[out.index("■ ended: done"):]
    assert ending.startswith("■ ended: done\n")
    assert [line.strip() for line in ending.splitlines()[1:answer.count("\n") + 2]] == [
        line.strip() for line in answer.splitlines()]
    session_id = Store(tmp_path / "tripane.db").sessions()[0].id
    code, out, _ = finish(tripane("show", session_id, data_dir=tmp_path))
    assert "8. Point 8: " in out[out.index("■ ended: done"):]


def test_output_to_a_pipe_that_is_not_utf8_is_written_whole(tmp_path):
    """Windows gives a pipe or a file the ANSI code page (cp1252): no ✓, ■ or Chinese in it."""
    task = "Summarise 漢字 notes ✓"
    done = positional([Turn(text="Done: 漢字 ✓", tool_calls=(tool("task_done", summary="总结完成 ✓"),))])
    cp1252 = {"PYTHONIOENCODING": "cp1252"}
    with ScriptedServer(done) as server:
        code, out, err = finish(tripane("run", task, "--model", "openai/scripted", "--api-base", server.url,
                                        "--workdir", str(work_folder(tmp_path)), "--no-memory", data_dir=tmp_path, env=cp1252))
    assert code == 0, err
    assert "总结完成 ✓" in out and "Traceback" not in err
    session_id = Store(tmp_path / "tripane.db").sessions()[0].id
    code, out, err = finish(tripane("show", session_id, data_dir=tmp_path, env=cp1252))
    assert code == 0 and "■ ended: done — 总结完成 ✓" in out and "Traceback" not in err
    code, out, err = finish(tripane("doctor", data_dir=tmp_path, env=cp1252))
    assert "✓ Python" in out and "UnicodeEncodeError" not in err


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX; Windows has no equivalent signal")
def test_a_command_cut_short_by_a_kill_is_told_at_the_resume_with_what_it_had_printed_and_that_it_runs_on(tmp_path):
    """The agent learned only that the call's effect was unknown: it ran a long build again to see
    how far it had got, and started a second one beside a first that Tripane's death had not ended."""
    work = work_folder(tmp_path)
    build = f'"{sys.executable}" -c "import time; [print(f\'step {{i}} of 9\', flush=True) for i in range(1, 4)]; time.sleep(60)"'
    steps = positional([Turn(tool_calls=(tool("shell_run", call_id="b1", command=build),)),
                        Turn(tool_calls=(tool("task_done", summary="checked"),))])
    group = None
    try:
        with ScriptedServer(steps) as server:
            args = ("--model", "openai/scripted", "--api-base", server.url, "--approve", "all", "--json")
            proc = tripane("run", "Build it", *args, "--workdir", str(work), data_dir=tmp_path)
            assert proc.stdout is not None
            session_id = json.loads(proc.stdout.readline())["session"]
            running = tmp_path / "sessions" / session_id / "running"
            deadline = time.monotonic() + 60
            while not ((running / "b1.txt").exists() and "step 3 of 9" in (running / "b1.txt").read_text("utf-8")):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
            group = int((running / "b1.pid").read_text(encoding="utf-8"))
            proc.send_signal(signal.SIGKILL)  # the build, which prints no more, lives on
            proc.wait(timeout=30)
            code, out, err = finish(tripane("resume", session_id, "--json", data_dir=tmp_path))
            assert code == 0, err

        store = Store(tmp_path / "tripane.db")
        told = [r.event for r in store.records(session_id) if r.event.kind == "tool_result"]
        store.close()
        assert [(e.call_id, e.ok) for e in told] == [("b1", False), (told[1].call_id, True)]
        assert (f"It is still running, as process group {group}, though what it prints no longer reaches you: do "
                f"not start it again; wait for what it writes, or stop it first with kill -- -{group}.") in told[0].content
        assert told[0].content.endswith("What it had printed by then (the end):\nstep 1 of 9\nstep 2 of 9\nstep 3 of 9")
        assert not any(running.iterdir())
    finally:
        if group is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX; Windows has no equivalent signal")
def test_what_commands_left_running_before_a_kill_is_stopped_when_the_run_goes_on(tmp_path):
    """A server the agent started was to stop when the run ended; a killed Tripane's run never
    ended, and the server held its port while the resumed agent started it again."""
    from tests.core.tools.test_shell_and_web import BEATING

    work = work_folder(tmp_path)
    (work / "serve.py").write_text(BEATING, encoding="utf-8")
    steps = positional([Turn(tool_calls=(tool("shell_run", call_id="s1", command=f'"{sys.executable}" serve.py'),)),
                        Turn(tool_calls=(tool("shell_run", call_id="w1", command="sleep 1; echo ok"),)),
                        Turn(tool_calls=(tool("task_done", summary="served"),))])

    def beating(seconds: float = 0.6) -> bool:
        before = (work / "beat").stat().st_size
        time.sleep(seconds)
        return (work / "beat").stat().st_size > before

    with ScriptedServer(steps) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url, "--approve", "all", "--json")
        proc = tripane("run", "Serve it", *args, "--workdir", str(work), data_dir=tmp_path)
        assert proc.stdout is not None
        session_id = json.loads(proc.stdout.readline())["session"]
        folder = tmp_path / "sessions" / session_id
        deadline = time.monotonic() + 60
        while not (folder / "running" / "w1.pid").exists():  # the server started, the next command runs
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert beating()  # Tripane is gone; the server is not
        code, out, err = finish(tripane("resume", session_id, "--json", data_dir=tmp_path))
        assert code == 0, err
    assert not beating()
    progress_text = (folder / "progress.md").read_text(encoding="utf-8")
    assert "What commands had left running in the background (process group " in progress_text
    assert "was stopped now, as the run's end would have." in progress_text
    assert not any((folder / "running").iterdir())


def license_script():
    """The agent asks which license, writes the person's answer to LICENSE, and is done."""
    return positional([
        Turn(tool_calls=(tool("human_ask", question="Which license?", options=["MIT", "GPL"]),)),
        lambda request: Turn(tool_calls=(tool("file_write", path="LICENSE", content=_last_tool_result(request)),)),
        Turn(tool_calls=(tool("task_done", summary="license written"),)),
    ])


def _last_tool_result(request) -> str:
    content = [m for m in request["messages"] if m["role"] == "tool"][-1]["content"]
    return content[content.index("The person answered"):]  # past any framing of the observation


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX; Windows has no equivalent signal")
def test_a_killed_run_resumes_with_every_event_and_no_half_written_file(tmp_path):
    work = tmp_path / "work"
    work.mkdir()

    def next_step(request) -> Turn:
        # Like a real agent after an "interrupted" result: write the first step that is missing.
        missing = [i for i in range(10) if not (work / f"step{i}.txt").exists()]
        if not missing:
            return Turn(tool_calls=(tool("task_done", summary="all steps written"),))
        i = missing[0]
        return Turn(tool_calls=(tool("file_write", call_id=f"w{i}", path=f"step{i}.txt", content=f"{i}\n" * 2000),
                                tool("findings_add", call_id=f"f{i}", title=f"step {i}", body="x" * 3000)),
                    delay_s=0.15)

    with ScriptedServer(next_step) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url, "--approve", "all", "--json")
        proc = tripane("run", "Write ten steps", *args, "--workdir", str(work), data_dir=tmp_path)
        printed = []
        assert proc.stdout is not None
        while sum(1 for p in printed if p["kind"] == "assistant_message") < 4:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "no output"
            printed.append(json.loads(line))
        time.sleep(0.07)  # land the kill somewhere inside the next steps
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL

        session_id = printed[0]["session"]
        store = Store(tmp_path / "tripane.db")
        before = store.records(session_id)
        store.close()
        # Everything printed before the kill is in the log, seq numbers are gapless.
        assert [r.seq for r in before] == list(range(1, len(before) + 1))
        assert {p["seq"] for p in printed} <= {r.seq for r in before}
        folder = tmp_path / "sessions" / session_id
        assert not list(folder.glob(".*.tmp"))
        code, out, _ = finish(tripane("sessions", data_dir=tmp_path))  # logged as running; nobody runs it
        assert code == 0 and f"{session_id}  interrupted" in out
        for name in ("task_plan.md", "findings.md", "progress.md"):
            text = (folder / name).read_text(encoding="utf-8")
            assert text.endswith("\n")  # every write ends a line; a torn write would not

        code, out, err = finish(tripane("resume", session_id, "--json", data_dir=tmp_path))
        assert code == 0, err

    store = Store(tmp_path / "tripane.db")
    after = store.records(session_id)
    store.close()
    assert [encode(r.event) for r in after[: len(before)]] == [encode(r.event) for r in before]
    assert [r.seq for r in after] == list(range(1, len(after) + 1))
    assert after[-1].event.kind == "session_ended" and after[-1].event.status == "done"
    assert [r.event.interrupted_at for r in after if r.event.kind == "session_resumed"] == [before[-1].ts]
    assert "resumed after an interruption" in out
    assert all((work / f"step{i}.txt").exists() for i in range(10))
    progress = (folder / "progress.md").read_text(encoding="utf-8")
    assert progress.count("findings_add") >= 10 and "Session ended: done" in progress


def on_a_terminal(argv: list[str], data_dir: Path,
                  replies: dict[bytes, bytes | Callable[[], bytes]] | None = None,
                  then: dict[bytes, Callable[[subprocess.Popen], None]] | None = None) -> tuple[int, bytes]:
    """Run the CLI with a pseudo-terminal for stdin, stdout and stderr, as in a person's terminal;
    each of `replies` is typed once when its prompt shows (a function: what the person does at that
    prompt, then the keys it gives); each of `then` is done to the process once its text shows (a
    signal sent: Ctrl+C, which a terminal not the process's own cannot send). The return code and
    all it wrote."""
    import pty
    import select

    master, slave = pty.openpty()
    env = {**os.environ, "TRIPANE_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", *argv], cwd=ROOT, env=env,
                            stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    seen, typed = b"", set()
    deadline = time.monotonic() + 90
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
        for prompt, answer in (replies or {}).items():
            if prompt in seen and prompt not in typed:
                os.write(master, answer() if callable(answer) else answer)
                typed.add(prompt)
        for shown, act in (then or {}).items():
            if shown in seen and shown not in typed:
                act(proc)
                typed.add(shown)
    proc.wait(timeout=30)
    os.close(master)
    return proc.returncode, seen


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_the_question_is_asked_and_answered_there(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer(license_script()) as server:
        code, seen = on_a_terminal(["run", "Add a license", "--model", "openai/scripted", "--api-base", server.url,
                                    "--workdir", str(work)], tmp_path,
                                   {b"your choice:": b"MIT\n", b"details (optional):": b"permissive please\n"})
    assert code == 0, seen.decode(errors="replace")
    assert b"Which license?" in seen
    assert (work / "LICENSE").read_text(encoding="utf-8") == "The person answered: MIT\npermissive please"


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_a_slow_model_is_seen_being_waited_for(tmp_path):
    """A model on this computer may read for minutes before its first word: the terminal says so,
    counting, and the line is gone when the step's line is printed."""
    slow = positional([Turn(tool_calls=(tool("task_done", summary="read it all"),), delay_s=3.5)])
    with ScriptedServer(slow) as server:
        code, seen = on_a_terminal(["run", "Read slowly", "--model", "openai/scripted", "--api-base", server.url,
                                    "--workdir", str(work_folder(tmp_path)), "--no-memory"], tmp_path)
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert "… waiting for the model · 2 s" in text and "… waiting for the model · 3 s" in text
    wiped = "\r" + " " * len("  … waiting for the model · 3 s") + "\r"
    assert text.index(wiped) < text.index("[turn 1]")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_an_approval_says_what_each_option_does_and_takes_its_number(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    command = f'"{sys.executable}" -c "print(42)"'
    script = positional([Turn(tool_calls=(tool("shell_run", "t1", command=command),)),
                         Turn(tool_calls=(tool("task_done", "t2", summary="printed"),))])
    with ScriptedServer(script) as server:
        code, seen = on_a_terminal(["run", "Print 42", "--model", "openai/scripted", "--api-base", server.url,
                                    "--workdir", str(work), "--no-memory"], tmp_path,
                                   {b"your choice:": b"always allow\n", b"please answer one of": b"3\n",
                                    b"details (optional):": b"\n"})
    text = seen.decode(errors="replace").replace("\r\n", "\n")
    assert code == 0, text
    assert ("(approval): Allow shell_run? [1. approve / 2. deny / 3. always_call: always allow this command in this "
            "folder / 4. always: always allow shell_run]") in text
    assert "please answer one of: 1. approve" in text  # "always allow" is no option's whole name: asked again
    assert "✓ shell_run: 42" in text  # 3: always allowed, in this folder
    allowed = json.loads((tmp_path / "approvals.json").read_text(encoding="utf-8"))["folders"]
    assert list(allowed.values()) == [[f"shell_run\ncommand={command}"]]


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_three_strikes_edit_the_plan_waits_for_the_persons_edit_and_sends_it(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    failing = Turn(tool_calls=(tool("shell_run", command=f'"{sys.executable}" -c "import sys; sys.exit(3)"'),))
    script = positional([failing, failing, failing, Turn(tool_calls=(tool("task_done", summary="planned"),))])

    def edit_the_plan() -> bytes:  # in the person's editor, then Enter
        plan = next((tmp_path / "sessions").iterdir()) / "task_plan.md"
        plan.write_text(plan.read_text(encoding="utf-8") + "- Ask before running it again\n", encoding="utf-8")
        return b"\n"
    with ScriptedServer(script) as server:
        code, seen = on_a_terminal(["run", "Run it", "--model", "openai/scripted", "--api-base", server.url,
                                    "--workdir", str(work), "--approve", "all", "--no-memory", "--no-diagnosis"],
                                   tmp_path, {b"your choice:": b"3\n", b"once it is saved:": edit_the_plan,
                                              b"details (optional):": b"\n"})
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert "Edit the plan in your editor and save it: " in text and "task_plan.md" in text
    told = json.dumps(server.requests[-1]["messages"])
    assert "The person edited task_plan.md" in told and "+- Ask before running it again" in told
    assert told.index("+- Ask before running it again") < told.index("edit_plan (the person edits the plan")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_the_budget_cap_asks_how_much_more(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer(four_listings()) as server:
        code, seen = on_a_terminal(["run", "List it", "--model", "openai/scripted", "--api-base", server.url,
                                    "--workdir", str(work), "--budget-tokens", "250", "--no-memory"], tmp_path,
                                   {b"your choice:": b"1\n", b"(Enter: as much again": b"120\n",
                                    b"details (optional):": b"\n"})
    text = seen.decode(errors="replace").replace("\r\n", "\n")
    assert code == 0, text  # 330 used + 120 granted: the fourth request (440) stays under, and the task ends
    assert "The budget cap (250 tokens) is reached: 330 tokens used" in text
    assert "how much more? (Enter: as much again, 250 more tokens):" in text
    assert "answer to q" in text and "Continue — 120" in text


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_a_running_command_shows_its_output_as_it_goes(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "suite.py").write_text("import time\nprint('collected 2 items', flush=True)\ntime.sleep(1)\n"
                                   "print('2 passed', flush=True)\n", encoding="utf-8")
    script = positional([Turn(tool_calls=(tool("shell_run", "t1", command=f'"{sys.executable}" suite.py'),)),
                         Turn(tool_calls=(tool("task_done", "t2", summary="tests pass"),))])
    with ScriptedServer(script) as server:
        code, seen = on_a_terminal(["run", "Run the tests", "--model", "openai/scripted", "--api-base", server.url,
                                    "--workdir", str(work), "--approve", "all"], tmp_path)
    text = seen.decode(errors="replace").replace("\r\n", "\n")
    assert code == 0, text
    call, live, result = text.index("shell_run("), text.index("  │ collected 2 items\n  │ 2 passed"), text.index("✓ shell_run")
    assert call < live < result  # under the call, before its result line


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux desktops need DISPLAY or WAYLAND_DISPLAY")
def three_sessions(data_dir: Path, work: Path) -> list[str]:
    from core.scripted import ScriptedModel
    from core.session import Session, SessionConfig

    store = Store(data_dir / "tripane.db")
    ids = [Session.create(store, data_dir, SessionConfig(task=task, model="scripted", workdir=work), ScriptedModel([])).id
           for task in ("Port the parser", "Fix the login page", "Tidy the imports")]
    store.close()
    return ids


def test_delete_asks_or_takes_yes_and_keeps_a_session_another_tripane_runs(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    parser, login, imports = three_sessions(tmp_path, work)
    code, out, err = finish(tripane("delete", parser, data_dir=tmp_path))  # not at a terminal: nobody to ask
    assert code == 2 and "run it at a terminal to be asked, or add --yes" in err
    assert (tmp_path / "sessions" / parser).is_dir()

    with FileLock(str(tmp_path / "sessions" / imports / RUN_LOCK)):  # another Tripane runs it
        code, out, err = finish(tripane("delete", parser, imports[:20], "--yes", data_dir=tmp_path))
    assert code == 1
    assert f"Deleted {parser}" in out and f"Kept {imports}: Session {imports} is being run by another Tripane" in err
    assert {row.id for row in Store(tmp_path / "tripane.db").sessions()} == {login, imports}
    assert not (tmp_path / "sessions" / parser).exists() and (tmp_path / "sessions" / imports).is_dir()
    assert work.is_dir()  # the work folder is not touched

    code, _, err = finish(tripane("delete", "2", "--yes", data_dir=tmp_path))  # both ids start so
    assert code == 2 and "2 sessions match '2'" in err


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_delete_at_a_terminal_asks_first(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    parser, login, _imports = three_sessions(tmp_path, work)
    code, seen = on_a_terminal(["delete", parser, login], tmp_path, {b"[y/N]": b"n\n"})
    assert code == 0 and b"Delete these 2 sessions? This cannot be undone." in seen and b"Nothing deleted." in seen
    assert b"Port the parser" in seen and b"Fix the login page" in seen  # what would go, shown first
    assert (tmp_path / "sessions" / parser).is_dir()
    code, seen = on_a_terminal(["delete", parser], tmp_path, {b"[y/N]": b"y\n"})
    assert code == 0 and f"Deleted {parser}".encode() in seen
    assert not (tmp_path / "sessions" / parser).exists() and (tmp_path / "sessions" / login).is_dir()


def test_without_a_display_tripane_explains_instead_of_crashing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "core.cli", "--data-dir", str(tmp_path)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "there is no display here" in result.stderr and "tripane --help" in result.stderr


def test_a_servers_address_given_as_the_model_is_refused_with_where_it_goes(tmp_path):
    code, _out, err = finish(tripane("run", "Say hello", "--model", "http://127.0.0.1:8000/v1", "--workdir",
                                     str(tmp_path), data_dir=tmp_path))
    assert code == 2
    assert ("argument --model: http://127.0.0.1:8000/v1 is a server's address, not a model: pass it with --api-base"
            in err)
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def read_until(stream, wanted: str, timeout: float = 60) -> str:
    """What a process printed, up to and including `wanted` (read a character at a time: a prompt
    has no newline)."""
    seen, deadline = "", time.monotonic() + timeout
    while wanted not in seen:
        assert time.monotonic() < deadline, seen
        char = stream.read(1)
        assert char, seen
        seen += char
    return seen


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
@pytest.mark.parametrize("person", ["ends the input", "presses Ctrl+C"])
def test_a_question_at_the_terminal_left_unanswered_ends_the_command_cleanly(tmp_path, person):
    import pty

    work = tmp_path / "work"
    work.mkdir()
    script = positional([Turn(tool_calls=(tool("shell_run", command="echo ran >> ran.txt"),)),
                         Turn(tool_calls=(tool("task_done", summary="ran it"),))])
    with ScriptedServer(script) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url, "--approve", "ask", "--no-memory")
        terminal, typing_end = pty.openpty()
        try:
            proc = tripane("run", "Run it", *args, "--workdir", str(work), data_dir=tmp_path, stdin=typing_end)
            read_until(proc.stdout, "your choice: ")
            if person == "ends the input":
                os.write(terminal, b"\x04")  # Ctrl+D on an empty line
            else:
                proc.send_signal(signal.SIGINT)
            code, out, err = finish(proc, timeout=60)
        finally:
            os.close(terminal)
            os.close(typing_end)
        assert "Traceback" not in err, err
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        if person == "presses Ctrl+C":  # the run stops there, as Ctrl+C stops it at any other moment
            assert code == 1 and "ended: stopped" in out  # (the person's Stop: not "aborted")
            code, out, err = finish(tripane("sessions", data_dir=tmp_path))
            assert out.startswith(f"{session_id}  ended:stopped ")
            return
        assert code == 3 and f"tripane resume {session_id} --answer" in err  # the question stays open

        code, out, err = finish(tripane("resume", session_id, "--answer", "approve", data_dir=tmp_path))
    assert code == 0, err
    assert (work / "ran.txt").read_text(encoding="utf-8") == "ran\n"  # run once, when approved


class _Changelog(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        send_page(self, b"<html><body><p>2.4: offsets are kept when parsing.</p></body></html>")


def helper_fetches(site: str) -> Script:
    """The agent delegates a question; its helper fetches the changelog, then reports its last read."""
    def script(request: dict) -> Turn:
        tools, messages = request.get("tools") or [], request["messages"]
        if tools and len(tools) == len(READING_TOOLS):
            if messages[-1]["role"] == "tool":
                return Turn(text=f"Report: {str(messages[-1]['content'])[:300]}")
            return Turn(tool_calls=(tool("web_fetch", "w1", url=f"{site}/changelog"),))
        if "Research report" in json.dumps(messages):
            return Turn(tool_calls=(tool("task_done", "t1", summary="read the report"),))
        return Turn(tool_calls=(tool("delegate_research", "d1", question="Are offsets kept in 2.4?"),))
    return script


def test_a_run_nobody_can_answer_withdraws_a_helpers_question_and_goes_on(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with serving(_Changelog) as site, ScriptedServer(helper_fetches(site)) as server:
        code, out, err = finish(tripane("run", "Check the changelog", "--model", "openai/scripted", "--api-base",
                                        server.url, "--workdir", str(work), "--approve", "ask", "--no-memory",
                                        data_dir=tmp_path))
    assert code == 0, err
    assert "withdrawn: nobody can answer here" in out  # rather than leaving a question its helper cannot outlive
    report = json.dumps([m for r in server.requests for m in r["messages"] if m["role"] == "tool"])
    assert "web_fetch was not run: nobody can answer here" in report and "offsets are kept" not in report


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_on_a_terminal_a_helpers_fetch_is_asked_about_there(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with serving(_Changelog) as site, ScriptedServer(helper_fetches(site)) as server:
        code, seen = on_a_terminal(["run", "Check the changelog", "--model", "openai/scripted", "--api-base",
                                    server.url, "--workdir", str(work), "--approve", "ask", "--no-memory"], tmp_path,
                                   {b"your choice:": b"approve\n", b"details (optional):": b"\n"})
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert "A research helper asks" in text and "/changelog" in text
    report = json.dumps([m for r in server.requests for m in r["messages"] if m["role"] == "tool"])
    assert "offsets are kept when parsing" in report


def asked_aside(site: str) -> Script:
    """A run that ends at once; then the person's own question, whose helper fetches the changelog."""
    helper = helper_fetches(site)

    def script(request: dict) -> Turn:
        if len(request.get("tools") or ()) == len(READING_TOOLS):
            return helper(request)
        return Turn(tool_calls=(tool("task_done", "t1", summary="done"),))
    return script


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only")
def test_tripane_ask_asks_on_the_terminal_before_its_helper_fetches_and_withdraws_with_nobody_there(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with serving(_Changelog) as site, ScriptedServer(asked_aside(site)) as server:
        code, _, err = finish(tripane("run", "Start", "--model", "openai/scripted", "--api-base", server.url,
                                      "--workdir", str(work), "--approve", "ask", "--no-memory", data_dir=tmp_path))
        assert code == 0, err
        code, out, err = finish(tripane("ask", "Are offsets kept in 2.4?", "--no-memory", data_dir=tmp_path))
        assert code == 0, err
        assert "withdrawn" not in out and "nobody can answer here" in out  # the helper said why it did not read
        code, seen = on_a_terminal(["ask", "Are offsets kept in 2.4?", "--no-memory"], tmp_path,
                                   {b"your choice:": b"approve\n", b"details (optional):": b"\n"})
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert "The research helper answering your question asks" in text and "offsets are kept when parsing" in text


def test_sessions_lists_those_whose_title_or_conversation_holds_a_text(tmp_path):
    from tests.core.test_spending import two_sessions

    store = two_sessions(tmp_path / "tripane.db")
    store.append("s2", UserMessage("Keep the 1.2.0 entry on top"))
    store.close()
    code, out, _ = finish(tripane("sessions", data_dir=tmp_path))
    assert code == 0 and len(out.splitlines()) == 2
    code, out, _ = finish(tripane("sessions", "changelog", data_dir=tmp_path))
    assert code == 0 and out.splitlines() == [line for line in out.splitlines() if line.startswith("s2 ")]
    assert "Sort the changelog" in out and "said in" not in out  # by its title
    code, out, _ = finish(tripane("list", "1.2.0 ENTRY", data_dir=tmp_path))
    assert code == 0 and len(out.splitlines()) == 1 and out.startswith("s2 ") and "(said in its conversation)" in out
    code, out, _ = finish(tripane("sessions", "nowhere at all", data_dir=tmp_path))
    assert code == 0 and out == ""


def test_show_markdown_prints_the_conversation_as_a_transcript(tmp_path):
    from tests.core.test_spending import two_sessions

    two_sessions(tmp_path / "tripane.db").close()
    code, out, err = finish(tripane("show", "s1", "--markdown", data_dir=tmp_path))
    assert code == 0, err
    assert out.startswith("# Fix the date tests\n\n*Session `s1`, model `openai/gpt-4o-mini`")
    assert "## You\n\ngo on\n\n## Agent" in out and "**file_list** (no result)" in out and "Files:" not in out
    code, _, err = finish(tripane("show", "s1", "--markdown", "--json", data_dir=tmp_path))
    assert code == 2 and "not allowed with argument" in err


def test_import_takes_in_an_export_and_refuses_what_is_not_one(tmp_path):
    from tests.core.test_spending import two_sessions

    two_sessions(tmp_path / "here" / "tripane.db").close()
    code, out, err = finish(tripane("export", "s1", "--out", str(tmp_path / "s1.zip"), data_dir=tmp_path / "here"))
    assert code == 0, err
    code, out, err = finish(tripane("import", str(tmp_path / "s1.zip"), data_dir=tmp_path / "there"))
    assert code == 0, err
    assert out.startswith("Imported s1: Fix the date tests (interrupted)") and "tripane show s1" in out
    assert "is not on this computer" in out and "tripane resume s1 --workdir FOLDER" in out  # (a folder of its own)
    code, out, _ = finish(tripane("spending", "--days", "0", data_dir=tmp_path / "there"))
    assert "Fix the date tests" in out and "$0.0017" in out  # its requests came with it
    code, _, err = finish(tripane("import", str(tmp_path / "s1.zip"), data_dir=tmp_path / "there"))
    assert code == 2 and "in this data folder already" in err and "Traceback" not in err
    (tmp_path / "notes.zip").write_text("no", encoding="utf-8")
    code, _, err = finish(tripane("import", str(tmp_path / "notes.zip"), data_dir=tmp_path / "there"))
    assert code == 2 and "cannot be read as a zip file" in err and "Traceback" not in err


def test_history_lists_a_files_versions_and_prints_one_whole_or_what_it_changed(tmp_path):
    from core.memory.working import PLAN
    from core.scripted import ScriptedModel
    from tests.core.helpers import make_session

    store = Store(tmp_path / "tripane.db")
    (tmp_path / "work").mkdir()
    session = make_session(store, tmp_path, tmp_path / "work", ScriptedModel([]), task="Sort the changelog")
    first, _ = session.read_file(PLAN)
    session.edit_file(PLAN, first + "- [ ] the person's step\n", base_version=1)
    session.edit_file(PLAN, "a plan rewritten whole\n", base_version=2)
    store.close()
    code, out, err = finish(tripane("history", session.id[:9], data_dir=tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"task_plan.md of {session.id} (Sort the changelog): 3 versions"
    assert [line.split()[0] for line in lines[1:4]] == ["v1", "v2", "v3"]
    assert lines[1].endswith("Tripane          created") and lines[2].endswith("You              +1 -0")
    code, out, err = finish(tripane("history", "--version", "2", data_dir=tmp_path))  # the newest session
    assert code == 0, err
    assert out == first + "- [ ] the person's step\n"
    code, out, err = finish(tripane("history", "--version", "3", "--diff", data_dir=tmp_path))
    assert code == 0 and "+a plan rewritten whole\n" in out and "-- [ ] the person's step\n" in out
    code, out, err = finish(tripane("history", "--file", "progress", data_dir=tmp_path))
    assert code == 0 and out.startswith("progress.md of") and "v1" in out
    code, _, err = finish(tripane("history", "--version", "7", data_dir=tmp_path))
    assert code == 2 and "has no version 7 (it has v1 to v3)" in err and "Traceback" not in err


def test_show_follow_prints_events_as_they_come_until_the_run_ends(tmp_path):
    import queue
    import threading

    from core.events import AssistantMessage, SessionEnded, ToolCall, ToolResult

    store = Store(tmp_path / "tripane.db")
    store.create_session("s1", task="Tidy the notes", model="scripted")
    store.append("s1", UserMessage("start with the oldest"))
    proc = tripane("show", "s1", "--follow", data_dir=tmp_path)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()

    def next_line() -> str:
        return lines.get(timeout=30).rstrip("\n")

    try:
        assert next_line() == "you: start with the oldest"  # what was there, at once
        store.append("s1", AssistantMessage("Listing.", (ToolCall("c1", "file_list", "{}"),), turn=1))
        assert next_line() == "[turn 1] agent: Listing. → file_list({})"  # then what comes
        store.append("s1", ToolResult("c1", "file_list", True, "notes.md"))
        assert next_line() == "  ✓ file_list: notes.md"
        assert proc.poll() is None  # still following
        store.append("s1", SessionEnded(status="done", summary="tidied"))
        assert next_line() == "■ ended: done — tidied"
        code = proc.wait(timeout=30)
        assert code == 0 and "Following s1 as it runs" in proc.stderr.read()
    finally:
        proc.kill()
        store.close()
    code, out, err = finish(tripane("show", "s1", "--follow", data_dir=tmp_path))  # ended: printed, not followed
    assert code == 0 and out.startswith("you: start with the oldest") and "Following" not in err
    code, _, err = finish(tripane("show", "s1", "--follow", "--markdown", data_dir=tmp_path))
    assert code == 2 and "a transcript or a summary is of a whole session" in err
    code, out, err = finish(tripane("show", "s1", "--summary", data_dir=tmp_path))
    assert code == 0 and out.startswith("Tidy the notes (s1)\n  State:") and "ended: done — tidied" in out
    assert "  Tool calls:                 1: file_list 1\n" in out


def test_resume_gives_a_moved_work_folder_its_new_place(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    steps = positional([Turn(tool_calls=(tool("task_done", summary="first"),)),
                        Turn(tool_calls=(tool("file_write", path="notes.md", content="written\n"),)),
                        Turn(tool_calls=(tool("task_done", summary="written in the new place"),))])
    with ScriptedServer(steps) as server:
        code, out, err = finish(tripane("run", "Write the notes", "--model", "openai/served-model", "--api-base",
                                        server.url, "--workdir", str(work), "--no-memory", data_dir=tmp_path))
        assert code == 0, err
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        moved = work.rename(tmp_path / "renamed")
        code, out, err = finish(tripane("resume", session_id, "--message", "Write notes.md", "--no-memory",
                                        data_dir=tmp_path))
        assert code == 2 and "is not there any more" in err and "--workdir FOLDER" in err
        code, _, err = finish(tripane("resume", session_id, "--workdir", str(tmp_path / "nowhere"), data_dir=tmp_path))
        assert code == 2 and "does not exist or is not a folder" in err and "Traceback" not in err
        code, out, err = finish(tripane("resume", session_id, "--workdir", str(moved), "--message", "Write notes.md",
                                        "--no-memory", data_dir=tmp_path))
        assert code == 0, err
    assert f"work folder moved from {work.resolve()} to {moved.resolve()}" in out
    assert (moved / "notes.md").read_text(encoding="utf-8") == "written\n" and not work.exists()


def test_run_reflect_reflects_as_the_task_ends_and_reflect_lists_what_came_of_it(tmp_path):
    from tests.core.memory.test_reflection import STRATEGY, report_yaml

    work = tmp_path / "work"
    work.mkdir()
    agent = positional([Turn(tool_calls=(tool("file_read", path="missing.md"),)),
                        Turn(tool_calls=(tool("task_done", summary="Read what there was"),))])

    def script(request):  # the reflection's request has no tools: it is not the agent's turn
        return agent(request) if request.get("tools") else Turn(text=report_yaml())

    with ScriptedServer(script) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url, "--workdir", str(work))
        code, out, err = finish(tripane("run", "Read the notes", *args, "--reflect", data_dir=tmp_path))
        assert code == 0, err
        assert out.count("✦ reflection by openai/scripted: the task was achieved; 1 strategy suggested") == 1
        assert f"**{STRATEGY}** (medium confidence)" in out and "### Errors" in out
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        assert (tmp_path / "memory" / "reflections" / f"{session_id}-1.yaml").is_file()
        # Nothing new since: said, and nothing recorded.
        code, _, err = finish(tripane("reflect", data_dir=tmp_path))
        assert code == 1 and "nothing to reflect on" in err and "Traceback" not in err
    code, out, err = finish(tripane("memory", "strategies", data_dir=tmp_path))
    assert code == 0, err
    assert "1 reflection in" in out and f"1 of 3 sessions  {STRATEGY} (when: a test fails)" in out
    code, out, err = finish(tripane("memory", "learned", data_dir=tmp_path))
    assert code == 0 and f"### Strategies on their way\n- **{STRATEGY}** When: a test fails. — *1 of 3 sessions*" in out
    code, out, _ = finish(tripane("show", session_id, data_dir=tmp_path))
    assert code == 0 and "✦ reflection by openai/scripted" in out


def test_a_server_on_this_computer_is_reached_directly_with_a_proxy_named(tmp_path):
    # A company's proxy variable, and Ollama or LM Studio on the person's own computer: asked for
    # 127.0.0.1, the proxy connected to itself, and every request failed.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    proxies = {"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "NO_PROXY": "intranet.example", "no_proxy": ""}
    with ScriptedServer(positional([Turn(tool_calls=(tool("task_done", summary="reached"),))])) as server:
        code, out, err = finish(tripane("run", "Say hello", "--model", "openai/scripted", "--api-base", server.url,
                                        "--no-memory", "--workdir", str(work_folder(tmp_path)), data_dir=tmp_path,
                                        env=proxies))
    assert code == 0, err
    assert "■ ended: done — reached" in out


def test_the_loopback_names_join_no_proxy_only_when_a_proxy_is_named():
    from core.network import loopback_direct

    untouched = {"PATH": "/bin"}
    loopback_direct(untouched)
    assert untouched == {"PATH": "/bin"}
    named = {"https_proxy": "http://proxy.corp:3128", "NO_PROXY": "intranet.example, 127.0.0.1"}
    loopback_direct(named)
    assert named["NO_PROXY"] == "intranet.example,127.0.0.1,localhost,::1"
    assert named["no_proxy"] == "localhost,127.0.0.1,::1"
    everything = {"HTTP_PROXY": "http://proxy.corp:3128", "NO_PROXY": "*"}
    loopback_direct(everything)
    assert everything["NO_PROXY"] == "*"


def test_an_api_base_without_its_scheme_is_refused_on_the_command_line(tmp_path):
    code, _, err = finish(tripane("run", "Say hello", "--model", "openai/qwen3", "--api-base", "127.0.0.1:8000/v1",
                                  data_dir=tmp_path))
    assert code == 2
    assert "The API base 127.0.0.1:8000/v1 lacks its http:// (or https://): http://127.0.0.1:8000/v1, for instance." in err
    assert not (tmp_path / "tripane.db").exists()  # (refused before anything was made)


def test_a_servers_own_key_is_given_by_the_variable_named_and_stored_nowhere(tmp_path):
    # A vLLM started with --api-key, run from a terminal on a computer with no keyring (a server): the
    # server is sent only its own key, never a provider's variable, so the command line names the
    # variable that holds it.
    work = work_folder(tmp_path)
    secret = "sk-the-servers-own-key-42"
    def script(request: dict) -> Turn:
        if len(request.get("tools") or ()) == len(READING_TOOLS):  # a research helper's, asked aside
            return Turn(text="It said hello, and nothing more.")
        return Turn(tool_calls=(tool("task_done", summary="reached"),))

    with ScriptedServer(script, served_key=secret) as server:
        args = ("run", "Say hello", "--model", "openai/served", "--api-base", server.url, "--workdir", str(work))
        code, _, err = finish(tripane(*args, "--api-key-env", "SERVED_KEY", data_dir=tmp_path))
        assert code == 2 and "Traceback" not in err
        assert err == ("tripane: --api-key-env SERVED_KEY: there is no SERVED_KEY in this environment (or it is "
                       "empty); set it to the key first (export SERVED_KEY=…)\n")
        code, out, err = finish(tripane(*args, data_dir=tmp_path))  # none given: refused, and said how
        assert code == 1 and f"The server at {server.url} refused the API key" in out + err
        session_id = Store(tmp_path / "tripane.db").sessions()[0].id
        code, out, err = finish(tripane("resume", session_id, "--api-key-env", "SERVED_KEY", data_dir=tmp_path,
                                        env={"SERVED_KEY": secret}))
        assert code == 0, err
        assert "reached" in out
        code, out, err = finish(tripane(*args, "--api-key-env", "SERVED_KEY", data_dir=tmp_path,
                                        env={"SERVED_KEY": secret}))
        assert code == 0, err
        # A helper asked aside reads at the session's server too.
        code, out, err = finish(tripane("ask", "What did it say?", "--no-memory", "--api-key-env", "SERVED_KEY",
                                        data_dir=tmp_path, env={"SERVED_KEY": secret}))
        assert code == 0, err
        assert "It said hello, and nothing more." in out
    assert not [path for path in tmp_path.rglob("*") if path.is_file() and secret.encode() in path.read_bytes()]


# A server started in the background that logs each request it serves (one every 0.05 s, for at
# most 30 s where it is not stopped), and beats in a file.
TALKING = ("import subprocess, sys\n"
           "talk = 'import time\\nfor n in range(600):\\n    print(f\"GET /page {n}\", flush=True)\\n"
           "    open(\"beat\", \"a\").write(\".\")\\n    time.sleep(0.05)\\n'\n"
           "subprocess.Popen([sys.executable, '-c', talk])\n"
           "print('server started')\n")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only; and on Windows what a "
                                                    "command leaves running is the agent's to stop")
def test_on_a_terminal_a_server_the_done_task_left_running_runs_until_ctrl_c(tmp_path):
    """The person asked for the dev server, to try the page: it was stopped as the run ended. Now
    it runs on, what it prints shown as in a terminal of its own, until Ctrl+C."""
    work = work_folder(tmp_path)
    (work / "serve.py").write_text(TALKING, encoding="utf-8")
    command = f'"{sys.executable}" serve.py'
    script = positional([Turn(tool_calls=(tool("shell_run", "serve", command=command),)),
                         Turn(tool_calls=(tool("task_done", summary="It serves the page."),))])
    beats = []

    def try_it_then_ctrl_c(proc: subprocess.Popen) -> None:
        before = (work / "beat").stat().st_size
        time.sleep(1.5)  # (the run has ended: what runs now runs for the person)
        beats.append((work / "beat").stat().st_size > before and proc.poll() is None)
        proc.send_signal(signal.SIGINT)

    with ScriptedServer(script) as server:
        code, seen = on_a_terminal(["run", "Start the dev server", "--model", "openai/scripted", "--api-base",
                                    server.url, "--workdir", str(work), "--approve", "all", "--no-memory"], tmp_path,
                                   then={b"Ctrl+C stops it and ends tripane.": try_it_then_ctrl_c})
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert beats == [True]
    assert "keeps running for you now the task is done" in text
    assert f"⏹ you stopped what `{command}` had left running in the background" in text
    held = text[text.index("Ctrl+C stops it and ends tripane."):text.index("⏹ you stopped")]
    assert "  │ GET /page " in held  # what the server printed while it ran for the person
    size = (work / "beat").stat().st_size
    time.sleep(0.5)
    assert (work / "beat").stat().st_size == size  # stopped with it
    code, out, _ = finish(tripane("show", data_dir=tmp_path))
    assert code == 0 and "you stopped what" in out


def test_without_a_terminal_a_server_the_task_left_running_stops_with_the_run(tmp_path):
    from tests.core.tools.test_shell_and_web import BEATING

    work = work_folder(tmp_path)
    (work / "serve.py").write_text(BEATING, encoding="utf-8")
    script = positional([Turn(tool_calls=(tool("shell_run", "serve", command=f'"{sys.executable}" serve.py'),)),
                         Turn(tool_calls=(tool("task_done", summary="It serves the page."),))])
    with ScriptedServer(script) as server:
        code, out, err = finish(tripane("run", "Start the dev server", "--model", "openai/scripted", "--api-base",
                                        server.url, "--workdir", str(work), "--approve", "all", "--no-memory",
                                        data_dir=tmp_path))
    assert code == 0, err
    assert "stopped what" in out and "as the run ended" in out and "Ctrl+C" not in out + err
    size = (work / "beat").stat().st_size
    time.sleep(0.5)
    assert (work / "beat").stat().st_size == size


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only; and on Windows what a "
                                                    "command leaves running is the agent's to stop")
def test_a_server_held_for_the_person_stops_when_the_terminal_closes(tmp_path):
    """Closing the terminal hangs tripane up, and the server, in a process group of its own, would
    run on with nobody to stop it: it is stopped first, though nothing can be printed any more."""
    import pty

    from tests.core.tools.test_shell_and_web import BEATING

    work = work_folder(tmp_path)
    (work / "serve.py").write_text(BEATING, encoding="utf-8")
    script = positional([Turn(tool_calls=(tool("shell_run", "serve", command=f'"{sys.executable}" serve.py'),)),
                         Turn(tool_calls=(tool("task_done", summary="It serves the page."),))])
    master, slave = pty.openpty()
    try:
        with ScriptedServer(script) as server:
            proc = tripane("run", "Start the dev server", "--model", "openai/scripted", "--api-base", server.url,
                           "--workdir", str(work), "--approve", "all", "--no-memory", data_dir=tmp_path, stdin=slave)
            for line in proc.stdout:
                if "Ctrl+C stops it" in line:
                    break
            assert proc.poll() is None
            proc.stdout.close()  # the terminal is gone: whatever tripane prints now fails
            proc.stderr.close()
            proc.send_signal(signal.SIGHUP)
            assert proc.wait(timeout=30) == 0
    finally:
        os.close(master)
        os.close(slave)
    size = (work / "beat").stat().st_size
    time.sleep(0.5)
    assert (work / "beat").stat().st_size == size  # stopped
    code, out, _ = finish(tripane("show", data_dir=tmp_path))
    assert code == 0 and "stopped what" in out and "as Tripane quit" in out


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only; and on Windows what a "
                                                    "command leaves running is the agent's to stop")
def test_a_server_held_for_the_person_that_ends_by_itself_ends_the_wait(tmp_path):
    work = work_folder(tmp_path)
    (work / "serve.py").write_text(TALKING.replace("range(600)", "range(50)"), encoding="utf-8")  # about 2.5 s
    script = positional([Turn(tool_calls=(tool("shell_run", "serve", command=f'"{sys.executable}" serve.py'),)),
                         Turn(tool_calls=(tool("task_done", summary="It serves the page."),))])
    with ScriptedServer(script) as server:
        code, seen = on_a_terminal(["run", "Start the dev server", "--model", "openai/scripted", "--api-base",
                                    server.url, "--workdir", str(work), "--approve", "all", "--no-memory"], tmp_path)
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert text.index("Ctrl+C stops it and ends tripane.") < text.index("It has ended by itself.")
    assert "you stopped" not in text


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX-only; and on Windows what a "
                                                    "command leaves running is the agent's to stop")
def test_a_run_where_a_terminal_holds_a_dev_server_says_so_and_its_agent_is_told(tmp_path):
    from tests.core.tools.test_shell_and_web import BEATING

    work = work_folder(tmp_path)
    (work / "serve.py").write_text(BEATING, encoding="utf-8")
    command = f'"{sys.executable}" serve.py'
    follow_up: list[tuple[int, str, str]] = []

    def script(request: dict) -> Turn:
        if "Make the button blue" in json.dumps(request["messages"]):
            return Turn(tool_calls=(tool("task_done", summary="blue"),))
        return positional([Turn(tool_calls=(tool("shell_run", "serve", command=command),)),
                           Turn(tool_calls=(tool("task_done", summary="It serves the page."),))])(request)

    with ScriptedServer(script) as server:
        def run_the_next_task_then_ctrl_c(proc: subprocess.Popen) -> None:
            follow_up.append(finish(tripane("run", "Make the button blue", "--model", "openai/scripted", "--api-base",
                                            server.url, "--workdir", str(work), "--no-memory", data_dir=tmp_path)))
            proc.send_signal(signal.SIGINT)

        code, seen = on_a_terminal(["run", "Start the dev server", "--model", "openai/scripted", "--api-base",
                                    server.url, "--workdir", str(work), "--approve", "all", "--no-memory"], tmp_path,
                                   then={b"Ctrl+C stops it and ends tripane.": run_the_next_task_then_ctrl_c})
        facts = [m["content"] for r in server.requests for m in r["messages"]
                 if m["role"] == "system" and "Make the button blue" in json.dumps(r["messages"])]
    assert code == 0, seen.decode(errors="replace")
    [(next_code, _out, err)] = follow_up
    assert next_code == 0, err
    assert (f"tripane: `{command}` (left by “Start the dev server”) runs in this folder for you: this session's "
            "agent is told to leave it running.") in err
    assert facts and "- Running in this folder for the person, left by other sessions' tasks:" in facts[0]
