"""A picture the person shows the agent with a message (a screenshot of what is wrong): kept in the
session, sent as an image to a model that sees pictures, in every request after, byte for byte;
named in the text for one that does not, and wherever the conversation is written out."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import pytest

from core import pictures
from core.events import AssistantMessage, ErrorRecorded, ToolResult, UserMessage
from core.llm import LiteLLMClient
from core.render import render
from core.session import Session
from core.transcript import transcript
from tests.core.helpers import events_of, make_session
from tests.support.openai_server import Failure, ScriptedServer, Turn, positional, tool


def png(width: int = 2, height: int = 1) -> bytes:
    """A real PNG of `width` × `height` red pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def client() -> LiteLLMClient:
    return LiteLLMClient(backoff_s=0.01, retries=0)


def finished_then_two_turns():
    """Done at once; after the person's message, one call and done again."""
    return positional([
        Turn(tool_calls=(tool("task_done", summary="first"),)),
        Turn(tool_calls=(tool("file_list", path="."),)),
        Turn(tool_calls=(tool("task_done", summary="seen"),)),
    ])


def images_in(body: dict) -> list[str]:
    """The images a request carries, as their data: OpenAI's image_url parts, Anthropic's base64 sources."""
    found = []
    for message in body["messages"]:
        found.extend(message.get("images") or ())  # Ollama's /api/chat
        for part in message["content"] if isinstance(message.get("content"), list) else ():
            if part.get("type") == "image_url":
                url = part["image_url"]["url"] if isinstance(part["image_url"], dict) else part["image_url"]
                found.append(url.split(",", 1)[1])
            elif part.get("type") == "image":
                found.append(part["source"]["data"])
    return found


def unmarked(messages: list[dict]) -> list[dict]:
    """Messages without Claude's cache marks, which move to the latest stable message each request."""
    return json.loads(json.dumps(messages).replace(', "cache_control": {"type": "ephemeral"}', ""))


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"])
async def test_a_picture_reaches_a_model_that_sees_pictures_in_every_request_after_it(model, store, data_dir,
                                                                                       workdir):
    shown = png(3, 2)
    with ScriptedServer(finished_then_two_turns()) as server:
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url)
        assert await session.run() == "done"
        assert session.sees_pictures()
        kept = session.keep_picture(shown, ".png")
        await session.send("The page looks like this. What is wrong?", pictures=(kept,))
        assert await session.wait() == "done"

    assert kept == "pictures/0001.png" and (session.dir / kept).read_bytes() == shown
    as_sent = base64.b64encode(shown).decode()
    assert [images_in(body) for body in server.requests] == [[], [as_sent], [as_sent]]
    # The message's words name the picture too, and the next request repeats all before its tail
    # byte for byte, the picture with it (the provider's cache holds).
    assert "The page looks like this. What is wrong?\\n[Picture attached: pictures/0001.png]" in json.dumps(
        server.requests[1]["messages"])
    second, third = (unmarked(server.requests[n]["messages"]) for n in (1, 2))
    assert second[:-1] == third[:len(second) - 1]
    assert events_of(session, UserMessage)[-1].pictures == ("pictures/0001.png",)


def refusing_pictures(script, failure: Failure):
    """A server whose model takes no pictures: a request holding one is refused with `failure`
    (the script is not asked, so its steps stay in order)."""
    def answer(body: dict):
        return failure if images_in(body) else script(body)
    return answer


# Words of servers and providers whose model takes no pictures.
REFUSALS = {
    "vllm": Failure(400, "Qwen/Qwen2.5-7B-Instruct is not a multimodal model"),
    "openai": Failure(400, "Invalid content type. image_url is only supported by certain models.",
                      code="invalid_request_error"),
    "deepseek": Failure(422, "Failed to deserialize the JSON body into the target type: messages[1]: unknown "
                             "variant `image_url`, expected `text` at line 1 column 2163"),
    "llama.cpp": Failure(500, "image input is not supported - hint: if this is unexpected, you may need to "
                              "provide the mmproj"),
    "openrouter": Failure(404, "No endpoints found that support image input"),
}


