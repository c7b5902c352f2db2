// The worker's side of one request (not part of the public API): what an operation's serve()
// (operations.h, defined in worker_ops.cpp) gets besides its options, and the table the worker
// dispatches requests from.
//
// Contract:
//  - model() is the model the worker loaded; job() is the request's JobContext (cancel, progress).
//  - load_model_b() loads the request's second model ("b_path", checked against "b_identity")
//    with the options of model(); its errors start "model B: ". has_model_b() tells whether the
//    request names one.
//  - stream(step) sends one step to the client at once, as a "steps" frame.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "mlens/infer/model_loader.h"
#include "mlens/infer/operations.h"
#include "infer/worker_wire.h"

namespace mlens {

class WorkerCall {
public:
    using Send = std::function<void(const wire::Json& frame)>;
    using LoadModel = std::function<Result<LoadedSession>(const wire::Json& request, JobContext& job)>;

    WorkerCall(Session& model, JobContext& job, const wire::Json& request, Send send, LoadModel load_b)
        : m_model(model), m_job(job), m_request(request), m_send(std::move(send)), m_load_b(std::move(load_b)) {}

    Session& model() const { return m_model; }
    JobContext& job() const { return m_job; }
    bool has_model_b() const { return m_request.contains("b_path"); }
    Result<LoadedSession> load_model_b() { return m_load_b(m_request, m_job); }

    template <typename Step>
    void stream(const Step& step) {
        m_send(wire::Json{{"type", "steps"}, {"steps", wire::Json::array({wire::Json(step)})}});
    }

private:
    Session& m_model;
    JobContext& m_job;
    const wire::Json& m_request;
    Send m_send;
    LoadModel m_load_b;
};

// Runs the operation of a request on its call: the outcome as a "result" frame, or the error.
using OperationHandler = Result<wire::Json> (*)(const wire::Json& request, WorkerCall& call);
// Every operation of AllOps by its name.
const std::map<std::string, OperationHandler, std::less<>>& operation_handlers();

}  // namespace mlens
