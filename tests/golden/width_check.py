#!/usr/bin/env python3
"""Runs every mlens command's default text output on the demo models and the demo Ollama store (the
command lines of golden.py, the inference commands it leaves out, and each command's --help) at
80 and 120 terminal columns ($COLUMNS), and fails on any standard-output line wider than that:
display width, East Asian wide characters counting two. A line that is one unbreakable token (no
space after its indentation) is the one exception.

usage: width_check.py MLENS DEMO_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata

import golden

kWidths = (80, 120)


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
            ["memory", golden.F32]]


def help_commands(mlens, work):
    run = subprocess.run([mlens, "--help"], capture_output=True, text=True, cwd=work, timeout=golden.kTimeoutSeconds)
    names, listing = [], False
    for line in run.stdout.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            listing = True
            continue
        if listing and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif listing and line.strip() and not line.startswith(" "):
            listing = False
    return [["--help"]] + [[name, "--help"] for name in names]


def too_wide(text, width):
    out = []
    for line in text.splitlines():
        if display_width(line) > width and " " in line.strip(" "):
            out.append(line)
    return out


def main():
    mlens, demo = (os.path.abspath(a) for a in sys.argv[1:3])
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "imatrix")
    work = tempfile.mkdtemp(prefix="mlens-width-")
    try:
        golden.prepare(work, demo, fixtures)
        cases = golden.commands(golden.first_tensor_blob(mlens, work)) + inference_commands() + help_commands(mlens, work)
        cases += [args for args in golden.writing_commands(False) if "--dry-run" in args]
        failures = 0
        for width in kWidths:
            env = dict(os.environ, COLUMNS=str(width))
            for args in cases:
                run = subprocess.run([mlens, *args], capture_output=True, cwd=work, env=env, timeout=120)
                wide = too_wide(run.stdout.decode("utf-8", errors="replace"), width)
                if wide:
                    failures += 1
                    print(f"COLUMNS={width} mlens {' '.join(args)}: {len(wide)} lines wider than {width}")
                    for line in wide[:3]:
                        print(f"  {display_width(line)}: {line}")
        print(f"{len(cases) * len(kWidths)} outputs checked, {failures} with lines wider than the terminal")
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
