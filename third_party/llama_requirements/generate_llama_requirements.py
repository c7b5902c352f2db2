#!/usr/bin/env python3
"""Generates the loader requirements of the pinned llama.cpp from its sources.

Usage: generate_llama_requirements.py LLAMA_SOURCE_DIR OUTPUT_CPP

Reads (paths relative to the source root):
  src/llama-arch.cpp            architecture names, metadata key names, tensor name formats and
                                the ggml op each tensor is used with (LLM_TENSOR_INFOS)
  src/llama-model.cpp           the architecture -> loader class mapping, the common hyperparameter
                                reader (load_hparams), the common tensors (load_tensors), the
                                tensor helpers (create_tensor_*), the load_hparams asserts
  src/models/models.h           each loader class's base class
  src/models/*.cpp              each class's load_arch_hparams / load_arch_tensors and its graph
                                builder's asserts
  ggml/include/ggml.h           ggml type ids
  ggml/src/ggml.c               ggml type traits (name, block size, block bytes as expressions
                                the generated file has the compiler evaluate with ggml-common.h)
  ggml/src/ggml-cpu/ops.cpp     the norm asserts
  convert_hf_to_gguf.py, conversion/*.py   @ModelBase.register("...") class names

What is decided statically (and what is not) is stated in llama_requirements.h. Every pattern this
script relies on must find something: if one finds nothing it exits with status 1 naming it, so a
llama.cpp update can never quietly produce empty tables.
"""

import os
import re
import sys

def fail(message):
    sys.stderr.write("generate_llama_requirements: " + message + "\n")
    sys.exit(1)

def read(root, rel):
    path = os.path.join(root, rel)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e))

def require(items, what):
    if not items:
        fail("found no %s: the pattern no longer matches the pinned source" % what)
    return items

