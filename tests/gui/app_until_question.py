"""A real app process that starts a session, waits for the agent's question, and says so.

The restart test SIGKILLs this process at that point, as a crash or a killed app would end it.
    python -m tests.gui.app_until_question DATA_DIR SETTINGS_INI WORKDIR [approval]

The question is the agent's own (human_ask), or with `approval`, the approval of a shell command.
"""

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import SessionConfig  # noqa: E402
from gui.app import make_app, open_window  # noqa: E402
from gui.qt import QSettings  # noqa: E402
from gui.settings import AppSettings  # noqa: E402


def main() -> None:
    data_dir, settings_file, workdir = (Path(p) for p in sys.argv[1:4])
    app = make_app(sys.argv[:1])
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    approval = sys.argv[4:] == ["approval"]
    model = ScriptedModel([reply("", call("shell_run", command="echo ran >> ran.txt") if approval else
                                 call("human_ask", question="Which database should I use?",
                                      options=["sqlite", "postgres"]))])
    window = open_window(AppSettings(QSettings(str(settings_file), QSettings.Format.IniFormat)), data_dir,
                         lambda: model)
    window.show()
    window.question_shown.connect(lambda dialog: print(f"QUESTION {window.session.id}", flush=True))

    async def run() -> None:
        window.start_session(SessionConfig(task="Pick a database", model="scripted", workdir=workdir,
                                           approval="ask"))
        await asyncio.sleep(3600)

    with loop:
        loop.run_until_complete(run())


if __name__ == "__main__":
    main()
