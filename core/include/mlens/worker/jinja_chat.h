// The llama.cpp worker's Jinja chat rendering: the pinned llama.cpp's chat layer (common/chat.h,
// common/jinja) called the way llama-server calls it. Only the worker links the chat layer; every
// other program asks the worker (JinjaChatOp, operations.h). Inputs, outputs and errors are
// chat_render.h's.
//
// Contract: render_jinja_chat(session, request) initialises the chat templates from the loaded
// model (JinjaTemplateSource::model, text_with_model) or from the text alone (text_alone; the
// session is then only where the request arrived), applies the conversation and returns the
// JinjaRender. A conversation that is not the expected JSON is ErrorCode::E_USAGE with the chat
// layer's words; a template that fails to parse or render, or that the chat layer cannot build
// a parser for, is ErrorCode::E_TEMPLATE with the engine's message. No exception leaves it. The
// chat layer's own log lines are silenced: what it has to say arrives as the error.
#pragma once

#include "mlens/infer/chat_render.h"
#include "mlens/infer/session.h"
#include "mlens/result.h"

namespace mlens {

Result<JinjaRender> render_jinja_chat(const Session& session, const JinjaChatRequest& request);

}  // namespace mlens
