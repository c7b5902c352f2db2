#!/usr/bin/env python3
"""Runs every --json command of mlens on the demo models and store, and validates each output
against its schema in assets/schemas (JSON Schema draft 2020-12, python3-jsonschema); then runs
every command that `mlens --help` lists with --json on a missing file and on a file that is no
model, and checks the error object, the exit status and the error line on stderr.

usage: check_json_schemas.py MLENS SCHEMA_DIR DEMO_DIR
Prints one line per output checked; exits 1 when any output does not match its schema."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema


def load_schemas(schema_dir):
    schemas = {}
    for name in sorted(os.listdir(schema_dir)):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
                schemas[name] = json.load(f)
    return schemas


def make_validator(schemas, name):
    schema = schemas[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    try:  # jsonschema >= 4.18 resolves references through a registry
        from referencing import Registry, Resource
        registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
        return jsonschema.Draft202012Validator(schema, registry=registry)
    except ImportError:  # Debian 12's jsonschema 4.10
        store = {s["$id"]: s for s in schemas.values()}
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)


def write_imatrix_files(out_dir):
    """A GGUF and a legacy imatrix for blk.0.attn_q.weight of the demo model (rows of 64), laid out
    as llama-imatrix writes them; returns their paths."""
    name, columns, sums, count = "blk.0.attn_q.weight", 64, [float(1 + (c * 7) % 13) for c in range(64)], 32.0
    def string(s):
        return struct.pack("<Q", len(s)) + s.encode()
    def pad(b):
        return b + bytes(-len(b) % 32)
    header = b"GGUF" + struct.pack("<IQQ", 3, 2, 4)
    header += string("general.type") + struct.pack("<I", 8) + string("imatrix")
    header += string("imatrix.datasets") + struct.pack("<IIQ", 9, 8, 1) + string("demo.txt")
    header += string("imatrix.chunk_count") + struct.pack("<II", 4, 1)
    header += string("imatrix.chunk_size") + struct.pack("<II", 4, 32)
    header += string(name + ".in_sum2") + struct.pack("<IQQIQ", 2, columns, 1, 0, 0)
    header += string(name + ".counts") + struct.pack("<IQQIQ", 2, 1, 1, 0, 256)
    data = pad(struct.pack("<64f", *sums)) + pad(struct.pack("<f", count))
    gguf = os.path.join(out_dir, "demo.imatrix")
    with open(gguf, "wb") as f:
        f.write(pad(header) + data)
    legacy = os.path.join(out_dir, "demo-imatrix.dat")
    with open(legacy, "wb") as f:
        f.write(struct.pack("<ii", 1, len(name)) + name.encode() + struct.pack("<ii", 1, columns) + struct.pack("<64f", *sums))
        f.write(struct.pack("<ii", 1, 8) + b"demo.txt")
    return gguf, legacy


def write_non_finite_models(out_dir):
    """GGUFs with one F32 tensor "t.weight" of 8 values: NaN, +inf and -inf among ordinary values,
    all finite, all zero, all NaN; returns their paths (the edge outputs of stats and compare)."""
    def string(s):
        return struct.pack("<Q", len(s)) + s.encode()
    def gguf(path, values):
        header = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
        header += string("general.architecture") + struct.pack("<I", 8) + string("llama")
        header += string("t.weight") + struct.pack("<IQIQ", 1, len(values), 0, 0)
        header += bytes(-len(header) % 32)
        with open(path, "wb") as f:
            f.write(header + struct.pack(f"<{len(values)}f", *values))
        return path
    inf = float("inf")
    return (gguf(os.path.join(out_dir, "non-finite.gguf"), [1.0, float("nan"), inf, -inf, 2.0, 3.0, 4.0, 5.0]),
            gguf(os.path.join(out_dir, "finite.gguf"), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
            gguf(os.path.join(out_dir, "zeros.gguf"), [0.0] * 8),
            gguf(os.path.join(out_dir, "all-nan.gguf"), [float("nan")] * 8))


# Options a command needs besides its positionals before it opens its inputs (read from the
# command line after parsing, so CLI11's help does not mark them REQUIRED).
ERROR_CASE_OPTIONS = {
    "run": ["-p", "x"], "ab": ["-p", "x"], "layers": ["-p", "x"], "layer-divergence": ["-p", "x"],
    "export": ["--dry-run"], "edit": ["--dry-run"],
}
# Commands whose output another command's schema describes.
SCHEMA_OF = {"verify": "show"}


def json_commands(mlens):
    """Each subcommand `mlens --help` lists whose own --help offers --json, with its positionals
    (name, required) in the order of its usage line. The help is asked for at a width no usage line
    reaches, so that a long path to mlens does not wrap one."""
    wide = dict(os.environ, COLUMNS="1000")
    listing = subprocess.run([mlens, "--help"], capture_output=True, text=True, env=wide).stdout
    names, in_list = [], False
    for line in listing.splitlines():
        if line.strip().lower().rstrip(":") == "subcommands":
            in_list = True
        elif in_list and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif in_list and not line.strip():
            break
    commands = {}
    for name in names:
        usage = subprocess.run([mlens, name, "--help"], capture_output=True, text=True, env=wide).stdout
        if "--json" not in usage:
            continue
        line = next(l for l in usage.splitlines() if l.startswith("Usage:"))
        words = line.split("[OPTIONS]", 1)[1].split() if "[OPTIONS]" in line else []
        commands[name] = [(w.strip("[]"), not w.startswith("[")) for w in words if w.strip("[]").isupper()]
    return commands


def check_error_outputs(mlens, validators, out_dir, failures):
    """Every command with --json, given a missing file and a file that is no model, prints one
    error object that its schema admits, exits 1 (2 for a usage error), and names the file on
    stderr. Returns the number of runs checked."""
    missing = os.path.join(out_dir, "missing-input.gguf")
    not_a_model = os.path.join(out_dir, "not-a-model.txt")
    with open(not_a_model, "w") as f:
        f.write("just some text, no model\n")
    commands = json_commands(mlens)
    if len(commands) < 20:
        failures.append(f"mlens --help lists only {len(commands)} commands with --json: {sorted(commands)}")
    runs = 0
    for command, positionals in sorted(commands.items()):
        if not positionals:  # `cache` reads no file: there is no missing one to give it
            continue
        schema_name = "mlens-" + SCHEMA_OF.get(command, command) + ".schema.json"
        if schema_name not in validators:
            failures.append(f"{command}: no schema {schema_name}")
            continue
        for bad in (missing, not_a_model):
            fill = [p for p in positionals if p[1]] or positionals[:2]
            options = ERROR_CASE_OPTIONS.get(command, []) + (["--text", not_a_model] if command in ("kld", "ppl") else [])
            args = [command] + [bad for _ in fill] + options + ["--json"]
            label = f"error: {' '.join(a if a not in (missing, not_a_model) else os.path.basename(a) for a in args)}"
            run = subprocess.run([mlens, *args], capture_output=True, text=True, cwd=out_dir, stdin=subprocess.DEVNULL)
            runs += 1
            try:
                output = json.loads(run.stdout)
            except ValueError:
                failures.append(f"{label}: stdout is not one JSON value: {run.stdout[:200]!r}")
                print(f"FAIL {label}")
                continue
            problems = [f"{schema_name} at /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
                        for e in validators[schema_name].iter_errors(output)]
            error = output.get("error") if isinstance(output, dict) else None
            if error is None:
                problems.append("no error object")
            elif run.returncode != (2 if error["code"] == "E_USAGE" else 1):
                problems.append(f"exit {run.returncode} with code {error['code']}")
            elif error["code"] != "E_USAGE" and error["path"] != bad:
                problems.append(f"the error names {error['path']!r}, not the file given")
            stderr = run.stderr.strip().splitlines()
            if not stderr or not any(l.startswith("error: ") for l in stderr):
                problems.append(f"no error line on stderr: {run.stderr[:200]!r}")
            elif error is not None and error["code"] != "E_USAGE" and bad not in run.stderr:
                problems.append(f"stderr does not name the file: {run.stderr[:200]!r}")
            for p in problems:
                failures.append(f"{label}: {p}")
            print(("FAIL " if problems else "ok   ") + label)
    return runs


def serve_store_as_registry(store):
    """A loopback Ollama registry (the v2 API's manifests and blobs, byte ranges answered with
    206) over the store's models, in the namespace "library"; the namespace "tampered" serves the
    same manifests with every blob above 100 kB changed in one byte. Returns the base URL; the
    server runs on a daemon thread until the process ends."""
    class Registry(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            parts = self.path.split("/")  # "", "v2", NAMESPACE, MODEL, "manifests"|"blobs", TAG|DIGEST
            if len(parts) != 6 or parts[1] != "v2" or parts[2] not in ("library", "tampered"):
                return self.send_error(404)
            if parts[4] == "manifests":
                path = os.path.join(store, "manifests", "registry.ollama.ai", "library", parts[3], parts[5])
            elif parts[4] == "blobs" and parts[5].startswith("sha256:"):
                path = os.path.join(store, "blobs", "sha256-" + parts[5][7:])
            else:
                return self.send_error(404)
            if not os.path.isfile(path):
                return self.send_error(404)
            with open(path, "rb") as f:
                data = bytearray(f.read())
            if parts[2] == "tampered" and parts[4] == "blobs" and len(data) > 100000:
                data[len(data) // 2] ^= 0xFF
            first, last = 0, len(data) - 1
            ranged = self.headers.get("Range", "").startswith("bytes=")
            if ranged:
                a, b = self.headers["Range"][6:].split("-")
                first, last = int(a), min(int(b), len(data) - 1)
            self.send_response(206 if ranged else 200)
            self.send_header("ETag", '"' + parts[2] + "-" + parts[5].replace(":", "-") + '"')
            self.send_header("Content-Length", str(last - first + 1))
            if ranged:
                self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
            self.end_headers()
            self.wfile.write(bytes(data[first:last + 1]))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def main():
    mlens, schema_dir, demo = (os.path.abspath(a) for a in sys.argv[1:4])
    schemas = load_schemas(schema_dir)
    validators = {name: make_validator(schemas, name) for name in schemas if name != "mlens-common.schema.json"}
    used = set()
    failures = []
    out_dir = tempfile.mkdtemp()

    def check(command, *args, schema=None, status=0):
        schema_name = "mlens-" + (schema or command) + ".schema.json"
        used.add(schema_name)
        run = subprocess.run([mlens, command, *args, "--json"], capture_output=True, text=True, cwd=out_dir)
        label = " ".join([command] + [os.path.basename(a) for a in args])
        if (run.returncode != status) if status is not None else run.returncode not in (0, 1):
            failures.append(f"{label}: exit {run.returncode}: {run.stderr.strip()}")
            print(f"FAIL {label}")
            return None
        if not run.stdout.strip():
            # A failing command prints its error object too: no exit status leaves stdout empty.
            failures.append(f"{label}: exit {run.returncode} without JSON: {run.stderr.strip()[:200]}")
            print(f"FAIL {label}")
            return None
        # No NaN, Infinity or null in place of a number: json.loads would accept the first two.
        output = json.loads(run.stdout, parse_constant=lambda c: failures.append(f"{label}: bare {c} in the JSON"))
        errors = sorted(validators[schema_name].iter_errors(output), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            failures.append(f"{label}: {schema_name} at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
        print(("FAIL " if errors else "ok   ") + label)
        return output

    f32, q8, q4 = (os.path.join(demo, f"tiny-llama-{t}.gguf") for t in ("f32", "q8_0", "q4_0"))
    gemma3, qwen25vl = os.path.join(demo, "ollama-gemma3.gguf"), os.path.join(demo, "ollama-qwen25vl.gguf")
    store = os.path.join(demo, "ollama-store")

    listing = check("store", store)
    check("check", store)
    safetensors_blob = None
    for model in (listing or {}).get("models", []):
        shown = check("show", model["name"], "--store", store, "--tensors")
        for layer in (shown or {}).get("layers", []):
            if layer["kind"] == "tensor" and safetensors_blob is None:
                safetensors_blob = os.path.join(store, layer["blob"])
    check("show", "tiny-llama:q4_0", "--store", store)
    check("store", store, "tiny-moe:int4", "--verify", schema="show")
    check("verify", "tiny-mlx:mixed", "--store", store, schema="show")
    # verify of a registry's model: every blob fetched whole and hashed, from the registry alone.
    os.environ["OLLAMA_REGISTRY"] = serve_store_as_registry(store)
    verified = check("verify", "ollama://tiny-llama:q4_0", "--no-cache", schema="show")
    if verified and not (verified["ok"] and verified["mismatched"] == 0 and len(verified["layers"]) == 6):
        failures.append(f"verify ollama://tiny-llama:q4_0: not every blob matched: {verified}")
    check("show", "ollama://tiny-llama:q4_0", "--no-cache")
    check("show", "ollama://tiny-mlx:mixed", "--tensors", "--no-cache")
    tampered = check("verify", "ollama://tampered/tiny-llama:q4_0", "--no-cache", schema="show", status=1)
    if tampered and [layer["verified"] for layer in tampered["layers"]] != ["ok", "MISMATCH", "ok", "ok", "ok", "ok"]:
        failures.append(f"verify ollama://tampered/tiny-llama:q4_0: the changed model blob is not the one mismatch: {tampered['layers']}")

    models = [f32, q4, gemma3, qwen25vl] + ([safetensors_blob] if safetensors_blob else [])
    for path in models:
        check("info", path)
        check("kv", path)
        check("tensors", path)
        check("tensors", path, "--by-layer")
        check("dump", path)
        check("check", path)
        check("compat", path)
        check("fsck", path)
        check("recipe", path)
        check("loads", path, status=None)
    # A damaged file still opens: what parsed, and diagnostics with their offsets (exit status 1).
    truncated = os.path.join(out_dir, "truncated.gguf")
    with open(f32, "rb") as src, open(truncated, "wb") as dst:
        dst.write(src.read(700))
    for command in ("info", "kv", "tensors", "dump", "check", "fsck"):
        check(command, truncated, status=1)
    check("kv", f32, "--full")
    check("dump", f32, "--full")
    check("stats", q4, "blk.0.attn_q.weight")
    check("stats", f32, "output_norm.weight")
    check("hist", q4, "blk.0.attn_q.weight", "--bins", "8")
    check("compare", f32, q4)
    check("requant", f32, "blk.0.attn_q.weight", "--types", "Q8_0,Q4_K,IQ2_XXS")
    check("requant", q4, "blk.0.attn_q.weight")
    imatrix_gguf, imatrix_dat = write_imatrix_files(out_dir)
    check("requant", q4, "blk.0.attn_q.weight", "--reference", f32, "--imatrix", imatrix_gguf)
    check("imatrix", imatrix_gguf)
    check("imatrix", imatrix_dat, "--tensor", "blk.0.attn_q.weight")
    check("imatrix", imatrix_gguf, "--statistics")
    check("diff", f32, q4, "--numeric")
    check("diff", f32, gemma3)
    check("export-upstream", gemma3, os.path.join(out_dir, "gemma3.gguf"), "--mmproj", os.path.join(out_dir, "mmproj.gguf"))
    check("export-upstream", qwen25vl, os.path.join(out_dir, "qwen25vl.gguf"))
    check("edit", f32, "--dry-run", "--set", "general.name=x", "--rename", "general.architecture", "general.arch")
    check("edit", f32, "-o", os.path.join(out_dir, "edited.gguf"), "--set", "tokenizer.ggml.eos_token_id=3", "--delete", "general.name")
    shutil.copy(f32, os.path.join(out_dir, "in-place.gguf"))
    check("edit", os.path.join(out_dir, "in-place.gguf"), "--in-place", "--set", "tokenizer.ggml.eos_token_id=3")
    check("edit", "--undo", os.path.join(out_dir, "in-place.gguf"))
    check("export", "tiny-llama:q4_0", "--store", store, "--dry-run")
    check("export", "tiny-llama:q4_0", os.path.join(out_dir, "bundle"), "--store", store)
    check("export", "tiny-mlx:mixed", os.path.join(out_dir, "hf"), "--store", store, "--dtype", "bf16")
    check("export", "tiny-moe:int4", os.path.join(out_dir, "mlx"), "--store", store, "--format", "mlx")
    check("tokenize", f32, "Hello world")
    check("run", f32, "-p", "Hello", "-n", "3")
    check("ab", f32, q8, "-p", "Hello", "-n", "3")
    check("layers", f32, "-p", "Hello")
    corpus = os.path.join(out_dir, "corpus.txt")
    with open(corpus, "w") as f:
        f.write(" ".join(["the river ran under the old stone bridge"] * 20) + "\n")
    check("kld", f32, q8, "--text", corpus, "--ctx", "32")
    check("ppl", q8, "--text", corpus, "--ctx", "32", "--batch", "64")
    check("memory", q4, "--ctx", "256")
    check("template", qwen25vl)
    check("template", os.path.join(store, "tiny-llama:q4_0"), "--against", qwen25vl)
    # A tokenizer.json that shares almost nothing with the demo vocabulary: every kind of
    # difference, the text tokenized on both sides (exit status 1: they differ).
    tokenizer_json = os.path.join(out_dir, "tokenizer.json")
    with open(tokenizer_json, "w") as f:
        json.dump({"model": {"type": "BPE", "vocab": {"t": 0, "h": 1, "e": 2, "th": 3, "the": 4, "<s>": 5}, "merges": ["t h", "th e"]},
                   "added_tokens": [{"id": 5, "content": "<s>", "special": True, "single_word": False, "lstrip": False,
                                     "rstrip": False, "normalized": False}],
                   "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}}, f)
    check("tokenizer-parity", f32, tokenizer_json, "--text", corpus, status=1)
    # Edge outputs: values JSON numbers cannot hold are the strings "nan", "inf", "-inf", and the
    # output still matches its schema whatever the exit status.
    non_finite, finite, zeros, all_nan = write_non_finite_models(out_dir)
    for path in (non_finite, all_nan):
        check("stats", path, "t.weight", status=None)
        check("hist", path, "t.weight", "--bins", "4", status=None)
        check("fsck", path, status=None)
    check("compare", finite, non_finite, status=None)
    check("compare", non_finite, non_finite, status=None)
    check("compare", zeros, zeros, status=None)  # SNR +inf
    check("compare", zeros, finite, status=None)  # NMSE +inf, SNR -inf
    check("requant", non_finite, "t.weight", "--types", "Q8_0", status=None)
    check("requant", zeros, "t.weight", "--types", "Q8_0", status=None)
    check("layer-divergence", f32, q4, "-p", "Hello world")
    # The cache folder: a fresh one filled by a store listing, cleared; then one whose database
    # cannot be created (the cache folder is a file), listed without it and with the warning.
    saved_cache_home = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = os.path.join(out_dir, "cache-home")
    subprocess.run([mlens, "store", store, "--verify"], capture_output=True, cwd=out_dir)
    filled = check("cache")
    if filled is not None and not filled["database"].get("entries", {}).get("blob_digests"):
        failures.append(f"cache: no blob digest after a verified store listing: {filled['database']}")
    cleared = check("cache", "--clear")
    if filled is not None and cleared is not None and cleared["removed"]["database_entries"] != sum(filled["database"]["entries"].values()):
        failures.append(f"cache --clear removed {cleared['removed']} of {filled['database']['entries']}")
    blocked = os.path.join(out_dir, "cache-home-is-a-file")
    with open(blocked, "w") as f:
        f.write("not a folder\n")
    os.environ["XDG_CACHE_HOME"] = blocked
    unavailable = check("cache")
    if unavailable is not None and (unavailable["database"]["enabled"] or not unavailable["warnings"]):
        failures.append(f"cache in a folder that cannot be made: {unavailable}")
    if saved_cache_home is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved_cache_home

    check_error_outputs(mlens, validators, out_dir, failures)

    for name in sorted(set(validators) - used):
        failures.append(f"{name}: no output checked against it")
    for f in failures:
        print("error: " + f, file=sys.stderr)
    print(f"{len(used)} schemas, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