async def test_a_model_no_one_says_anything_of_is_shown_pictures(store, data_dir, workdir):
    # A vision model on vLLM (which says nothing of pictures) that litellm's map does not know.
    shown = png()
    with ScriptedServer(finished_then_two_turns()) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/qwen2.5-vl", api_base=server.url)
        assert await session.run() == "done"
        assert session.sees_pictures()
        await session.send("Look", pictures=(session.keep_picture(shown, ".png"),))
        assert await session.wait() == "done"
    as_sent = base64.b64encode(shown).decode()
    assert [images_in(body) for body in server.requests] == [[], [as_sent], [as_sent]]
    assert session.sees_pictures()  # (it took one)


@pytest.mark.parametrize("server_kind", sorted(REFUSALS))
async def test_a_model_that_refuses_pictures_is_told_one_is_there_and_shown_no_more(server_kind, store, data_dir,
                                                                                     workdir):
    told: list[str] = []
    with ScriptedServer(refusing_pictures(finished_then_two_turns(), REFUSALS[server_kind])) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/scripted", api_base=server.url)
        session.journal.subscribe(lambda notice: told.append(getattr(notice, "detail", "")))
        assert await session.run() == "done"
        await session.send("", pictures=(session.keep_picture(png(), ".png"),))
        assert await session.wait() == "done"
        assert not session.sees_pictures()  # the window says so under the next picture pasted

    # The refused request is asked again at once without it (the script's steps all answered),
    # and from then on the picture is said to be there, in the same words each request.
    assert [bool(images_in(body)) for body in server.requests] == [False, True, False, False]
    said = "[Picture attached: pictures/0001.png]" + pictures.CANNOT_SEE
    for body in server.requests[2:]:
        assert [m["content"] for m in body["messages"] if "Picture attached" in str(m.get("content"))] == [said]
    assert not events_of(session, ErrorRecorded)
    assert any("Asking again without the picture 0001.png" in line for line in told)
    # Once it is known not to be seen, the picture takes none of the window.
    estimates = [m.metrics["prompt_tokens_est"] for m in events_of(session, AssistantMessage)]
    assert estimates[2] < estimates[1] - pictures.PICTURE_TOKENS // 2


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"])
async def test_a_picture_a_seeing_model_cannot_read_is_left_out_and_the_next_one_shown(model, store, data_dir,
                                                                                       workdir):
    # A picture the provider could not process (Claude's 400 "Could not process image") would fail
    # every request after it, the picture being in each.
    bad, good = png(1, 1), png(3, 3)
    script = finished_then_two_turns()

    def answer(body: dict):
        return Failure(400, "Could not process image", code="invalid_request_error") \
            if base64.b64encode(bad).decode() in images_in(body) else script(body)
    with ScriptedServer(answer) as server:
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url)
        assert await session.run() == "done"
        await session.send("First", pictures=(session.keep_picture(bad, ".png"),))
        assert await session.wait() == "done"
        await session.send("Second", pictures=(session.keep_picture(good, ".png"),))
        assert await session.wait() == "done"
    assert session.sees_pictures()
    last = server.requests[-1]
    assert images_in(last) == [base64.b64encode(good).decode()]
    assert "First\\n[Picture attached: pictures/0001.png] The model's provider refused pictures/0001.png" in json.dumps(
        last["messages"])


async def test_a_request_refused_for_another_reason_than_its_picture_fails_as_it_would(store, data_dir, workdir):
    refusal = Failure(400, "Invalid 'tools[0].function.name': string does not match pattern.")
    asked = []

    def refused_twice(body: dict):  # (the request with the picture, then the one without it)
        asked.append(body)
        return refusal if len(asked) <= 2 else Turn(tool_calls=(tool("task_done", summary="seen"),))
    with ScriptedServer(positional([Turn(tool_calls=(tool("task_done", summary="first"),)), refused_twice])) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/qwen2.5-vl", api_base=server.url)
        assert await session.run() == "done"
        await session.send("Look", pictures=(session.keep_picture(png(), ".png"),))
        assert await session.wait() == "error"
        assert "does not match pattern" in events_of(session, ErrorRecorded)[-1].message
        assert session.sees_pictures()  # (it was not the picture)
        await session.send("Again")
        assert await session.wait() == "done"
    assert [bool(images_in(body)) for body in server.requests] == [False, True, False, True]


