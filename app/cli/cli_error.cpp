#include "cli_error.h"

#include <cstdio>
#include <iostream>

#include "mlens/model/model_json.h"
#include "mlens/remote/remote_url.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

// One command runs per process: what it reported is process state, read once by finish_command.
struct ErrorState {
    std::optional<nlohmann::json> first_failure;  // the "error" object of the first failure
    bool result_printed = false;
};

ErrorState& state() {
    static ErrorState s;
    return s;
}

void record(const std::string& code, const std::string& message, const std::string& path, std::optional<uint64_t> offset) {
    if (state().first_failure) return;
    nlohmann::json e = {{"code", code}, {"message", message}, {"path", shown_path(path)}};
    if (offset) e["offset"] = *offset;
    state().first_failure = std::move(e);
}

void print_error_object() {
    print_json_result({{"error", *state().first_failure}});
    state().result_printed = true;
}

}  // namespace

std::string shown_path(const std::string& path) { return is_remote_reference(path) ? display_url(path) : path; }

bool is_usage_code(ErrorCode code) {
    switch (code) {
        case ErrorCode::E_USAGE:
        case ErrorCode::E_ARGS:
        case ErrorCode::E_NO_VISION:
        case ErrorCode::E_OUTPUTS_SAME_FILE:
            return true;
        default:
            return false;
    }
}

namespace {

// "error: PATH: TEXT" on stderr, "PATH: " left out when there is no path or when `message`, the
// part of TEXT after its code, starts with it already ("PATH: not a regular file").
void print_error_line(const std::string& path, const std::string& text, const std::string& message) {
    const std::string shown = escape_for_display(shown_path(path));
    const bool named = path.empty() || escape_for_display(message, 2000).starts_with(shown);
    std::cerr << "error: " << (named ? std::string() : shown + ": ") << escape_for_display(text, 2000) << "\n";
}

}  // namespace

int fail(const std::string& path, const Error& error) { return fail(path, "", error); }

int fail(const std::string& path, const std::string& subject, const Error& error) {
    // A cancellation is the user's doing, about no file.
    if (error.code == ErrorCode::E_CANCELLED && !(path.empty() && subject.empty())) return fail("", "", error);
    const std::string about = subject.empty() ? std::string() : subject + ": ";
    print_error_line(path, about + error.to_string(), about + error.message);
    record(std::string(code_name(error.code)), about + (error.field.empty() ? std::string() : error.field + ": ") + error.message, path,
           error.offset);
    return is_usage_code(error.code) ? kExitUsage : kExitBroken;
}

int fail(const std::string& path, ErrorCode code, const std::string& message) {
    print_error_line(path, message, message);
    record(std::string(code_name(code)), message, path, std::nullopt);
    return is_usage_code(code) ? kExitUsage : kExitBroken;
}

int usage_error(const std::string& message) { return fail("", ErrorCode::E_USAGE, message); }

void print_json_result(const nlohmann::json& result) {
    // Straight to stdout, around the line fitting of text output (terminal_output.h): a JSON
    // string is never broken.
    std::cout.flush();
    const std::string text = json_text(result) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    state().result_printed = true;
}

bool json_requested(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands()) {
        const CLI::Option* json = sub->get_option_no_throw("--json");
        if (json && json->count() > 0) return true;
    }
    return false;
}

int finish_command(int exit_code, bool json) {
    if (!json || exit_code == kExitOk || state().result_printed) return exit_code;
    if (!state().first_failure) record("E_FAILED", "the command failed; standard error says why", "", std::nullopt);
    print_error_object();
    return exit_code;
}

int finish_usage_error(CLI::App& app, const CLI::ParseError& e, bool json) {
    app.exit(e);
    if (json && !state().result_printed) {
        state().first_failure.reset();  // the usage error is why the command did not run
        record("E_USAGE", e.what(), "", std::nullopt);
        print_error_object();
    }
    return kExitUsage;
}

}  // namespace mlens::cli