def strip_comments(text):
    """Blanks comments and string contents' comment look-alikes, keeping offsets and newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)

def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

def map_table(text, name):
    """{ ENUM, "string" } rows of a `static const std::map<...> NAME = {` table."""
    m = re.search(r"\b%s\s*=\s*\{" % name, text)
    if not m:
        fail("table %s not found" % name)
    end = text.find("\n};", m.end())
    rows = re.findall(r"\{\s*(\w+)\s*,\s*\"([^\"]*)\"\s*\}", text[m.end():end])
    return dict(require(rows, "rows in " + name))

def tensor_ops(text):
    """{ LLM_TENSOR_X: "GGML_OP_Y" } from the rows `{LLM_TENSOR_X, {LLM_TENSOR_LAYER_Z, GGML_OP_Y}}`."""
    m = re.search(r"\bLLM_TENSOR_INFOS\s*=\s*\{", text)
    if not m:
        fail("table LLM_TENSOR_INFOS not found")
    end = text.find("\n};", m.end())
    rows = re.findall(r"\{\s*(LLM_TENSOR_\w+)\s*,\s*\{\s*LLM_TENSOR_LAYER_\w+\s*,\s*(GGML_OP_\w+)\s*\}\s*\}", text[m.end():end])
    return dict(require(rows, "rows in LLM_TENSOR_INFOS"))

def weight_op(info_op, suffix):
    """The op the loader tests a weight's buffer type with: a bias is added (ADD_ID beside an
    expert matmul), every other tensor is used with its LLM_TENSOR_INFOS op."""
    if suffix == "bias":
        return "GGML_OP_ADD_ID" if info_op == "GGML_OP_MUL_MAT_ID" else "GGML_OP_ADD"
    return info_op

def function_body(text, qualified):
    """(body, offset of body start) of the definition `... qualified(...) ... {`, or None."""
    for m in re.finditer(r"\b%s\s*\(" % re.escape(qualified), text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        b = re.compile(r"\s*(?:const\s*)?(?:override\s*)?(?::[^{;]*)?\{").match(text, i + 1)
        if not b:
            continue  # a declaration or a call
        start = b.end()
        return text[start:matching_close(text, start, "{", "}")], start
    return None

def matching_close(text, start, opening, closing):
    """Offset of the `closing` that balances an `opening` just before `start`."""
    depth, j = 1, start
    while j < len(text) and depth:
        if text[j] == opening:
            depth += 1
        elif text[j] == closing:
            depth -= 1
        j += 1
    return j - 1

def line_of(text, offset):
    return text.count("\n", 0, offset) + 1

# --- statements with the conditions that guard them ---------------------------------------------

ALL_LAYER_LOOP = re.compile(r"^for\s*\(\s*(?:int|uint32_t|int64_t|size_t)\s+(\w+)\s*=\s*0\s*;\s*\1\s*<\s*(n_layer|n_layer_all)\s*;")

def arch_condition(cond, arch):
    """True/False when `cond` depends only on the architecture (and load modes), else None."""
    terms = [t.strip() for t in cond.split("||")]
    value = False
    for t in terms:
        t = t.strip("() ")
        if re.fullmatch(r"(?:hparams\.)?vocab_only", t):
            continue  # a load mode, not a property of the file: off for a full load
        m = re.fullmatch(r"(?:ml\.get_arch\(\)|arch)\s*==\s*(LLM_ARCH_\w+)", t)
        if not m:
            return None
        value = value or m.group(1) == arch
    return value

def statement_condition(stmt):
    m = re.match(r"(?:else\s+)?if\s*\((.*)\)\s*$", stmt, re.S)
    return m.group(1) if m else None

class Scope:
    def __init__(self, kind, loop_var=None, loop_bound=None):
        self.kind = kind  # "function", "plain", "loop", "conditional", "skip"
        self.loop_var, self.loop_bound = loop_var, loop_bound
        self.tainted = False  # an earlier conditional block left the function or loop
        self.exits = False  # this block holds a return/continue/break
        self.dead = False  # an unconditional return/continue/break came before: nothing after runs

def statements(body, arch):
    """Yields (statement text, conditional, loop var, loop bound) for each statement of `body`,
    with the architecture-only conditions decided for `arch` (code they exclude is not yielded)."""
    stack = [Scope("function")]
    stmt, paren, init, last_if = [], 0, 0, None  # last_if: value of the if-block that just closed
    for c in body:
        if c in "([":
            paren += 1
        elif c in ")]":
            paren -= 1
        if init:
            if c in "{}":
                init += 1 if c == "{" else -1  # inside a braced initializer or lambda: part of the statement
            stmt.append(c)
            continue
        if c == "{" and paren == 0 and re.search(r"(=|,|\breturn|\w|>)\s*$", "".join(stmt)) \
                and not re.search(r"\b(else|do|try)\s*$", "".join(stmt)):
            init = 1  # `x = {`, `return {`, `T{`, `[&]() -> T {`: an initializer or a lambda, not a block
            stmt.append(c)
            continue
        if paren > 0 or c not in "{};":
            stmt.append(c)
            continue
        text = " ".join("".join(stmt).split())
        stmt = []
        if c == "{":
            prev_if, last_if = last_if, None
            if text == "" or text in ("try", "do"):
                stack.append(Scope("plain" if text == "" else "conditional"))
                continue
            m = ALL_LAYER_LOOP.match(text)
            if m:
                stack.append(Scope("loop", m.group(1), m.group(2)))
                continue
            cond = statement_condition(text)
            value = arch_condition(cond, arch) if cond is not None else None
            if text.startswith("else"):
                if prev_if is True:
                    value = False  # the if before it ran
                elif prev_if is False and cond is None:
                    value = True
                elif prev_if is None:
                    value = None
            if value is False:
                stack.append(Scope("skip"))
            elif value is True:
                stack.append(Scope("plain"))
                stack[-1].arch_if = True
            else:
                stack.append(Scope("conditional"))
            stack[-1].if_value = value if (text.startswith("if") or text.startswith("else")) else None
            continue
        if c == "}":
            if text:
                yield from emit(text, stack)
            closed = stack.pop()
            if not stack:
                fail("unbalanced braces")
            if closed.exits and closed.kind == "conditional":
                stack[-1].tainted = True
            if closed.exits and closed.kind == "plain":
                stack[-1].exits = True
                stack[-1].dead = True
            last_if = getattr(closed, "if_value", None)
            continue
        last_if = None
        yield from emit(text, stack)

def emit(text, stack):
    if any(s.kind == "skip" or s.dead for s in stack):
        return
    inline_if = re.match(r"(?:else\s+)?if\s*\(", text) is not None or text.startswith("else ")
    # a statement that leaves: `return ...`, or `if (...) return ...` (not a lambda's return)
    exits = re.match(r"(return|continue|break)\b", text) is not None or \
        (inline_if and re.search(r"\)\s*(return|continue|break)\b", text) is not None)
    if exits:
        if inline_if:
            stack[-1].tainted = True
        else:
            stack[-1].exits = True
    conditional = inline_if or any(s.kind == "conditional" or s.tainted for s in stack) \
        or "?" in text.split("create_tensor")[0]
    loops = [s for s in stack if s.kind == "loop"]
    loop = loops[-1] if loops else None
    yield text, conditional, loop.loop_var if loop else None, loop.loop_bound if loop else None
    if exits and not inline_if and stack[-1].kind in ("function", "plain", "loop"):
        stack[-1].dead = True  # (in a switch, a break only ends its case)

# --- call arguments -------------------------------------------------------------------------------

def split_args(s):
    args, depth, cur = [], 0, []
    for c in s:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args

def calls(text, name):
    """Argument lists of every call `name(` in text."""
    out = []
    for m in re.finditer(r"\b%s\s*\(" % name, text):
        out.append(split_args(text[m.end():matching_close(text, m.end(), "(", ")")]))
    return out

# --- tensors --------------------------------------------------------------------------------------

NEED_ORDER = {"required": 0, "optional": 1, "conditional": 2}

class TensorNeeds:
    def __init__(self):
        self.by_name = {}
        self.complete = True

    def add(self, name, need, layers, op, vocab_rows, embd_cols):
        old = self.by_name.get(name)
        vocab_rows = vocab_rows or (old is not None and old[3])
        embd_cols = embd_cols and (old is None or old[4])  # every creation of the name agrees
        if old is None or NEED_ORDER[need] < NEED_ORDER[old[0]]:
            self.by_name[name] = (need, layers, op, vocab_rows, embd_cols)
        else:
            self.by_name[name] = (old[0], old[1], old[2], vocab_rows, embd_cols)

def flags_need(flags):
    flags = " ".join(flags.split())
    if "TENSOR_NOT_REQUIRED" in flags or "TENSOR_SKIP" in flags:
        return "optional"
    if flags == "0" or re.fullmatch(r"TENSOR_DUPLICATED|TENSOR_ALLOW_RESHAPE", flags):
        return "required"
    return "conditional"

def n_embd_is_hparams(body):
    """True when every n_embd of `body` is hparams.n_embd: LLAMA_LOAD_LOCALS's, or a local
    `n_embd = hparams.n_embd` (and no other definition)."""
    defs = [d.strip() for d in re.findall(r"\bn_embd\s*=(?!=)\s*([^;]+);", body)]
    if any(d != "hparams.n_embd" for d in defs):
        return False
    return "LLAMA_LOAD_LOCALS" in body or bool(defs)

def collect_tensors(body, arch, tensor_names, ops, helpers, needs, subst=None, index_param=None, forced_conditional=False):
    embd_ok = n_embd_is_hparams(body)
    for text, conditional, loop_var, bound in statements(body, arch):
        for hname, (hbody, params) in helpers.items():
            for args in calls(text, hname):
                if len(args) != len(params):
                    fail("call of %s with %d arguments, %d expected" % (hname, len(args), len(params)))
                argmap = dict(zip(params, args))
                layer_arg = argmap.get("bid", "")
                helper_loop = loop_var if layer_arg == loop_var else None
                collect_tensors(hbody, arch, tensor_names, ops, {}, needs, subst={"flags": argmap.get("flags", "0")},
                                index_param=("bid", helper_loop, bound),
                                forced_conditional=forced_conditional or conditional or (layer_arg != loop_var and loop_var is not None))
        for args in calls(text, "create_tensor"):
            if not args or not args[0].startswith("tn("):
                needs.complete = False
                continue
            tn = split_args(args[0][3:-1])
            if not tn or tn[0] not in tensor_names:
                needs.complete = False
                continue
            fmt = tensor_names[tn[0]]
            rest = tn[1:]
            suffix = None
            if rest and rest[0].startswith('"'):
                suffix = rest[0].strip('"')
                rest = rest[1:]
            name = fmt + ("." + suffix if suffix else "")
            flags = args[2] if len(args) > 2 else "0"
            if subst:
                for k, v in subst.items():
                    flags = re.sub(r"\b%s\b" % k, "(" + v + ")", flags)
                    flags = flags.replace("(0)", "0")
            need = "conditional" if (conditional or forced_conditional) else flags_need(flags)
            layers = ""
            n_index = fmt.count("%d")
            if n_index:
                index = rest[0] if rest else ""
                layer_var, layer_bound = loop_var, bound
                if index_param and index == index_param[0]:
                    layer_var, layer_bound = index_param[1], index_param[2]
                    index = layer_var or ""
                if re.fullmatch(r"\d+", index) and n_index == 1:
                    name = name.replace("%d", index)
                elif n_index == 1 and layer_var and index == layer_var:
                    layers = layer_bound
                else:
                    layers = "some"
                    need = "conditional"
            shape = args[1] if len(args) > 1 else ""
            dims = split_args(shape[1:-1]) if shape.startswith("{") and shape.endswith("}") else []
            embd_cols = embd_ok and bool(dims) and dims[0] == "n_embd" and "TENSOR_ALLOW_RESHAPE" not in flags
            needs.add(name, need, layers, weight_op(ops.get(tn[0], "GGML_OP_NONE"), suffix), bool(dims) and dims[-1] == "n_vocab",
                      embd_cols)

def helper_functions(model_src):
    helpers = {}
    for m in re.finditer(r"void\s+llama_model_base::(create_tensor_\w+)\s*\(([^)]*)\)\s*\{", model_src):
        params = [re.findall(r"(\w+)\s*$", p.strip().split("=")[0].strip())[0] for p in m.group(2).split(",")]
        body, _ = function_body(model_src, "llama_model_base::" + m.group(1))
        helpers[m.group(1)] = (body, params)
    return require(helpers, "llama_model_base::create_tensor_* helpers in src/llama-model.cpp")

# --- keys -----------------------------------------------------------------------------------------

KEY_READERS = {"get_key": 2, "get_arr": 2, "get_arr_n": 2, "get_key_or_arr": 3}

def collect_keys(body, arch, kv_names, arch_name, keys):
    for text, conditional, _, _ in statements(body, arch):
        guarded = conditional or "||" in text or "&&" in text or re.match(r"(?:if|while)\b", text)
        for reader, required_at in KEY_READERS.items():
            for args in calls(text, r"ml\.%s" % reader):
                if not args or args[0] not in kv_names:
                    continue
                key = kv_names[args[0]].replace("%s", arch_name)
                required = args[required_at] if len(args) > required_at else "true"
                if guarded:
                    need = "conditional"
                elif required == "true":
                    need = "required"
                elif required == "false":
                    need = "optional"
                else:
                    need = "conditional"
                old = keys.get(key)
                if old is None or NEED_ORDER[need] < NEED_ORDER[old]:
                    keys[key] = need

def embd_key(bodies, arch, kv_names, arch_name):
    """The key hparams.n_embd is read from for `arch`: the one read unconditionally into it, when
    it is the only read or write of hparams.n_embd of the loader's hparams bodies; else ""."""
    sources = []
    for body in bodies:
        for text, conditional, _, _ in statements(body, arch):
            for reader in KEY_READERS:
                for args in calls(text, r"ml\.%s" % reader):
                    if len(args) > 1 and args[1].strip() == "hparams.n_embd":
                        sources.append(kv_names.get(args[0]) if not conditional else None)
            if re.search(r"hparams\.n_embd\s*=(?!=)", text):
                sources.append(None)
    if len(sources) != 1 or not sources[0]:
        return ""
    return sources[0].replace("%s", arch_name)

