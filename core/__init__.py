"""Tripane's agent core: asyncio only, no Qt. Usable from the GUI, the CLI and tests."""

import os

__version__ = "0.1.0"

# NumPy's only work here is memory search's matrix-vector product, which memory bandwidth bounds, not
# cores. OpenBLAS's helper threads spin after each product and starve the embedding model's OpenMP
# threads on small machines: a query's embedding took 27 ms instead of 14 (benchmarks/memory.py, 2
# cores). Set before anything imports NumPy; a value the user set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
