"""The certificates this computer trusts are trusted: a company network's authority, installed in
the computer's store by its IT department, as the browser, curl and git trust it."""

from __future__ import annotations

import shutil

from tests.core.test_cli import finish, tripane, work_folder
from tests.core.test_llm_litellm import TLS
from tests.support.openai_server import ScriptedServer, Turn, positional, tool

# The test authority's OpenSSL subject hash (`openssl x509 -hash -noout -in cert.pem`): the name
# OpenSSL looks for it by in a directory of trusted certificates.
SUBJECT_HASH = "611bc766"


def test_a_certificate_authority_this_computer_trusts_is_trusted_by_a_run(tmp_path, monkeypatch):
    # Linux's store is a directory OpenSSL reads (/etc/ssl/certs); SSL_CERT_DIR names another one
    # for the test, as root alone may write there. Before, certifi's list was all a request
    # trusted: "its certificate is not trusted on this computer", of one the computer trusted.
    store = tmp_path / "certs"
    store.mkdir()
    shutil.copy(TLS[0], store / f"{SUBJECT_HASH}.0")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(store))
    done = positional([Turn(tool_calls=(tool("task_done", summary="Reached over TLS"),))])
    with ScriptedServer(done, tls=TLS) as server:
        code, out, err = finish(tripane("run", "Say hello", "--model", "openai/scripted", "--api-base", server.url,
                                        "--workdir", str(work_folder(tmp_path)), data_dir=tmp_path / "data",
                                        env={"OPENAI_API_KEY": "k"}))
    assert code == 0, err
    assert "not trusted" not in out + err
    assert "ended: done — Reached over TLS" in out
    assert len(server.requests) == 1
