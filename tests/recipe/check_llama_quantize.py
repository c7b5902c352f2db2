#!/usr/bin/env python3
"""The printed recipe reproduces llama-quantize's mixes.

usage: check_llama_quantize.py MLENS LLAMA_QUANTIZE F32_GGUF [--imatrix LLAMA_IMATRIX] [MIX...]

For each mix (default Q4_K_M Q5_K_S Q3_K_L, and IQ4_XS made with an importance matrix when
llama-imatrix is given), quantizes the F32 model with llama-quantize, reads the result's recipe
with `mlens recipe --json`, runs the recipe's command on the F32 model again (with the same
importance matrix where the recipe asks for one), and checks with `mlens tensors --json` that
every tensor of the two files has the same type. The importance matrix is computed by
llama-imatrix on the F32 model over a fixed text written here. Prints one line per mix; exits 1
when any type differs or a step fails."""
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


def importance_matrix(llama_imatrix, f32, work):
    words = ("the model file tensor layer weight value quantize block scale expert health check recipe "
             "type bits row column offset").split()
    text = " ".join(words[(i * 7 + i // 3) % len(words)] for i in range(3000))
    calibration, out = os.path.join(work, "calibration.txt"), os.path.join(work, "model.imatrix")
    with open(calibration, "w") as f:
        f.write(text)
    run([llama_imatrix, "-m", f32, "-f", calibration, "-o", out, "-c", "64", "--chunks", "8", "-t", "2"])
    return out


def main():
    argv = sys.argv[1:]
    llama_imatrix = None
    if "--imatrix" in argv:
        at = argv.index("--imatrix")
        llama_imatrix = argv[at + 1]
        del argv[at:at + 2]
    mlens, quantize, f32 = argv[:3]
    mixes = argv[3:] or ["Q4_K_M", "Q5_K_S", "Q3_K_L"] + (["IQ4_XS+imatrix"] if llama_imatrix else [])
    work = tempfile.mkdtemp()
    imatrix = importance_matrix(llama_imatrix, f32, work) if llama_imatrix else None
    failures = 0
    for name in mixes:
        mix, with_imatrix = name.split("+")[0], name.endswith("+imatrix")
        original = os.path.join(work, f"{mix}.gguf")
        again = os.path.join(work, f"{mix}-recipe.gguf")
        run([quantize] + (["--imatrix", imatrix] if with_imatrix else []) + [f32, original, mix])
        recipe = json.loads(run([mlens, "recipe", original, "--json"]))
        if recipe["imatrix"] != with_imatrix:
            raise RuntimeError(f"{name}: the recipe says imatrix={recipe['imatrix']}")
        # The command names its input, output and importance matrix MODEL-F32.gguf, OUT.gguf, IMATRIX.
        named = {"MODEL-F32.gguf": f32, "OUT.gguf": again, "IMATRIX": imatrix}
        args = [named.get(a, a) for a in shlex.split(recipe["command"])]
        run([quantize] + args[1:])
        want, got = types(mlens, original), types(mlens, again)
        differ = sorted(n for n in want if got.get(n) != want[n]) + sorted(n for n in got if n not in want)
        kinds = sorted(set(want.values()))
        print(("FAIL " if differ else "ok   ") + f"{name}: {len(want)} tensors of {', '.join(kinds)}; "
              f"base {recipe['base']}, {len(recipe['rules'])} rules; "
              + (f"{len(differ)} differ: " + ", ".join(f"{n} {want.get(n)}->{got.get(n)}" for n in differ[:5]) if differ
                 else "every type equal"))
        failures += bool(differ)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