# --- the rest -------------------------------------------------------------------------------------

def arch_classes(model_src):
    body, _ = function_body(model_src, "llama_model_mapping")
    out, pending = {}, []
    for m in re.finditer(r"case\s+(LLM_ARCH_\w+)\s*:|return\s+new\s+(llama_model_\w+)\s*\(", body):
        if m.group(1):
            pending.append(m.group(1))
        else:
            for a in pending:
                out[a] = m.group(2)
            pending = []
    return require(out, "case LLM_ARCH_* -> new llama_model_* in llama_model_mapping")

def class_bases(models_h):
    return dict(require(re.findall(r"struct\s+(llama_model_\w+)\s*:\s*public\s+(llama_model_\w+)", models_h),
                        "struct llama_model_X : public llama_model_Y in src/models/models.h"))

def type_traits(ggml_h, ggml_c):
    ids = dict((n, int(v)) for n, v in re.findall(r"\b(GGML_TYPE_\w+)\s*=\s*(\d+)\s*,", ggml_h))
    require(ids, "GGML_TYPE_X = N in ggml.h")
    rows = []
    m = re.search(r"type_traits\[GGML_TYPE_COUNT\]\s*=\s*\{", ggml_c)
    if not m:
        fail("ggml.c type_traits table not found")
    for t in re.finditer(r"\[(GGML_TYPE_\w+)\]\s*=\s*\{(.*?)\n    \}", ggml_c[m.end():], re.S):
        fields = dict(re.findall(r"\.(\w+)\s*=\s*([^,\n]+),", t.group(2)))
        if t.group(1) not in ids or "blck_size" not in fields:
            continue
        rows.append((ids[t.group(1)], fields["type_name"].strip().strip('"'), fields["blck_size"].strip(), fields["type_size"].strip()))
    return require(rows, "[GGML_TYPE_X] = { .type_name, .blck_size, .type_size } in ggml.c")

