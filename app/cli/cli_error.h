// The one error contract of the mlens commands.
//
// A command that stops without its result says why through fail() or usage_error(), never by
// writing to stderr itself:
//  - stderr gets one line "error: PATH: E_CODE field offset=N: message" for a core Error, or
//    "error: PATH: message" for a message of the command's own (escaped; "PATH: " left out when the
//    error is about no file or its message starts with PATH), so every message names its file; a
//    cancellation (E_CANCELLED) is about no file: "error: E_CANCELLED: cancelled";
//  - with --json, stdout gets exactly one JSON value: the command's result when it printed one
//    (print_json_result), otherwise {"error": {"code", "message", "path", "offset"}} of the first
//    failure reported (offset absent when the error has none; path "" when it is about no file).
//    finish_command prints that object once the command returned; the schemas in assets/schemas
//    admit it (mlens-common.schema.json#/$defs/error_output).
//  - the exit status is kExitUsage (2) for a usage error, one the command line alone shows — a bad
//    option value, options that contradict each other, names that match nothing, anything CLI11
//    refuses, two outputs that are one file; code E_USAGE, or the core's E_USAGE, E_ARGS,
//    E_NO_VISION, E_OUTPUTS_SAME_FILE — and kExitBroken (1) otherwise. An output refused for what
//    is on disk at its path (E_OUTPUT_EXISTS, E_OUTPUT_IS_INPUT, E_OUTPUT_IN_STORE,
//    E_OUTPUT_NOT_REGULAR, E_HARD_LINKED) is the second kind: the same command line succeeds
//    elsewhere.
// A command that fails with exit status 1 and --json but reported nothing gets the error object
// with code E_FAILED, so the contract holds for it too.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "mlens/result.h"

namespace mlens::cli {

constexpr int kExitOk = 0;
constexpr int kExitBroken = 1;
constexpr int kExitUsage = 2;

// Whether a core error means the command line asked for something impossible (exit status 2).
bool is_usage_code(ErrorCode code);

// Reports `error`, about the file or reference `path` ("" when it is about none), as above and
// returns the exit status it calls for (kExitUsage for a usage code, else kExitBroken).
// A path as output shows it: a remote reference (remote_url.h) without userinfo or query, where
// credentials go; anything else as given.
std::string shown_path(const std::string& path);

int fail(const std::string& path, const Error& error);
// fail() of an error about `subject`, a part of the file (a tensor, an entry), that the error does
// not name: "error: PATH: SUBJECT: E_CODE ...".
int fail(const std::string& path, const std::string& subject, const Error& error);
// fail() of a message of the command's own, whose code is only in the JSON error object.
int fail(const std::string& path, ErrorCode code, const std::string& message);

// A usage error found after CLI11 parsed the command line (a value outside its set, options that
// do not go together): fail("", E_USAGE, message), so kExitUsage. `message` names the option.
int usage_error(const std::string& message);

// Prints the command's JSON result on stdout (json_text, one line break after it).
void print_json_result(const nlohmann::json& result);

// Whether the subcommand CLI11 parsed (in part, on a usage error) was given --json.
bool json_requested(const CLI::App& app);
// main's last step before flushing: with --json and a failing exit status, prints the error object
// unless a result was printed. Returns exit_code.
int finish_command(int exit_code, bool json);
// main's handling of a usage error: CLI11's message on stderr (app.exit), the E_USAGE error object
// with --json, and kExitUsage.
int finish_usage_error(CLI::App& app, const CLI::ParseError& e, bool json);

}  // namespace mlens::cli
