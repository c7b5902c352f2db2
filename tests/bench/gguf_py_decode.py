#!/usr/bin/python3
# gguf_py_decode.py GGUF LLAMA_SOURCE [MAX_VALUES]
#
# Dequantization throughput of gguf-py (llama.cpp's Python GGUF package, numpy decoding) on the
# GGUF that `decode_bench --keep GGUF` kept: for each tensor, gguf.quants.dequantize over the
# tensor's bytes (at most MAX_VALUES values, default 16Mi, whole rows), best of 3, in G values/s.
# When decode_bench's GGUF.tsv is present, also prints how many times faster single-threaded ggml
# and ModelLens' decode were on the same tensor. gguf-py is imported from LLAMA_SOURCE/gguf-py.
import os
import sys
import time

gguf_path, llama_source = sys.argv[1], sys.argv[2]
max_values = int(sys.argv[3]) if len(sys.argv) > 3 else 16 << 20
sys.path.insert(0, os.path.join(llama_source, "gguf-py"))
import numpy as np  # noqa: E402
import gguf  # noqa: E402

measured = {}   # tensor name -> (ggml G/s, ModelLens decode G/s)
if os.path.exists(gguf_path + ".tsv"):
    with open(gguf_path + ".tsv") as f:
        for line in f.read().splitlines()[1:]:
            name, ggml_gps, decode_gps = line.split("\t")
            measured[name] = (float(ggml_gps), float(decode_gps))

print(f"gguf-py (numpy {np.__version__}, one thread), best of 3")
for tensor in gguf.GGUFReader(gguf_path).tensors:
    row_values = int(tensor.shape[0])
    data = tensor.data[: max(1, max_values // row_values)]   # rows of raw bytes
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        values = gguf.quants.dequantize(data, tensor.tensor_type)
        best = min(best, time.perf_counter() - t0)
    gps = values.size / best / 1e9
    line = f"{tensor.name:<8} gguf-py {gps:6.3f} G/s over {values.size} values"
    if tensor.name in measured:
        ggml_gps, decode_gps = measured[tensor.name]
        line += f"   ggml {ggml_gps / gps:6.1f}x faster   ModelLens decode {decode_gps / gps:6.1f}x faster"
    print(line)