async def test_a_reopened_session_sends_its_pictures_as_before(store, data_dir, workdir):
    with ScriptedServer(finished_then_two_turns()) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/gpt-4o-mini", api_base=server.url)
        assert await session.run() == "done"
        await session.send("Look", pictures=(session.keep_picture(png(), ".png"),))
        assert await session.wait() == "done"
    reopened = Session.open(store, data_dir, session.id, client())
    picture_messages = [m for m in reopened.journal.history.messages if m.get(pictures.PICTURES_KEY)]
    assert picture_messages == [{"role": "user", "content": "Look\n[Picture attached: pictures/0001.png]",
                                 pictures.PICTURES_KEY: ["pictures/0001.png"]}]
    assert "## You\n\nLook\n[Picture attached: pictures/0001.png]" in transcript(reopened.records, "Look")


def test_a_picture_counts_in_the_context_as_a_picture_does(store, data_dir, workdir):
    from core.context.history import message_tokens

    def by_character(text: str) -> int:
        return len(text)

    plain = {"role": "user", "content": "Look"}
    shown = {**plain, pictures.PICTURES_KEY: ["pictures/0001.png", "pictures/0002.png"]}
    assert message_tokens(shown, by_character) - message_tokens(plain, by_character) == 2 * pictures.PICTURE_TOKENS


def test_pictures_are_numbered_in_the_session_folder_and_what_no_provider_takes_is_refused(tmp_path):
    assert pictures.keep(tmp_path, png(), ".PNG") == "pictures/0001.png"
    assert pictures.keep(tmp_path, b"\xff\xd8jpeg", ".jpg") == "pictures/0002.jpg"
    (tmp_path / "pictures" / "0007.png").write_bytes(png())  # (kept by another window meanwhile)
    assert pictures.keep(tmp_path, png(), ".png") == "pictures/0008.png"
    with pytest.raises(pictures.PictureRefused, match=r"a \.bmp file is not a picture a model takes"):
        pictures.keep(tmp_path, b"BM", ".bmp")
    with pytest.raises(pictures.PictureRefused, match=r"the picture is 5\.0 MB; providers take at most 5 MB"):
        pictures.keep(tmp_path, b"\0" * (pictures.LARGEST_PICTURE_BYTES + 1), ".png")
    assert sorted(p.name for p in (tmp_path / "pictures").iterdir()) == ["0001.png", "0002.jpg", "0007.png",
                                                                          "0008.png"]


def test_a_picture_gone_from_the_session_folder_is_sent_as_its_words(tmp_path):
    message = {"role": "user", "content": "Look\n[Picture attached: pictures/0001.png]",
               pictures.PICTURES_KEY: ["pictures/0001.png"]}
    assert pictures.sendable([message], True, tmp_path) == [{"role": "user", "content": message["content"]}]


def reading_the_picture():
    return positional([
        Turn(tool_calls=(tool("file_read", path="shot.png"), tool("file_list", path="."))),
        Turn(tool_calls=(tool("file_read", path="shot.png"),)),  # (again: the same picture, not a copy)
        Turn(tool_calls=(tool("task_done", summary="seen"),)),
    ])


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"])
async def test_the_agent_reading_a_picture_file_sees_it_after_its_turns_results(model, store, data_dir, workdir):
    # A screenshot a test run saved, a chart the agent plotted: file_read refused it as binary.
    shown = png(4, 4)
    (workdir / "shot.png").write_bytes(shown)
    with ScriptedServer(reading_the_picture()) as server:
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url)
        assert await session.run() == "done"

    as_sent = base64.b64encode(shown).decode()
    assert [images_in(body) for body in server.requests] == [[], [as_sent], [as_sent]]  # once in view, kept
    results = [e for e in events_of(session, ToolResult) if e.name == "file_read"]
    assert results[0].ok and results[0].pictures == ("pictures/0001.png",)
    assert results[0].content == ("[shot.png: a picture, 80 bytes. You see it below, after the results of this turn "
                                  "(pictures/0001.png).]".replace("80", f"{len(shown):,}"))
    assert results[1].pictures == () and results[1].content == (  # (it has it in view)
        f"[shot.png: a picture, {len(shown):,} bytes, unchanged: you saw it above (pictures/0001.png).]")
    assert sorted(p.name for p in (session.dir / "pictures").iterdir()) == ["0001.png"]
    # After both results of the turn (a call's result answers it at once), as the person's words are.
    said = json.dumps(server.requests[1]["messages"])
    assert said.index("[The picture your file_read call") > max(said.rfind('"tool_call_id"'), said.rfind('"tool_use_id"'))


