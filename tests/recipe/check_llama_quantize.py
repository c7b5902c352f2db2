#!/usr/bin/env python3
"""The printed recipe reproduces llama-quantize's mixes.

usage: check_llama_quantize.py MLENS LLAMA_QUANTIZE F32_GGUF [MIX...]

For each mix (default Q4_K_M Q5_K_S Q3_K_L), quantizes the F32 model with llama-quantize, reads
the result's recipe with `mlens recipe --json`, runs the recipe's command on the F32 model again,
and checks with `mlens tensors --json` that every tensor of the two files has the same type.
Prints one line per mix; exits 1 when any type differs or a step fails."""
import json
import shlex
import subprocess
import sys
import tempfile
import os


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])}...: exit {r.returncode}: {r.stderr.strip()[-600:]}")
    return r.stdout


def types(mlens, path):
    return {t["name"]: t["type"] for t in json.loads(run([mlens, "tensors", path, "--json"]))}


def main():
    mlens, quantize, f32 = sys.argv[1:4]
    mixes = sys.argv[4:] or ["Q4_K_M", "Q5_K_S", "Q3_K_L"]
    work = tempfile.mkdtemp()
    failures = 0
    for mix in mixes:
        original = os.path.join(work, f"{mix}.gguf")
        again = os.path.join(work, f"{mix}-recipe.gguf")
        run([quantize, f32, original, mix])
        recipe = json.loads(run([mlens, "recipe", original, "--json"]))
        # The command names its input and output MODEL-F32.gguf and OUT.gguf.
        args = [f32 if a == "MODEL-F32.gguf" else again if a == "OUT.gguf" else a for a in shlex.split(recipe["command"])]
        run([quantize] + args[1:])
        want, got = types(mlens, original), types(mlens, again)
        differ = sorted(n for n in want if got.get(n) != want[n]) + sorted(n for n in got if n not in want)
        kinds = sorted(set(want.values()))
        print(("FAIL " if differ else "ok   ") + f"{mix}: {len(want)} tensors of {', '.join(kinds)}; "
              f"base {recipe['base']}, {len(recipe['rules'])} rules; "
              + (f"{len(differ)} differ: " + ", ".join(f"{n} {want.get(n)}->{got.get(n)}" for n in differ[:5]) if differ
                 else "every type equal"))
        failures += bool(differ)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
