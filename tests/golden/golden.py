#!/usr/bin/env python3
"""Runs every mlens command, as text and as --json, on the demo models and the demo Ollama store, and
compares each standard output and exit status with its record in tests/golden/records.

usage: golden.py MLENS DEMO_DIR RECORDS_DIR [--record]
With --record the records are rewritten instead (tests/golden/record.sh does that for a build/).

The commands run in a scratch folder that holds `demo` (a link to DEMO_DIR), `store` (a copy of the
demo store with every file dated kStoreTime, so the MODIFIED column is the same on every machine)
and the imatrix fixtures, and they name their inputs relative to it; the absolute paths of the
scratch folder and of DEMO_DIR that an output still shows are written as <work> and <demo>.

Text output is recorded at 80 columns ($COLUMNS), so the records show how it fits a terminal; a few
(piped-*) are recorded without $COLUMNS, as a pipe gets them: at their natural width, names whole.

Left out, because their output depends on the machine or the clock: `run` (tokens/s), `kld`
(seconds), `memory` (llama.cpp's buffers depend on the CPU's repacking), and `ab`, `layers` and
`layer-divergence` (activations from llama.cpp's CPU kernels differ in their last digits between
instruction sets); `--version` names the git revision."""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

kStoreTime = 1735689600  # 2025-01-01 00:00 UTC
kTimeoutSeconds = 60

F32, Q8, Q4 = "demo/tiny-llama-f32.gguf", "demo/tiny-llama-q8_0.gguf", "demo/tiny-llama-q4_0.gguf"
GEMMA3, QWEN25VL = "demo/ollama-gemma3.gguf", "demo/ollama-qwen25vl.gguf"
STORE = "store"
STORE_MODELS = ["tiny-llama:q4_0", "tiny-mlx:mixed", "tiny-moe-legacy:per-expert", "tiny-moe-legacy:switch-mlp",
                "tiny-moe-shared:int4", "tiny-moe:int4"]
IMATRIX_GGUF, IMATRIX_DAT = "imatrix/tiny-llama-f32.imatrix.gguf", "imatrix/tiny-llama-f32.imatrix.dat"
TRUNCATED = "truncated.gguf"


def commands(safetensors_blob):
    """Every command line (without `mlens`), each run as text and with --json."""
    out = [["check", STORE], ["store", STORE], ["store", STORE, "tiny-moe:int4", "--verify"],
           ["verify", "tiny-mlx:mixed", "--store", STORE]]
    for model in STORE_MODELS:
        out += [["show", model, "--store", STORE, "--tensors"], ["show", model, "--store", STORE]]
    for path in (F32, Q8, Q4, GEMMA3, QWEN25VL, safetensors_blob):
        out += [["info", path], ["kv", path], ["tensors", path], ["tensors", path, "--by-layer"], ["dump", path],
                ["check", path], ["compat", path], ["fsck", path], ["recipe", path], ["loads", path]]
    out += [[command, TRUNCATED] for command in ("info", "kv", "tensors", "dump", "check", "fsck")]
    out += [["kv", GEMMA3, "--full"], ["dump", GEMMA3, "--full"],
            ["stats", Q4, "blk.0.attn_q.weight"], ["stats", F32, "output_norm.weight"],
            ["hist", Q4, "blk.0.attn_q.weight", "--bins", "8"],
            ["compare", F32, Q4], ["compare", F32, Q8],
            ["requant", F32, "blk.0.attn_q.weight", "--types", "Q8_0,Q4_K,IQ2_XXS"],
            ["requant", Q4, "blk.0.attn_q.weight"],
            ["requant", Q4, "blk.0.attn_q.weight", "--reference", F32, "--imatrix", IMATRIX_GGUF],
            ["imatrix", IMATRIX_GGUF], ["imatrix", IMATRIX_DAT, "--tensor", "blk.0.attn_q.weight"],
            ["diff", F32, Q4, "--numeric"], ["diff", F32, GEMMA3],
            ["tokenize", F32, "Hello world"],
            ["template", QWEN25VL], ["template", GEMMA3], ["template", STORE + "/tiny-llama:q4_0", "--against", QWEN25VL]]
    return out


def piped_commands():
    """Commands whose text is also recorded with $COLUMNS unset: tables of long names, not fitted to a width."""
    return [["kv", GEMMA3], ["tensors", STORE + "/tiny-mlx:mixed"], ["show", "tiny-mlx:mixed", "--store", STORE, "--tensors"],
            ["diff", F32, Q4, "--numeric"]]


def writing_commands(json):
    """Commands that write files: each run once, into a folder of its own that does not exist yet."""
    tag = "-json" if json else ""
    return [["export-upstream", GEMMA3, f"out{tag}/gemma3.gguf", "--mmproj", f"out{tag}/mmproj.gguf"],
            ["export-upstream", QWEN25VL, f"out{tag}/qwen25vl.gguf"],
            ["export", "tiny-llama:q4_0", "--store", STORE, "--dry-run"],
            ["export", "tiny-llama:q4_0", f"out{tag}/bundle", "--store", STORE],
            ["export", "tiny-mlx:mixed", f"out{tag}/hf", "--store", STORE, "--dtype", "bf16"],
            ["export", "tiny-moe:int4", f"out{tag}/mlx", "--store", STORE, "--format", "mlx"],
            ["edit", F32, "--dry-run", "--set", "general.name=x", "--rename", "general.architecture", "general.arch"],
            ["edit", F32, "-o", f"out{tag}/edited.gguf", "--set", "tokenizer.ggml.eos_token_id=3", "--set",
             "tokenizer.chat_template={{ messages }}", "--rename", "general.name", "general.title"]]