def assert_sites(text, rel, function, qualified):
    found = function_body(text, qualified)
    if not found:
        fail("function %s not found in %s" % (qualified, rel))
    body, start = found
    sites = []
    for m in re.finditer(r"GGML_ASSERT\((.*)\);", body):
        sites.append(("GGML_ASSERT(%s)" % m.group(1), "%s:%d (%s)" % (rel, line_of(text, start + m.start()), function)))
    return require(sites, "GGML_ASSERT in " + qualified)

def registered_hf_classes(root):
    names = set()
    files = ["convert_hf_to_gguf.py"]
    conv = os.path.join(root, "conversion")
    if os.path.isdir(conv):
        files += ["conversion/" + f for f in sorted(os.listdir(conv)) if f.endswith(".py")]
    for rel in files:
        for m in re.finditer(r"@ModelBase\.register\(([^)]*)\)", read(root, rel)):
            names.update(re.findall(r"\"([^\"]+)\"", m.group(1)))
    return sorted(require(names, "@ModelBase.register(\"...\") in convert_hf_to_gguf.py / conversion/*.py"))

def tokenizer_models(vocab_src):
    """[(name, needs_merges, merges_exempt_pre)] of the chain `if (tokenizer_model == "X" ...) {...}
    else if ...` in llama_vocab::impl::load that decides the vocabulary type, up to its "unknown
    tokenizer" throw: every name it knows. needs_merges: the branch throws "cannot find tokenizer
    merges"; merges_exempt_pre: the tokenizer_pre value that branch lets go without them ("" for none)."""
    found = function_body(vocab_src, "llama_vocab::impl::load")
    if not found:
        fail("llama_vocab::impl::load not found in src/llama-vocab.cpp")
    body = found[0]
    end = body.find('"unknown tokenizer')
    if end < 0:
        fail("the \"unknown tokenizer\" throw of llama_vocab::impl::load not found")
    models = {}
    for m in re.finditer(r"\bif\s*\(", body[:end]):
        close = matching_close(body, m.end(), "(", ")")
        names = re.findall(r'tokenizer_model\s*==\s*"([^"]+)"', body[m.end():close])
        if not names:
            continue
        brace = body.find("{", close)
        block = body[brace + 1:matching_close(body, brace + 1, "{", "}")]
        needs = "cannot find tokenizer merges" in block
        exempt = re.search(r'tokenizer_pre\s*==\s*"([^"]+)"', block) if needs else None
        for n in names:
            models.setdefault(n, (needs, exempt.group(1) if exempt else ""))
    require([n for n, (needs, _) in models.items() if needs], "a tokenizer whose branch needs merges in llama_vocab::impl::load")
    return [(n, needs, exempt) for n, (needs, exempt) in require(sorted(models.items()), "tokenizer_model == \"...\" in llama_vocab::impl::load")]

