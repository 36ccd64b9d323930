"""Starting the app on a damaged database: a clear message, nothing changed, no traceback."""

from __future__ import annotations

import gui.app


def test_a_corrupt_database_is_reported_and_left_untouched(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    database = data / "tripane.db"
    database.write_bytes(b"this is not a database, it is a shopping list\n" * 100)
    before = database.read_bytes()
    shown = []
    monkeypatch.setattr(gui.app.QMessageBox, "critical", lambda parent, title, text: shown.append((title, text)))

    code = gui.app.main(["--data-dir", str(data), "--settings", str(tmp_path / "settings.ini")])

    assert code == 2
    assert shown and shown[0][0] == "Tripane cannot start"
    assert "not a Tripane database" in shown[0][1] or "SQLite" in shown[0][1]
    assert database.read_bytes() == before
