// WorkerSession::run<Op> (not part of the public API): its definition, which needs the wire form
// of Op's Options, Outcome and Step, and WorkerRunInstances, whose explicit instantiation for
// AllOps (in worker_run_instances.cpp, where those wire forms are known) gives every run<Op> the callers
// link against.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "mlens/infer/worker_session.h"
#include "worker_wire.h"

namespace mlens {

namespace worker_detail {

// A reply that does not decode, as an Error.
Error decode_failure(const std::exception& e);

// Runs `decode` on a reply, turning a malformed reply into an Error instead of an exception.
template <typename F>
auto decoded(Result<wire::Json> reply, F decode) -> Result<decltype(decode(std::declval<const wire::Json&>()))> {
    if (!reply) return reply.error();
    try {
        return decode(*reply);
    } catch (const std::exception& e) { return decode_failure(e); }
}

// The "b_path" and "b_identity" fields that name model B to the worker: its worker path, and the
// file version the worker checks before loading it.
Result<wire::Json> second_model_fields(const std::string& b_text);

}  // namespace worker_detail

template <typename Op>
Result<typename Op::Outcome> WorkerSession::run(typename Op::Options options, JobContext* job, const OnStep<Op>& on_step) {
    if constexpr (requires(OpClient & client) { Op::prepare(options, client); }) {
        OpClient client{m_path, {}};
        if (Status prepared = Op::prepare(options, client); !prepared) return prepared.error();
        m_write_folders.insert(m_write_folders.end(), client.write_folders.begin(), client.write_folders.end());
    }
    wire::Json request = {{"op", std::string(Op::name)}, {"options", options}};
    if constexpr (requires { options.b_model; }) {
        if (!options.b_model.empty()) {
            auto b = worker_detail::second_model_fields(options.b_model);
            if (!b) return b.error();
            request.update(*b);
        }
    }
    // A step that does not decode ends the delivery and is returned in place of the reply.
    std::optional<Error> step_error;
    FrameHandler on_frame;
    using Step = typename StepOf<Op>::type;
    if constexpr (!std::is_same_v<Step, NoStep>) {
        if (on_step)
            on_frame = [&](const wire::Json& frame) {
                if (step_error) return;
                try {
                    on_step(frame.get<Step>());
                } catch (const std::exception& e) { step_error = worker_detail::decode_failure(e); }
            };
    }
    constexpr bool quick = [] {
        if constexpr (requires { Op::quick; })
            return Op::quick;
        else
            return false;
    }();
    auto reply = call(request, job, quick, on_frame);
    if (step_error) return *step_error;
    return worker_detail::decoded(std::move(reply), [](const wire::Json& j) { return j.at("result").get<typename Op::Outcome>(); });
}

// WorkerSession::run of every operation, instantiated here (where the wire is known) for the
// callers to link against.
template <typename List>
struct WorkerRunInstances;
template <typename... Ops>
struct WorkerRunInstances<OpList<Ops...>> {
    static auto all() { return std::make_tuple(&WorkerSession::run<Ops>...); }
};

}  // namespace mlens