def prepare(work, demo, fixtures):
    os.symlink(demo, os.path.join(work, "demo"))
    shutil.copytree(os.path.join(demo, "ollama-store"), os.path.join(work, STORE), symlinks=True)
    for root, dirs, files in os.walk(os.path.join(work, STORE), topdown=False):
        for name in files + dirs:
            os.utime(os.path.join(root, name), (kStoreTime, kStoreTime), follow_symlinks=False)
    os.utime(os.path.join(work, STORE), (kStoreTime, kStoreTime))
    shutil.copytree(fixtures, os.path.join(work, "imatrix"))
    os.makedirs(os.path.join(work, "out"))
    os.makedirs(os.path.join(work, "out-json"))
    with open(os.path.join(demo, "tiny-llama-f32.gguf"), "rb") as src, open(os.path.join(work, TRUNCATED), "wb") as dst:
        dst.write(src.read(700))


def first_tensor_blob(mlens, work):
    run = subprocess.run([mlens, "show", "tiny-mlx:mixed", "--store", STORE, "--json"], capture_output=True, text=True,
                         cwd=work, timeout=kTimeoutSeconds)
    layers = json.loads(run.stdout)["layers"]
    return os.path.join(STORE, next(layer["blob"] for layer in layers if layer["kind"] == "tensor"))


def record_name(args, used):
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(os.path.basename(a) if "/" in a else a for a in args)).strip("_")
    name = name[:120]
    candidate, n = name, 2
    while candidate in used:
        candidate, n = f"{name}-{n}", n + 1
    used.add(candidate)
    return candidate + ".txt"


def run_case(mlens, work, demo, args, piped=False):
    # Text output fits $COLUMNS: the records are made at 80 columns wherever they run, the piped ones
    # without a width.
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    if not piped:
        env["COLUMNS"] = "80"
    run = subprocess.run([mlens, *args], capture_output=True, cwd=work, timeout=kTimeoutSeconds, env=env)
    text = run.stdout.decode("utf-8", errors="backslashreplace")
    names = {(os.path.realpath(work), "<work>"), (work, "<work>"), (os.path.realpath(demo), "<demo>"), (demo, "<demo>"),
             (mlens, "mlens")}
    for path, token in sorted(names, key=lambda p: -len(p[0])):
        text = text.replace(path, token)
    command = f"env -u COLUMNS mlens {' '.join(args)}" if piped else f"mlens {' '.join(args)}"
    return f"$ {command}\nexit {run.returncode}\n{text}"


def main():
    mlens, demo, records = (os.path.abspath(a) for a in sys.argv[1:4])
    record = "--record" in sys.argv[4:]
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "imatrix")
    work = tempfile.mkdtemp(prefix="mlens-golden-")
    # A cache database of its own: the suite's other tests fill and clear the user's at the same
    # time, and a cached answer must equal a fresh one, so the records are those of an empty cache.
    os.environ["XDG_CACHE_HOME"] = os.path.join(work, "cache")
    try:
        prepare(work, demo, fixtures)
        cases = []
        for args in commands(first_tensor_blob(mlens, work)):
            cases += [(args, False), (args + ["--json"], False)]
        cases += [(args, False) for args in writing_commands(False) + [args + ["--json"] for args in writing_commands(True)]]
        cases.append((["--help"], False))
        cases += [(args, True) for args in piped_commands()]
        used, expected_files, failures = set(), set(), []
        if record:
            shutil.rmtree(records, ignore_errors=True)
            os.makedirs(records)
        for args, piped in cases:
            name = record_name(["piped", *args] if piped else args, used)
            expected_files.add(name)
            actual = run_case(mlens, work, demo, args, piped)
            path = os.path.join(records, name)
            if record:
                with open(path, "w", encoding="utf-8", newline="\n") as f:
                    f.write(actual)
                continue
            try:
                with open(path, encoding="utf-8", newline="\n") as f:
                    expected = f.read()
            except FileNotFoundError:
                expected = ""
            if actual != expected:
                failures.append(name)
                sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                           "records/" + name, "mlens " + " ".join(args)))
        stale = sorted(set(os.listdir(records)) - expected_files) if os.path.isdir(records) else []
        for name in stale:
            failures.append(name)
            print(f"records/{name}: no command writes this record any more")
        if record:
            print(f"{len(cases)} records written to {records}")
            return 0
        print(f"{len(cases)} outputs compared, {len(failures)} differ")
        if failures:
            print("If the new outputs are right, re-record them: bash tests/golden/record.sh [BUILD_DIR]")
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
