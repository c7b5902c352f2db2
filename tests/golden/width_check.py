#!/usr/bin/env python3
"""Runs every mlens command's default text output on the demo models and the demo Ollama store at 80
and 120 terminal columns ($COLUMNS), and fails on any standard-output line wider than that: display
width, East Asian wide characters counting two. A line that is one unbreakable token (no space after
its indentation) is the one exception.

The commands are those `mlens --help` lists: each must be run by at least one case here (golden.py's
command lines, the inference and corpus commands it leaves out, the commands that write files, and
`cache`), else the check fails; each command's --help is checked too. Widest line per command is
printed for both widths.

usage: width_check.py MLENS DEMO_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata

import golden

kWidths = (80, 120)
kCorpus = "corpus.txt"
kTokenizerJson = "tokenizer.json"


def display_width(text):
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf") or ord(ch) < 32:
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def inference_commands():
    """The llama.cpp commands golden.py leaves out for their machine-dependent figures."""
    return [["run", golden.F32, "-p", "Hello", "-n", "4"], ["ab", golden.F32, golden.Q8, "-p", "Hello", "-n", "4"],
            ["layers", golden.F32, "-p", "Hello"], ["layer-divergence", golden.F32, golden.Q8, "-p", "Hello"],
            ["memory", golden.F32], ["ppl", golden.F32, "--text", kCorpus, "--ctx", "32"],
            ["kld", golden.F32, golden.Q8, "--text", kCorpus, "--ctx", "32"], ["cache"],
            ["tokenizer-parity", golden.Q8, kTokenizerJson, "--text", kCorpus]]


def listed_commands(mlens, work):
    """The subcommand names `mlens --help` lists."""
    run = subprocess.run([mlens, "--help"], capture_output=True, text=True, cwd=work, timeout=golden.kTimeoutSeconds,
                         env=dict(os.environ, COLUMNS="1000"))
    names, listing = [], False
    for line in run.stdout.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            listing = True
            continue
        if listing and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif listing and line.strip() and not line.startswith(" "):
            listing = False
    return names


def writing_commands(width):
    """golden.py's commands that write files, each width into its own folder."""
    cases = []
    for args in golden.writing_commands(False):
        cases.append([a.replace("out/", f"out{width}/") for a in args])
    return cases


def too_wide(text, width):
    return [line for line in text.splitlines() if display_width(line) > width and " " in line.strip(" ")]


def main():
    mlens, demo = (os.path.abspath(a) for a in sys.argv[1:3])
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "imatrix")
    work = tempfile.mkdtemp(prefix="mlens-width-")
    try:
        golden.prepare(work, demo, fixtures)
        with open(os.path.join(work, kCorpus), "w") as f:
            f.write("The quick brown fox jumps over the lazy dog. " * 40)
        with open(os.path.join(work, kTokenizerJson), "w") as f:
            json.dump({"model": {"type": "BPE", "vocab": {"T": 0, "h": 1, "e": 2, "Th": 3, "The": 4, "<s>": 5}, "merges": ["T h", "Th e"]},
                       "added_tokens": [{"id": 5, "content": "<s>", "special": True, "single_word": False, "lstrip": False,
                                         "rstrip": False, "normalized": False}],
                       "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}}, f)
        names = listed_commands(mlens, work)
        common = golden.commands(golden.first_tensor_blob(mlens, work)) + inference_commands()
        common += [["--help"]] + [[name, "--help"] for name in names]
        failures, widest = 0, {}
        for width in kWidths:
            os.makedirs(os.path.join(work, f"out{width}"), exist_ok=True)
            env = dict(os.environ, COLUMNS=str(width), XDG_CACHE_HOME=os.path.join(work, "cache"))
            cases = common + writing_commands(width)
            uncovered = sorted(set(names) - {args[0] for args in cases if args[-1] != "--help"})
            if uncovered:
                failures += 1
                print(f"no case runs: {' '.join(uncovered)}")
            for args in cases:
                run = subprocess.run([mlens, *args], capture_output=True, cwd=work, env=env, timeout=300)
                text = run.stdout.decode("utf-8", errors="replace")
                command = args[0] if args[-1] != "--help" else "--help"
                lines = text.splitlines() or [""]
                widest[(command, width)] = max(widest.get((command, width), 0), max(display_width(line) for line in lines))
                wide = too_wide(text, width)
                if wide:
                    failures += 1
                    print(f"COLUMNS={width} mlens {' '.join(args)}: {len(wide)} lines wider than {width}")
                    for line in wide[:3]:
                        print(f"  {display_width(line)}: {line}")
        for command in sorted({c for c, _ in widest}):
            print(f"widest {command}: " + ", ".join(f"{widest[(command, w)]} at {w}" for w in kWidths))
        print(f"{len(common) * len(kWidths)} outputs checked, {failures} failures")
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
