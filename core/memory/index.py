"""The search index over the memory files: FTS5 for keywords, vectors for meaning.

`memory/index.sqlite` is derived data: built from the Markdown files, updated file by file when
one changes (size, mtime, then content hash), and rebuilt from scratch if it is damaged.

Vectors: a chunk's vector is the normalised mean of its sentences' vectors; each sentence is
embedded once and cached by hash, so editing a file re-embeds only the sentences that changed.
They are searched with sqlite-vec when this Python can load it, and otherwise with an exact
in-memory scan (NumPy) — a fallback that is announced (`notice`), never silent.

Hybrid search (seed 002 §2.2): the union of vector top-n and BM25 top-n, each candidate scored
0.7 × similarity + 0.3 × keyword, keyword = 1 / (1 + BM25 rank). Candidates found only by
keywords get their real similarity (their vectors are at hand), so an exact identifier that
vectors rank low still surfaces.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from core.memory.chunking import Chunk, chunk_markdown
from core.memory.embedding import Embedder, sentences, similarity
from core.search_marks import without_marks
from core.store import as_disk_full, connect_index
from core.text import CJK_CHAR, CJK_RUN, cjk_pairs

log = logging.getLogger(__name__)

VECTOR_WEIGHT, KEYWORD_WEIGHT = 0.7, 0.3
# A query word found in more chunks than this is left out of the keyword search when rarer words
# remain: FTS5 scores every match before it sorts, so one common word costs ~12 ms at 100,000
# chunks, while its BM25 weight (low IDF) barely moves the ranking. Meaning covers it (0.7).
COMMON_TERM_DOCS = 2000
# sqlite-vec 0.1.9 scans vectors one by one: 74 ms a search at 100,000 chunks, against 11 ms for
# NumPy's product over the same vectors held in memory (benchmarks/memory.py). Under "auto", large
# indexes take the in-memory scan; it costs 1.5 KB of RAM a chunk and one load (0.6 s at 100,000).
AUTO_EXACT_ABOVE = 20_000
# Memory files are notes. A bigger file (a log pasted whole) or a binary one named .md would cost
# minutes of embedding for nothing a search can use: skipped, and said so.
MAX_FILE_BYTES = 2_000_000
SCHEMA_VERSION = "2"
# How the keyword index holds text (searchable()); another form is rebuilt from the chunks, without
# embedding anything again. "2": Chinese and Japanese characters each a token.
FTS_FORM = "3"
EMBED_BATCH = 32
# The sentence cache keeps the vectors of sentences no chunk holds any more (an edited note's old
# wording, a deleted file's): dropped once it holds more than twice what the chunks need, and at
# least this many, so that a small memory is not read through at every edit.
CACHE_PRUNE_AT = 5_000
_WORD = re.compile(r"[\w]+(?:[-.:/][\w]+)*", re.UNICODE)
# Chinese and Japanese write words without spaces: FTS5's tokenizer takes a whole clause for one
# token, and no word within it is found ("解析器" in "导入CSV文件时解析器崩溃" was not, nor "CSV"). The
# index holds each such character as a token of its own, and a query's run of them is looked for
# as its overlapping pairs, each a phrase: the way search engines take these scripts in.
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its "
    "me my no not of on or our so that the their them then there these they this to was we were what when "
    "where which who why will with would you your".split())


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the memory folder, POSIX
    absolute: Path
    layer: str  # daily | memory | skill | other
    day: str  # YYYY-MM-DD for daily logs, else ""


@dataclass(frozen=True)
class Hit:
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    score: float
    vector: float  # calibrated similarity, 0–1
    keyword: float  # 1 / (1 + BM25 rank), 0 when not among the keyword candidates
    layer: str
    day: str


@dataclass(frozen=True)
class SyncReport:
    files_indexed: int
    files_removed: int
    chunks_added: int
    sentences_embedded: int
    skipped: tuple[str, ...] = ()  # files not indexed, each with the reason

class IndexError_(RuntimeError):
    """The index cannot be used (the message says why); the memory files are untouched."""


class MemoryIndex:
    def __init__(self, path: Path, embedder: Embedder | None, *, vectors: str = "auto"):
        if vectors not in ("auto", "sqlite-vec", "exact"):
            raise ValueError(f"vectors must be auto, sqlite-vec or exact, not {vectors!r}")
        self.path = path
        self.embedder = embedder
        self._lock = threading.RLock()
        self._matrix: tuple[np.ndarray, np.ndarray] | None = None  # (ids, vectors) for the exact scan
        self._doc_counts: dict[str, int] = {}  # query word -> chunks containing it, until the index changes
        self._skipped: dict[str, tuple[int, int] | None] = {}  # files skipped, as they were when skipped
        self._open(rebuild_on_damage=True)
        self.backend_reason = ""
        self.backend, self.notice = self._choose_backend(vectors)
        if self.backend == "sqlite-vec" and self._meta("vec_dirty"):
            self._rebuild_vec_table()
        if self.notice:
            log.warning("memory search: %s", self.notice)

    # --- opening ---------------------------------------------------------------------------------

    def _open(self, rebuild_on_damage: bool) -> None:
        self.conn, self._errors, self._vec_problem = connect_index(self.path)
        try:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self._create_schema()
        except self._errors as exc:
            self.conn.close()
            if full := as_disk_full(exc, self.path.parent):  # not damage: the file is as good as it was
                raise full from exc
            if not rebuild_on_damage:
                raise IndexError_(f"the memory index {self.path} cannot be created: {exc}") from exc
            # Derived data: set the damaged file aside and start again from the Markdown files.
            log.warning("memory index %s is damaged (%s); rebuilding it", self.path, exc)
            self.path.replace(self.path.with_suffix(".damaged"))
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self._open(rebuild_on_damage=False)

    def _create_schema(self) -> None:
        c = self.conn
        c.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        if self._meta("schema") not in (None, SCHEMA_VERSION):
            self._drop_all()
        c.execute("CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, layer TEXT, day TEXT, "
                  "mtime_ns INTEGER, size INTEGER, sha256 TEXT)")
        c.execute("CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, path TEXT, layer TEXT, day TEXT, "
                  "heading TEXT, start_line INTEGER, end_line INTEGER, text TEXT)")
        c.execute("CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path)")
        # '_' joins words, so parse_config and ERR_4821 stay whole tokens for exact lookups; the Porter
        # stemmer lets "offsets" find "offset" and "parsing" find "parse".
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(heading, text, content='chunks', "
                  "content_rowid='id', tokenize=\"porter unicode61 remove_diacritics 2 tokenchars '_'\")")
        if self._meta("fts_form") != FTS_FORM:
            self._index_keywords_again()
        c.execute("CREATE TABLE IF NOT EXISTS vectors (id INTEGER PRIMARY KEY, vector BLOB)")
        c.execute("CREATE TABLE IF NOT EXISTS sentence_cache (hash TEXT PRIMARY KEY, vector BLOB)")
        self._set_meta("schema", SCHEMA_VERSION)
        name = self.embedder.name if self.embedder else ""
        if self._meta("embedder") != name:  # vectors of another model are meaningless next to these
            c.execute("DELETE FROM vectors")
            c.execute("DELETE FROM sentence_cache")
            self._drop_vec_table()
            c.execute("UPDATE files SET sha256 = ''")  # forces re-embedding at the next sync
            self._set_meta("embedder", name)
        c.execute("SELECT count(*) FROM chunks").fetchone()  # reads a page: a damaged file fails here

    def _index_keywords_again(self) -> None:
        """The keyword index anew from the chunks, in today's searchable() form (an index made by
        an older Tripane held another); the vectors stay as they are."""
        c = self.conn
        c.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')")  # (the chunks stay)
        with_cjk: set[str] = set()
        for chunk_id, path, heading, text in c.execute("SELECT id, path, heading, text FROM chunks").fetchall():
            c.execute("INSERT INTO chunks_fts (rowid, heading, text) VALUES (?, ?, ?)",
                      (chunk_id, searchable(heading), searchable(text)))
            if CJK_RUN.search(text):
                with_cjk.add(path)
        # Cut into chunks as one word before (core/memory/chunking.py): cut again at the next sync,
        # their unchanged sentences' vectors taken from the cache.
        c.executemany("UPDATE files SET sha256 = '' WHERE path = ?", [(path,) for path in with_cjk])
        self._set_meta("fts_form", FTS_FORM)

    def _drop_all(self) -> None:
        self._drop_vec_table()
        for table in ("chunks_fts", "chunks", "files", "vectors", "sentence_cache"):
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")

    def _drop_vec_table(self) -> None:
        try:
            self.conn.execute("DROP TABLE IF EXISTS vec_chunks")
        except self._errors:  # sqlite-vec not loaded in this run: its table cannot even be dropped
            self._set_meta("vec_dirty", "1")
        self.conn.execute("DELETE FROM meta WHERE key = 'dim'")

    def _choose_backend(self, wanted: str) -> tuple[str, str | None]:
        if self.embedder is None:
            return "none", "no embedding model, so memory search uses keywords only (BM25)"
        if wanted == "exact":
            self.backend_reason = "chosen in the memory settings"
            return "exact", None
        if self._vec_problem is None:
            chunks = int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            if wanted == "auto" and chunks > AUTO_EXACT_ABOVE:
                self.backend_reason = (f"{chunks:,} chunks: faster than sqlite-vec at this size, "
                                       f"using about {chunks * 1.5 / 1000:.0f} MB of memory")
                log.info("memory search: exact in-memory vector scan (%s)", self.backend_reason)
                return "exact", None
            return "sqlite-vec", None
        reason = f"{self._vec_problem}; vector search runs as an exact in-memory scan instead"
        if wanted == "sqlite-vec":
            raise IndexError_(reason)
        return "exact", reason

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # --- keeping up with the files ---------------------------------------------------------------

    def sync(self, files: Iterable[SourceFile]) -> SyncReport:
        """Index what changed since the last sync; drop what was deleted."""
        with self._lock:
            files = list(files)
            known = {row[0]: row[1:] for row in self.conn.execute("SELECT path, mtime_ns, size, sha256 FROM files")}
            indexed = chunks_added = embedded = 0
            skipped: list[str] = []
            for source in files:
                stat = None
                try:
                    stat = source.absolute.stat()
                    old = known.get(source.path)
                    if old and old[0] == stat.st_mtime_ns and old[1] == stat.st_size and old[2]:
                        continue
                    if stat.st_size > MAX_FILE_BYTES:
                        raise ValueError(f"{stat.st_size / 1e6:.1f} MB, over the {MAX_FILE_BYTES / 1e6:.0f} MB "
                                         "a memory file may have")
                    raw = source.absolute.read_bytes()
                    if b"\x00" in raw[:8192]:
                        raise ValueError("a binary file, not Markdown")
                except (OSError, ValueError) as exc:
                    seen = (stat.st_mtime_ns, stat.st_size) if stat is not None else None
                    if self._skipped.get(source.path) != seen:  # once per version of the file, not every search
                        log.warning("memory index: %s skipped: %s", source.absolute, exc)
                        self._skipped[source.path] = seen
                    skipped.append(f"{source.path}: {exc}")
                    if source.path in known:  # what it held before is no longer what the file says
                        self._remove_file(source.path)
                    continue
                digest = hashlib.sha256(raw).hexdigest()
                if old and old[2] == digest:
                    self.conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?",
                                      (stat.st_mtime_ns, stat.st_size, source.path))
                    continue
                added, new_sentences = self._index_file(source, raw.decode("utf-8", errors="replace"))
                self.conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                                  (source.path, source.layer, source.day, stat.st_mtime_ns, stat.st_size, digest))
                indexed += 1
                chunks_added += added
                embedded += new_sentences
            present = {f.path for f in files}
            gone = [path for path in known if path not in present]
            for path in gone:
                self._remove_file(path)
            if gone or indexed:
                self._matrix = None
                self._doc_counts.clear()
                self._prune_sentence_cache()
            return SyncReport(indexed, len(gone), chunks_added, embedded, tuple(skipped))

    def _prune_sentence_cache(self) -> None:
        c = self.conn
        held = c.execute("SELECT count(*) FROM sentence_cache").fetchone()[0]
        if held <= max(CACHE_PRUNE_AT, 2 * int(self._meta("cache_needed") or 0)):
            return
        needed = {hashlib.sha1(s.encode("utf-8")).hexdigest()
                  for (text,) in c.execute("SELECT text FROM chunks") for s in sentences(text)}
        c.execute("BEGIN")
        try:
            c.execute("CREATE TEMP TABLE IF NOT EXISTS needed (hash TEXT PRIMARY KEY)")
            c.execute("DELETE FROM needed")
            c.executemany("INSERT OR IGNORE INTO needed VALUES (?)", [(h,) for h in needed])
            c.execute("DELETE FROM sentence_cache WHERE hash NOT IN (SELECT hash FROM needed)")
            c.execute("DELETE FROM needed")
            self._set_meta("cache_needed", str(len(needed)))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        log.info("memory index: %d unused sentence vectors dropped", held - len(needed))

    def add_chunks(self, source: SourceFile, chunks: list[Chunk]) -> int:
        """Index chunks that do not come from a file on disk (the benchmark's generated notes)."""
        with self._lock:
            _, embedded = self._insert(source, chunks)
            self._matrix = None
            self._doc_counts.clear()
            return embedded

    def _index_file(self, source: SourceFile, text: str) -> tuple[int, int]:
        self._remove_file(source.path)
        chunks = chunk_markdown(text, items=source.layer == "memory")
        return self._insert(source, chunks)

    def _insert(self, source: SourceFile, chunks: list[Chunk]) -> tuple[int, int]:
        vectors, embedded = self._chunk_vectors([c.text for c in chunks]) if self.embedder else (None, 0)
        c = self.conn
        c.execute("BEGIN")
        try:
            in_vec_table = vectors is not None and bool(chunks) and self.backend == "sqlite-vec"
            if in_vec_table:
                self._ensure_vec_table(vectors.shape[1])
            elif vectors is not None and chunks and self._meta("dim"):
                self._set_meta("vec_dirty", "1")  # the sqlite-vec table is rebuilt when it next loads
            for index, chunk in enumerate(chunks):
                chunk_id = c.execute(
                    "INSERT INTO chunks (path, layer, day, heading, start_line, end_line, text) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (source.path, source.layer, source.day, chunk.heading, chunk.start_line, chunk.end_line,
                     chunk.text)).fetchone()[0]
                c.execute("INSERT INTO chunks_fts (rowid, heading, text) VALUES (?, ?, ?)",
                          (chunk_id, searchable(chunk.heading), searchable(chunk.text)))
                if vectors is not None:
                    blob = vectors[index].tobytes()
                    c.execute("INSERT INTO vectors (id, vector) VALUES (?, ?)", (chunk_id, blob))
                    if in_vec_table:
                        c.execute("INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)", (chunk_id, blob))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return len(chunks), embedded

    def _ensure_vec_table(self, dim: int) -> None:
        if self._meta("dim") == str(dim):
            return
        self.conn.execute("DROP TABLE IF EXISTS vec_chunks")
        self.conn.execute(f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{dim}] distance_metric=cosine)")
        self._set_meta("dim", str(dim))

    def _rebuild_vec_table(self) -> None:
        """Bring the sqlite-vec table up to date after runs that could not load it."""
        self.conn.execute("DELETE FROM meta WHERE key = 'dim'")
        rows = self.conn.execute("SELECT id, vector FROM vectors").fetchall()
        self.conn.execute("BEGIN")
        self.conn.execute("DROP TABLE IF EXISTS vec_chunks")
        for chunk_id, blob in rows:
            self._ensure_vec_table(len(blob) // 4)
            self.conn.execute("INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)", (chunk_id, blob))
        self.conn.execute("DELETE FROM meta WHERE key = 'vec_dirty'")
        self.conn.execute("COMMIT")

    def _remove_file(self, path: str) -> None:
        c = self.conn
        rows = c.execute("SELECT id, heading, text FROM chunks WHERE path = ?", (path,)).fetchall()
        has_vec_table = bool(rows) and self._meta("dim") is not None
        c.execute("BEGIN")
        try:
            if has_vec_table and self.backend != "sqlite-vec":
                self._set_meta("vec_dirty", "1")  # its rows cannot be deleted without sqlite-vec loaded
            for chunk_id, heading, text in rows:
                # External-content FTS5: a delete must repeat the indexed values.
                c.execute("INSERT INTO chunks_fts (chunks_fts, rowid, heading, text) VALUES ('delete', ?, ?, ?)",
                          (chunk_id, searchable(heading), searchable(text)))
                c.execute("DELETE FROM vectors WHERE id = ?", (chunk_id,))
                if has_vec_table and self.backend == "sqlite-vec":
                    c.execute("DELETE FROM vec_chunks WHERE rowid = ?", (chunk_id,))
            c.execute("DELETE FROM chunks WHERE path = ?", (path,))
            c.execute("DELETE FROM files WHERE path = ?", (path,))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def text_vectors(self, texts: list[str]) -> np.ndarray:
        """Vectors for texts that are not chunks (skill triggers), through the same sentence cache."""
        with self._lock:
            return self._chunk_vectors(texts)[0]

    def _chunk_vectors(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """One vector per text: the mean of its sentences' (cached) vectors, normalised."""
        assert self.embedder is not None
        pieces = [sentences(text) for text in texts]
        hashes = [[hashlib.sha1(s.encode("utf-8")).hexdigest() for s in p] for p in pieces]
        cache = self._cached({h for hs in hashes for h in hs})
        missing = {h: s for p, hs in zip(pieces, hashes) for s, h in zip(p, hs) if h not in cache}
        if missing:
            order = list(missing)
            for start in range(0, len(order), EMBED_BATCH):
                batch = order[start:start + EMBED_BATCH]
                vectors = self.embedder.passages([missing[h] for h in batch])
                for h, vector in zip(batch, vectors):
                    cache[h] = vector
                self.conn.executemany("INSERT OR REPLACE INTO sentence_cache (hash, vector) VALUES (?, ?)",
                                      [(h, cache[h].tobytes()) for h in batch])
        out = []
        for hs in hashes:
            mean = np.mean([cache[h] for h in hs], axis=0)
            out.append((mean / (np.linalg.norm(mean) or 1)).astype(np.float32))
        return np.vstack(out) if out else np.zeros((0, 1), np.float32), len(missing)

    def _cached(self, wanted: set[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        keys = list(wanted)
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self.conn.execute(f"SELECT hash, vector FROM sentence_cache WHERE hash IN ({marks})",
                                               part):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    # --- searching -------------------------------------------------------------------------------

    def count(self) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def embed_query(self, query: str) -> np.ndarray | None:
        return self.embedder.query(query) if self.embedder else None

    def search(self, query: str, *, top_k: int = 8, candidates: int = 20, threshold: float = 0.0,
               half_life_days: float | None = None, mode: str = "hybrid", today: date | None = None,
               query_vector: np.ndarray | None = None) -> list[Hit]:
        """Best chunks for `query`. mode: hybrid | vector | keyword (the last two for comparison)."""
        if mode not in ("hybrid", "vector", "keyword"):
            raise ValueError(f"mode must be hybrid, vector or keyword, not {mode!r}")
        use_vectors = mode != "keyword" and self.embedder is not None
        if use_vectors and query_vector is None:
            query_vector = self.embed_query(query)
        with self._lock:
            n = max(candidates, top_k)
            vector_hits = self._vector_candidates(query_vector, n) if use_vectors else {}
            keyword_hits = self._keyword_candidates(query, n) if mode != "vector" else {}
            ids = set(vector_hits) | set(keyword_hits)
            if use_vectors:
                missing = [i for i in ids if i not in vector_hits]
                vector_hits.update(self._similarities(query_vector, missing))
            rows = self._rows(ids)
        weights = (VECTOR_WEIGHT, KEYWORD_WEIGHT) if mode == "hybrid" and use_vectors else (
            (1.0, 0.0) if use_vectors else (0.0, 1.0))
        today = today or date.today()
        scored = []
        for chunk_id, (path, layer, day, heading, start, end, text) in rows.items():
            sim = similarity(self.embedder, vector_hits.get(chunk_id, 0.0)) if use_vectors else 0.0
            keyword = keyword_hits.get(chunk_id, 0.0)
            score = weights[0] * sim + weights[1] * keyword
            if half_life_days and layer == "daily" and day:  # MEMORY.md and skills never decay
                age = max(0, (today - date.fromisoformat(day)).days)
                score *= 0.5 ** (age / half_life_days)
            if score >= threshold:
                scored.append((-score, chunk_id, Hit(path, start, end, heading, text, round(score, 4), round(sim, 4),
                                                     round(keyword, 4), layer, day)))
        scored.sort(key=lambda item: item[:2])  # by exact score; rounding is for display only
        return [hit for _, _, hit in scored[:top_k]]

    def _vector_candidates(self, query_vector: np.ndarray, n: int) -> dict[int, float]:
        if self.backend == "sqlite-vec":
            if not self._meta("dim"):
                return {}
            rows = self.conn.execute("SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ?",
                                     (query_vector.astype(np.float32).tobytes(), n)).fetchall()
            return {int(rowid): 1.0 - float(distance) for rowid, distance in rows}
        ids, matrix = self._exact_matrix()
        if len(ids) == 0:
            return {}
        scores = matrix @ query_vector
        top = np.argpartition(-scores, min(n, len(ids) - 1))[:n]
        return {int(ids[i]): float(scores[i]) for i in top}

    def _exact_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        if self._matrix is None:
            rows = self.conn.execute("SELECT id, vector FROM vectors ORDER BY id").fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            matrix = (np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows]) if rows
                      else np.zeros((0, 1), np.float32))
            self._matrix = (ids, np.ascontiguousarray(matrix))
        return self._matrix

    def _similarities(self, query_vector: np.ndarray, ids: list[int]) -> dict[int, float]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"SELECT id, vector FROM vectors WHERE id IN ({marks})", ids).fetchall()
        return {int(i): float(np.frombuffer(blob, dtype=np.float32) @ query_vector) for i, blob in rows}

    def _keyword_candidates(self, query: str, n: int) -> dict[int, float]:
        terms = fts_terms(query)
        if not terms:
            return {}
        try:
            rare = [t for t in terms if self._doc_count(t) <= COMMON_TERM_DOCS]
            # Only common words: the chunks that have them all (a small set, and the best BM25 anyway).
            expression = " OR ".join(rare) if rare else " AND ".join(terms)
            rows = self.conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
                                     "ORDER BY bm25(chunks_fts, 2.0, 1.0) LIMIT ?", (expression, n)).fetchall()
        except self._errors as exc:  # an expression FTS5 cannot parse: no keyword hits, not a crash
            log.warning("memory keyword search failed for %r: %s", query, exc)
            return {}
        return {int(row[0]): 1.0 / (1 + rank) for rank, row in enumerate(rows)}

    def _doc_count(self, term: str) -> int:
        if term not in self._doc_counts:
            # Counting matches is cheap (no ranking), and the tokenizer stems the word as it indexed it.
            self._doc_counts[term] = int(self.conn.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (term,)).fetchone()[0])
        return self._doc_counts[term]

    def _rows(self, ids: set[int]) -> dict[int, tuple]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {row[0]: row[1:] for row in self.conn.execute(
            f"SELECT id, path, layer, day, heading, start_line, end_line, text FROM chunks WHERE id IN ({marks})",
            list(ids))}


