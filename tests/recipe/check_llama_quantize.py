#!/usr/bin/env python3
"""The printed recipe reproduces llama-quantize's files byte for byte.

usage: check_llama_quantize.py MLENS LLAMA_QUANTIZE F32_GGUF [--imatrix LLAMA_IMATRIX] [MIX...]

For each mix (default: every ftype llama-quantize's own usage text offers, aliases left out),
quantizes the F32 model with llama-quantize — again with an importance matrix when llama-quantize
refuses the mix without one —, reads the result's recipe with `mlens recipe --json`, runs the
recipe's command on the F32 model (with the same importance matrix where the recipe asks for one)
and compares the two files byte for byte. A mix llama-quantize itself cannot make of this model
(a type whose rows must be longer than the model's, without a fallback) is skipped with its
reason. Every file llama-quantize made has a command (F16, BF16 and F32 included): a recipe
without one fails. The importance matrix is
computed by llama-imatrix on the F32 model over a fixed text written here. Prints one line per mix;
exits 1 when a file differs or a step fails."""
import hashlib
import json
import re
import shlex
import subprocess
import sys
import tempfile
import os


def run(args, check=True):
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])}...: exit {r.returncode}: {r.stderr.strip()[-600:]}")
    return r.stdout if check else r


def offered_ftypes(quantize):
    """The ftype names of llama-quantize's usage text, one per ftype number (aliases left out)."""
    r = run([quantize], check=False)
    names, seen = [], set()
    for number, name, text in re.findall(r"^\s+(\d+)\s+or\s+(\w+)\s*:(.*)$", r.stdout + r.stderr, re.M):
        if "alias for" in text or number in seen:
            continue
        seen.add(number)
        names.append(name)
    if len(names) < 20:
        raise RuntimeError(f"llama-quantize's usage lists only {len(names)} ftypes: {names}")
    return names


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


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
    mixes = argv[3:] or offered_ftypes(quantize)
    work = tempfile.mkdtemp()
    imatrix = importance_matrix(llama_imatrix, f32, work) if llama_imatrix else None
    failures = 0
    for mix in mixes:
        original = os.path.join(work, f"{mix}.gguf")
        again = os.path.join(work, f"{mix}-recipe.gguf")
        made = run([quantize, f32, original, mix], check=False)
        with_imatrix = False
        if made.returncode != 0 and imatrix and "importance matrix" in made.stdout + made.stderr:
            made = run([quantize, "--imatrix", imatrix, f32, original, mix], check=False)
            with_imatrix = True
        if made.returncode != 0:
            said = [line for line in (made.stdout + made.stderr).splitlines() if "failed" in line or "error" in line.lower()]
            print(f"skip {mix}: llama-quantize itself refuses this model: {(said or ['exit ' + str(made.returncode)])[0].strip()}")
            continue
        recipe = json.loads(run([mlens, "recipe", original, "--json"]))
        want = types(mlens, original)
        kinds = sorted(set(want.values()))
        if not recipe.get("command"):
            print(f"FAIL {mix}: {len(want)} tensors of {', '.join(kinds)}; no command: {recipe.get('no_command')}")
            failures += 1
            continue
        if recipe["imatrix"] != with_imatrix:
            raise RuntimeError(f"{mix}: the recipe says imatrix={recipe['imatrix']}, llama-quantize needed {with_imatrix}")
        # The command names its input, output and importance matrix MODEL-F32.gguf, OUT.gguf, IMATRIX.
        named = {"MODEL-F32.gguf": f32, "OUT.gguf": again, "IMATRIX": imatrix}
        args = [named.get(a, a) for a in shlex.split(recipe["command"])]
        run([quantize] + args[1:])
        same = digest(original) == digest(again)
        got = types(mlens, again)
        differ = sorted(n for n in want if got.get(n) != want[n]) + sorted(n for n in got if n not in want)
        print(("ok   " if same else "FAIL ") + f"{mix}{' +imatrix' if with_imatrix else ''}: {len(want)} tensors of "
              f"{', '.join(kinds)}; ftype {recipe['base']}, {len(recipe['rules'])} rules; "
              + ("byte-identical" if same else
                 f"files differ; {len(differ)} types differ: " + ", ".join(f"{n} {want.get(n)}->{got.get(n)}" for n in differ[:5])))
        failures += not same
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