def main():
    if len(sys.argv) != 3:
        fail("usage: generate_llama_requirements.py LLAMA_SOURCE_DIR OUTPUT_CPP")
    root, output = sys.argv[1], sys.argv[2]
    arch_src = strip_comments(read(root, "src/llama-arch.cpp"))
    model_src = strip_comments(read(root, "src/llama-model.cpp"))
    models_h = strip_comments(read(root, "src/models/models.h"))
    arch_names = map_table(arch_src, "LLM_ARCH_NAMES")
    kv_names = map_table(arch_src, "LLM_KV_NAMES")
    tensor_names = map_table(arch_src, "LLM_TENSOR_NAMES")
    ops = tensor_ops(arch_src)
    classes = arch_classes(model_src)
    bases = class_bases(models_h)
    helpers = helper_functions(model_src)
    base_hparams = function_body(model_src, "llama_model_base::load_hparams")
    base_tensors = function_body(model_src, "llama_model_base::load_tensors")
    if not base_hparams or not base_tensors:
        fail("llama_model_base::load_hparams / load_tensors not found in src/llama-model.cpp")

    model_files = {}
    models_dir = os.path.join(root, "src/models")
    for f in sorted(os.listdir(models_dir)):
        if f.endswith(".cpp"):
            model_files["src/models/" + f] = strip_comments(read(root, "src/models/" + f))

    def find_method(cls, method):
        while cls:
            for rel, text in model_files.items():
                found = function_body(text, "%s::%s" % (cls, method))
                if found:
                    return found[0], rel, cls
            cls = bases.get(cls)
        return None

    graph_asserts = {}
    archs = []
    n_tensor_lists = 0
    for enum, name in arch_names.items():
        if enum == "LLM_ARCH_UNKNOWN":
            continue  # the loader's name for an unknown architecture, not one it loads
        cls = classes.get(enum)
        keys, needs, embd = {}, TensorNeeds(), ""
        if cls:
            collect_keys(base_hparams[0], enum, kv_names, name, keys)
            hp = find_method(cls, "load_arch_hparams")
            if hp:
                collect_keys(hp[0], enum, kv_names, name, keys)
            embd = embd_key([base_hparams[0]] + ([hp[0]] if hp else []), enum, kv_names, name)
            tl = find_method(cls, "load_arch_tensors")
            if tl:
                collect_tensors(base_tensors[0], enum, tensor_names, ops, helpers, needs)
                collect_tensors(tl[0], enum, tensor_names, ops, helpers, needs)
                n_tensor_lists += 1
            else:
                needs.complete = False
            rel = tl[1] if tl else None
            if rel:
                for a in re.findall(r"GGML_ASSERT\(([^;]*)\);", model_files[rel]):
                    graph_asserts.setdefault((" ".join(a.split()), rel), set()).add(name)
        archs.append((name, cls or "", keys, needs, embd))
    if n_tensor_lists < 50:
        fail("only %d architectures have a tensor loader; the loader patterns no longer match" % n_tensor_lists)

    types = type_traits(strip_comments(read(root, "ggml/include/ggml.h")), strip_comments(read(root, "ggml/src/ggml.c")))
    ops_cpp = strip_comments(read(root, "ggml/src/ggml-cpu/ops.cpp"))
    ggml_c = strip_comments(read(root, "ggml/src/ggml.c"))
    sites = assert_sites(model_src, "src/llama-model.cpp", "llama_model_base::load_hparams", "llama_model_base::load_hparams")
    sites += assert_sites(ops_cpp, "ggml/src/ggml-cpu/ops.cpp", "ggml_compute_forward_rms_norm, at the first decode", "ggml_compute_forward_rms_norm_f32")
    sites += assert_sites(ops_cpp, "ggml/src/ggml-cpu/ops.cpp", "ggml_compute_forward_norm, at the first decode", "ggml_compute_forward_norm_f32")
    sites += assert_sites(ggml_c, "ggml/src/ggml.c", "ggml_mul_mat", "ggml_mul_mat")
    hf = registered_hf_classes(root)
    tokenizers = tokenizer_models(strip_comments(read(root, "src/llama-vocab.cpp")))

    out = []
    w = out.append
    w("// Generated by third_party/llama_requirements/generate_llama_requirements.py from the pinned llama.cpp")
    w("// source at build time. Do not edit: edit the generator or the source it reads.")
    w("#include \"mlens/formats/llama_requirements.h\"")
    w("")
    w("#define GGML_COMMON_DECL_CPP")
    w("#include \"ggml-common.h\"")
    w("#include \"ggml.h\"")
    w("")
    w("namespace mlens {")
    w("namespace {")
    w("using N = Need;")
    for i, (name, cls, keys, needs, embd) in enumerate(archs):
        w("constexpr LlamaKeyNeed kKeys%d[] = {" % i)
        for key in sorted(keys):
            w("    {%s, N::%s}," % (c_string(key), keys[key]))
        if not keys:  # C++ has no empty arrays: one row the span below leaves out
            w("    {nullptr, N::optional},")
        w("};")
        w("constexpr LlamaTensorNeed kTensors%d[] = {" % i)
        for tname in sorted(needs.by_name):
            need, layers, op, vocab_rows, embd_cols = needs.by_name[tname]
            lk = {"": "none", "n_layer": "main", "n_layer_all": "all", "some": "some"}[layers]
            w("    {%s, N::%s, LayerSpan::%s, %s, %s, %s}," % (c_string(tname), need, lk, op, "true" if vocab_rows else "false",
                                                         "true" if embd_cols else "false"))
        if not needs.by_name:  # as above
            w("    {nullptr, N::optional, LayerSpan::none, GGML_OP_NONE, false, false},")
        w("};")
    w("constexpr LlamaArchRequirements kArchs[] = {")
    for i, (name, cls, keys, needs, embd) in enumerate(archs):
        w("    {%s, %s, %s, std::span(kKeys%d, %d), std::span(kTensors%d, %d), %s}," % (
            c_string(name), c_string(cls), "true" if (cls and needs.complete and needs.by_name) else "false",
            i, len(keys), i, len(needs.by_name), c_string(embd)))
    w("};")
    w("constexpr GgmlTypeFacts kTypes[] = {")
    for tid, tname, blck, size in types:
        w("    {%d, %s, static_cast<uint64_t>(%s), static_cast<uint64_t>(%s)}," % (tid, c_string(tname), blck, size))
    w("};")
    w("constexpr LlamaAssertSite kSites[] = {")
    for text, where in sites:
        w("    {%s, %s}," % (c_string(text), c_string(where)))
    w("};")
    graph_rows = sorted(graph_asserts.items())
    for j, (text, names) in enumerate(graph_rows):
        w("constexpr const char* kGraphArchs%d[] = {%s};" % (j, ", ".join(c_string(n) for n in sorted(names))))
    w("constexpr GraphAssertArchs kGraphAsserts[] = {")
    for j, ((text, rel), names) in enumerate(graph_rows):
        w("    {%s, %s, std::span(kGraphArchs%d, %d)}," % (c_string("GGML_ASSERT(%s)" % text), c_string(rel), j, len(names)))
    w("};")
    w("constexpr const char* kHfClasses[] = {")
    for c in hf:
        w("    %s," % c_string(c))
    w("};")
    w("constexpr LlamaTokenizerModel kTokenizers[] = {")
    for name, needs, exempt in tokenizers:
        w("    {%s, %s, %s}," % (c_string(name), "true" if needs else "false", c_string(exempt)))
    w("};")
    w("}  // namespace")
    w("")
    w("std::span<const LlamaArchRequirements> llama_arch_requirements() { return kArchs; }")
    w("std::span<const LlamaTokenizerModel> llama_tokenizer_models() { return kTokenizers; }")
    w("std::span<const GgmlTypeFacts> linked_ggml_types() { return kTypes; }")
    w("std::span<const LlamaAssertSite> llama_assert_sites() { return kSites; }")
    w("std::span<const GraphAssertArchs> llama_graph_asserts() { return kGraphAsserts; }")
    w("std::span<const char* const> converter_hf_classes() { return kHfClasses; }")
    w("")
    w("}  // namespace mlens")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, output)

if __name__ == "__main__":
    main()