def searchable(text: str) -> str:
    """`text` as the keyword index holds it: each Chinese or Japanese character a word of its own;
    without marks (FTS5's tokenizer cut "قرّب" at its shadda, and "קָם" at its vowel: a word
    written without them was not found) and each Arabic letter in one form (core/search_marks.py)."""
    text = without_marks(text)
    return CJK_CHAR.sub(lambda char: f" {char.group()} ", text) if CJK_RUN.search(text) else text


def fts_terms(query: str) -> list[str]:
    """The meaningful words of `query`, each quoted for FTS5 (so no input is a syntax error); a run
    of Chinese or Japanese characters, as its overlapping pairs (each a phrase of two)."""
    words: list[str] = []
    for word in _WORD.findall(without_marks(query)):
        if word.lower() in STOPWORDS or len(word) < 2:
            continue
        for part in _cjk_pairs(word):
            quoted = '"' + searchable(part).strip().replace('"', '""') + '"'
            if quoted not in words:
                words.append(quoted)
    return words[:16]


def _cjk_pairs(word: str) -> list[str]:
    """The word, or where it holds Chinese or Japanese, its other parts and its runs' pairs."""
    if not CJK_RUN.search(word):
        return [word]
    parts = [part for part in CJK_RUN.split(word) if len(part) >= 2]
    for run in CJK_RUN.findall(word):
        parts += cjk_pairs(run)
    return parts