async def test_a_picture_file_is_refused_to_a_model_that_does_not_see_pictures(store, data_dir, workdir):
    (workdir / "shot.png").write_bytes(png())
    with ScriptedServer(reading_the_picture()) as server:  # (litellm's map: it takes no pictures)
        session = make_session(store, data_dir, workdir, client(), model="deepseek/deepseek-coder",
                               api_base=server.url)
        assert await session.run() == "done"
    failed = [e for e in events_of(session, ToolResult) if e.name == "file_read"][0]
    assert not failed.ok and failed.content == ("'shot.png' is a picture (69 bytes), and this model cannot see "
                                                "pictures.").replace("69", str(len(png())))
    assert all(images_in(body) == [] for body in server.requests)


@pytest.mark.parametrize("capabilities, seen", [(("completion", "vision", "tools"), True),
                                                (("completion", "tools"), False)])
async def test_an_ollama_model_sees_pictures_when_its_server_says_it_does(capabilities, seen, store, data_dir,
                                                                          workdir):
    # gemma3, llava, qwen2.5vl: litellm's map knows no Ollama model as seeing pictures.
    shown = png()
    with ScriptedServer(finished_then_two_turns(), ollama_capabilities=capabilities) as server:
        session = make_session(store, data_dir, workdir, client(), model="ollama_chat/gemma3:4b", api_base=server.url)
        assert await session.run() == "done"
        assert session.sees_pictures() is seen
        await session.send("Look", pictures=(session.keep_picture(shown, ".png"),))
        assert await session.wait() == "done"
    chats = [body for body in server.requests if "messages" in body]
    assert images_in(chats[-1]) == ([base64.b64encode(shown).decode()] if seen else [])
    assert (pictures.CANNOT_SEE in json.dumps(chats[-1])) is not seen


def test_the_command_line_shows_a_picture_with_a_message(tmp_path):
    from tests.core.test_cli import finish, tripane, work_folder

    shown = png(5, 5)
    (tmp_path / "shot.png").write_bytes(shown)
    with ScriptedServer(finished_then_two_turns()) as server:
        args = ("--model", "openai/gpt-4o-mini", "--api-base", server.url)
        code, _, err = finish(tripane("run", "Fix the page", *args, "--workdir", str(work_folder(tmp_path)),
                                      data_dir=tmp_path / "data", env={"OPENAI_API_KEY": "k"}))
        assert code == 0, err
        session_id = err.split()[1].rstrip(",")
        code, _, err = finish(tripane("resume", session_id, "--message", "Look", "--picture", str(tmp_path / "gone.png"),
                                      data_dir=tmp_path / "data", env={"OPENAI_API_KEY": "k"}))
        assert code == 2 and f"tripane: cannot show {tmp_path / 'gone.png'}: No such file or directory" in err
        code, out, err = finish(tripane("resume", session_id, "--message", "Look", "--picture", str(tmp_path / "shot.png"),
                                        data_dir=tmp_path / "data", env={"OPENAI_API_KEY": "k"}))
    assert code == 0, err
    assert "ended: done" in out
    assert images_in(server.requests[-1]) == [base64.b64encode(shown).decode()]


