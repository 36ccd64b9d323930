"""Working memory (the three session files) and long-term memory (beyond one session).

Long-term memory imports NumPy and the index; nothing here imports them, so that opening the
window or the CLI does not pay for them before memory is used.
"""

# Below this a hybrid hit is noise: weak meaning and no keyword (what the tool, the CLI and the
# window's search apply; the library's search takes any threshold).
MIN_SCORE = 0.25
