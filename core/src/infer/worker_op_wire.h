// The wire form of the operations' own types (operations.h), not part of the public API; worker_wire.h
// has those of the in-process API. Seen by both ends: WorkerSession::run (worker_run_instances.cpp)
// and the worker's handlers (core/src/worker/worker_ops.cpp).
#pragma once

#include "mlens/infer/operations.h"
#include "worker_wire.h"

namespace mlens {

MLENS_WIRE_FIELDS(TokenizeOp::Options, text, tokenize)
MLENS_WIRE_FIELDS(PiecesOp::Options, ids)
MLENS_WIRE_FIELDS(DetokenizeOp::Options, ids, remove_special, unparse_special)
MLENS_WIRE_FIELDS(ChatTemplateOp::Options, messages, add_assistant_prefix, template_text)
MLENS_WIRE_FIELDS(GenerationStream, prompt, steps)
MLENS_WIRE_FIELDS(GenerateOp::Options, prompt, options)
MLENS_WIRE_FIELDS(GenerateOp::Outcome, prompt, result)
MLENS_WIRE_FIELDS(LayersOp::Options, prompt, options)
MLENS_WIRE_FIELDS(AbOp::Options, b_model, prompt, options)
MLENS_WIRE_FIELDS(AbOp::Outcome, result, tokens, top_a, top_b, b_model, b_route)
MLENS_WIRE_FIELDS(KldOp::Options, b_model, text, text_path, options, inputs)
MLENS_WIRE_FIELDS(PplOp::Options, text, text_path, options)
MLENS_WIRE_FIELDS(KldOp::Outcome, result, moments, kld_order, p_diff_order, b_model, text_path, b_route)
MLENS_WIRE_FIELDS(DivergenceOp::Options, b_model, prompt, options)
MLENS_WIRE_FIELDS(DivergenceOp::Outcome, result, b_model)

}  // namespace mlens