async def test_a_picture_given_with_the_task_is_in_the_first_request_and_stays(store, data_dir, workdir):
    shown = png(6, 3)
    script = positional([Turn(tool_calls=(tool("file_list", path="."),)),
                         Turn(tool_calls=(tool("task_done", summary="seen"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/gpt-4o-mini", api_base=server.url,
                               task="The button overlaps the text, as here.", pictures=((shown, ".png"),))
        assert await session.run() == "done"
    as_sent = base64.b64encode(shown).decode()
    assert [images_in(body) for body in server.requests] == [[as_sent], [as_sent]]
    task = server.requests[0]["messages"][1]["content"]
    assert task[0]["text"].startswith("# Task\nThe button overlaps the text, as here.")
    assert task[0]["text"].endswith("\n[Picture attached: pictures/0001.png]")
    assert (session.dir / "pictures" / "0001.png").read_bytes() == shown
    assert "## You\n\nThe button overlaps the text, as here.\n[Picture attached: pictures/0001.png]" in transcript(
        session.records, "t")
    assert render(session.records[0]).endswith(f"· workdir {workdir} · with the task: pictures/0001.png")


def test_the_command_line_gives_a_picture_with_the_task(tmp_path):
    from tests.core.test_cli import finish, tripane, work_folder

    shown = png(5, 5)
    (tmp_path / "shot.png").write_bytes(shown)
    (tmp_path / "shot.bmp").write_bytes(b"BM")
    with ScriptedServer(finished_then_two_turns()) as server:
        args = ("--model", "openai/gpt-4o-mini", "--api-base", server.url, "--workdir", str(work_folder(tmp_path)))
        code, _, err = finish(tripane("run", "Fix the page", *args, "--picture", str(tmp_path / "shot.bmp"),
                                      data_dir=tmp_path / "data", env={"OPENAI_API_KEY": "k"}))
        assert code == 2 and f"tripane: cannot show {tmp_path / 'shot.bmp'}: a .bmp file is not a picture" in err
        (tmp_path / "big.png").write_bytes(shown + b"\0" * pictures.LARGEST_PICTURE_BYTES)  # (a 5K screen's PNG)
        code, _, err = finish(tripane("run", "Fix the page", *args, "--picture", str(tmp_path / "big.png"),
                                      data_dir=tmp_path / "data", env={"OPENAI_API_KEY": "k"}))
        assert code == 2 and "providers take at most 5 MB (the window scales a picture down as it takes it: drop " \
            "this one there, or make it at most 1,568 pixels wide and high first)" in err
        assert server.requests == []  # (nothing started)
        code, _, err = finish(tripane("run", "Fix the page", *args, "--picture", str(tmp_path / "shot.png"),
                                      data_dir=tmp_path / "data", env={"OPENAI_API_KEY": "k"}))
        assert code == 0, err
        assert images_in(server.requests[0]) == [base64.b64encode(shown).decode()]
        assert "see pictures" not in err
        # A model that does not see pictures: the person is told before the run, as the window does.
        code, _, err = finish(tripane("run", "Fix the page", "--model", "deepseek/deepseek-coder", "--api-base",
                                      server.url, "--workdir", str(work_folder(tmp_path)), "--picture",
                                      str(tmp_path / "shot.png"), data_dir=tmp_path / "data"))
    assert code == 0, err
    assert f"tripane: {pictures.not_seen_note('deepseek/deepseek-coder')}" in err
    assert images_in(server.requests[-1]) == []


async def test_pictures_through_compactions_claude_accepts_and_the_summary_gets_words(store, data_dir, workdir):
    from core.events import Compaction
    from tests.core.test_llm_litellm import tools_required

    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(200)),
                                      encoding="utf-8")
    task_picture, read_picture = png(2, 2), png(3, 3)
    (workdir / "shot.png").write_bytes(read_picture)
    served = []

    def script(body):
        if not body.get("tools"):  # the summary of a compaction
            return Turn(text="Goal: read wide.txt. A picture of the page was shown. Pending: the rest.")
        if tools_required(body):  # the flush before it
            return Turn(tool_calls=(tool("findings_add", f"f{len(served)}", title="Rows", body="All alike."),))
        served.append(body)
        if len(served) == 1:
            return Turn(tool_calls=(tool("file_read", "r0", path="shot.png"),))
        if len(served) <= 9:
            return Turn(tool_calls=(tool("file_read", f"r{len(served)}", path="wide.txt",
                                         offset=1 + (len(served) - 2) * 20, limit=20),))
        return Turn(tool_calls=(tool("task_done", "done", summary="read"),))

    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="anthropic/claude-sonnet-4-5",
                               api_base=server.url, context_window=8_000, reserve_output=1000,
                               task="Read wide.txt; the page looks like this.", pictures=((task_picture, ".png"),))
        assert await session.run() == "done"
    assert len(events_of(session, Compaction)) >= 1
    summaries = [body for body in server.requests if not body.get("tools")]
    assert summaries and all(images_in(body) == [] for body in summaries)
    assert "[Picture attached: pictures/0002.png]" in json.dumps(summaries[0])  # (the one read, in its words)
    task_sent = base64.b64encode(task_picture).decode()
    assert all(task_sent in images_in(body) for body in served)  # the task's, in every request
    assert base64.b64encode(read_picture).decode() not in images_in(served[-1])  # the read one, compacted away


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "deepseek/deepseek-coder"])
async def test_a_picture_the_agent_fetches_is_shown_to_a_model_that_sees_pictures(model, store, data_dir, workdir):
    from http.server import BaseHTTPRequestHandler

    from core.memory.working import FINDINGS
    from tests.support.local_site import send_page, serving

    chart = png(7, 7)

    class Chart(BaseHTTPRequestHandler):
        def do_GET(self):
            send_page(self, chart, "image/png")

        def log_message(self, *args):
            pass

    with serving(Chart) as site:
        script = positional([Turn(tool_calls=(tool("web_fetch", url=f"{site}/chart.png"),)),
                             Turn(tool_calls=(tool("task_done", summary="seen"),))])
        with ScriptedServer(script) as server:
            session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url,
                                   approval="all")
            assert await session.run() == "done"
    fetched = [e for e in events_of(session, ToolResult) if e.name == "web_fetch"][0]
    if model == "deepseek/deepseek-coder":  # (it does not see pictures)
        assert not fetched.ok and fetched.content == (f"{site}/chart.png is a picture ({len(chart):,} bytes), and "
                                                      "this model cannot see pictures.")
        return
    assert fetched.ok and fetched.pictures == ("pictures/0001.png",)
    assert images_in(server.requests[1]) == [base64.b64encode(chart).decode()]
    assert f"Source fetched: {site}/chart.png\n- a picture, {len(chart):,} bytes" in session.read_file(FINDINGS)[0]


@pytest.mark.parametrize("served_as", ["llamacpp", "lmstudio", "lmstudio-v0"])
@pytest.mark.parametrize("vision", [True, False])
async def test_a_local_server_that_says_its_model_sees_pictures_is_sent_them(served_as, vision, store, data_dir,
                                                                             workdir):
    # llama.cpp started with --mmproj, a vision model LM Studio has: litellm's map knows neither.
    shown = png()
    with ScriptedServer(finished_then_two_turns(), served_window=32_768, served_as=served_as,
                        served_vision=vision) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/served-model", api_base=server.url)
        assert await session.run() == "done"
        assert session.sees_pictures() is vision
        await session.send("Look", pictures=(session.keep_picture(shown, ".png"),))
        assert await session.wait() == "done"
    assert images_in(server.requests[-1]) == ([base64.b64encode(shown).decode()] if vision else [])


async def test_a_picture_sent_while_the_agent_works_reaches_it_at_its_next_step(store, data_dir, workdir):
    import asyncio

    shown = png(4, 2)
    script = positional([Turn(tool_calls=(tool("file_list", path="."),), delay_s=0.5),
                         Turn(tool_calls=(tool("task_done", summary="seen"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/gpt-4o-mini", api_base=server.url)
        run = asyncio.ensure_future(session.run())
        while not server.requests:  # (the model is answering its first request)
            await asyncio.sleep(0.01)
        assert session.running
        await session.send("This is what it looks like now", pictures=(session.keep_picture(shown, ".png"),))
        assert await run == "done"
    assert [images_in(body) for body in server.requests] == [[], [base64.b64encode(shown).decode()]]
    assert events_of(session, UserMessage)[0].pictures == ("pictures/0001.png",)
    # progress.md, the log of what happened, has it too, after the call it came after.
    progress = session.read_file("progress.md")[0]
    assert progress.index("💬 The person wrote\nThis is what it looks like now\n[Picture attached: pictures/0001.png]") \
        > progress.index("Turn 1: file_list")


async def test_progress_md_names_the_pictures_the_task_came_with(store, data_dir, workdir):
    with ScriptedServer(finished_then_two_turns()) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/gpt-4o-mini", api_base=server.url,
                               pictures=((png(), ".png"), (png(2, 2), ".png")))
        assert await session.run() == "done"
    assert "- Task: Test task\n- Pictures: pictures/0001.png, pictures/0002.png\n" in session.read_file("progress.md")[0]


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"])
async def test_an_answer_to_the_agents_question_can_show_a_picture(model, store, data_dir, workdir):
    from tests.core.helpers import wait_for_question

    shown = png(5, 3)
    script = positional([Turn(tool_calls=(tool("human_ask", "q1", question="What does the page show now?"),)),
                         Turn(tool_calls=(tool("task_done", "d1", summary="seen"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url)
        session.start()
        question = await wait_for_question(session, timeout=30)
        await session.answer(question.qid, "This, still broken", pictures=(session.keep_picture(shown, ".png"),))
        assert await session.wait() == "done"
    answered = [e for e in events_of(session, ToolResult) if e.name == "human_ask"][0]
    assert answered.content == "The person answered: This, still broken" and answered.pictures == ("pictures/0001.png",)
    assert images_in(server.requests[1]) == [base64.b64encode(shown).decode()]


async def test_a_reopened_session_knows_what_its_model_refused(store, data_dir, workdir):
    # After a restart, or in another window: the refused picture is not sent again to be refused
    # again, the model is known not to see pictures, and the conversation marks it.
    shown = png()
    with ScriptedServer(refusing_pictures(finished_then_two_turns(), REFUSALS["vllm"])) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/scripted", api_base=server.url)
        assert await session.run() == "done"
        await session.send("Look", pictures=(session.keep_picture(shown, ".png"),))
        assert await session.wait() == "done"
        asked = len(server.requests)
        pictures._taken.clear(), pictures._refused.clear()  # (a new process)

        reopened = Session.open(store, data_dir, session.id, client())
        assert not reopened.sees_pictures()
        assert reopened.pictures_refused() == (frozenset({str(session.dir / "pictures" / "0001.png")}), True)
        await reopened.send("And now?")
        assert await reopened.wait() == "done"
    assert [bool(images_in(body)) for body in server.requests[asked:]] == [False]


async def test_a_model_that_took_pictures_and_refused_one_still_sees_pictures_when_reopened(store, data_dir, workdir):
    bad, good = png(1, 1), png(3, 3)
    script = finished_then_two_turns()

    def answer(body: dict):
        return Failure(400, "Could not process image") if base64.b64encode(bad).decode() in images_in(body) \
            else script(body)
    with ScriptedServer(answer) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/qwen2.5-vl", api_base=server.url,
                               pictures=((good, ".png"),))
        assert await session.run() == "done"
        await session.send("This one", pictures=(session.keep_picture(bad, ".png"),))
        assert await session.wait() == "done"
    pictures._taken.clear(), pictures._refused.clear()
    reopened = Session.open(store, data_dir, session.id, client())
    assert reopened.sees_pictures()
    assert reopened.pictures_refused() == (frozenset({str(session.dir / "pictures" / "0002.png")}), False)


def test_an_unreadable_note_of_refusals_is_as_none(tmp_path, caplog):
    folder = tmp_path / "pictures"
    folder.mkdir()
    (folder / pictures.REFUSALS_FILE).write_text("[{\"model\": ", encoding="utf-8")
    pictures.recall_refusals(tmp_path)
    assert pictures._refused == {} and "they are tried again" in caplog.text


def test_pictures_a_model_is_not_shown_take_none_of_its_window():
    # A small window (a local text-only model's) was compacted early for pictures it never got.
    from core.context.engine import ContextEngine
    from core.context.history import History
    from core.events import Compaction, Record, SessionStarted

    history = History()
    history.apply(Record("s", 1, "2026-11-28T09:00:00Z", SessionStarted(task="Fix the page", model="m", workdir="w",
                                                                         pictures=("pictures/0001.png",))))
    history.apply(Record("s", 2, "2026-11-28T09:01:00Z", UserMessage("Now", pictures=("pictures/0002.png",
                                                                                      "pictures/0003.png"))))
    engine = ContextEngine(system_prompt="You are the agent.", tools=[], count_tokens=lambda text: len(text) // 4,
                           encode=list, budget=10_000)
    shown = engine.assemble(history, "tail", remember=False)
    not_shown = engine.assemble(history, "tail", remember=False, pictures_shown=False)
    assert shown.tokens - not_shown.tokens == 3 * pictures.PICTURE_TOKENS
    assert [zone.tokens for zone in shown.zones][1] - [zone.tokens for zone in not_shown.zones][1] == 3 * 1_600
    # A compaction that keeps the task (and its picture) summarises the message's two away.
    history.apply(Record("s", 3, "2026-11-28T09:02:00Z", Compaction(first_seq=2, last_seq=2, summary="He wrote.",
                                                                   flush_done=True)))
    assert history.pictures_held == 1
    assert (engine.assemble(history, "tail", remember=False).tokens
            - engine.assemble(history, "tail", remember=False, pictures_shown=False).tokens) == pictures.PICTURE_TOKENS
