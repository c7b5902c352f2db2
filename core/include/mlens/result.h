// Result<T>: the value of a core operation or the Error that stopped it; Partial<T>: a value that
// is usable but may be incomplete, with the Error that cut it short.
//
// Contract: no exception crosses the core boundary. A function that can fail on input returns
// Result<T>; programmer errors (calling value() on an error) assert. Error carries the machine
// code (an ErrorCode, printed as e.g. ErrorCode::E_TRUNCATED), the field path in the input ("kv[0].key"), the absolute byte offset
// where one applies, and a human message with exact numbers.
//  - Errors travel only in Result and Partial: a result struct carries no error or cancelled
//    field of its own.
//  - Partial<T> is for an operation that hands back what it gathered even when stopped (a
//    listing cut short by cancel): `value` is always usable, `stopped_by` says why it is not
//    whole (nullopt when it is).
//  - cancelled_error(operation) is the one way to say a job was cancelled: E_CANCELLED with the
//    message "OPERATION cancelled" ("cancelled" without an operation).
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "mlens/error_code.h"

namespace mlens {

struct Error {
    ErrorCode code = ErrorCode::E_IO;
    std::string field;  // field path, e.g. "tensors[0].offset"; empty if none
    std::optional<uint64_t> offset;  // absolute byte offset in the file, when one applies
    std::string message;  // exact, escaped, human-readable

    // "E_CODE field offset=N: message" (parts omitted when empty).
    std::string to_string() const;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::move(value)) {}
    Result(Error error) : m_state(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<T>(m_state);
    }
    const T& value() const& {
        assert(ok());
        return std::get<T>(m_state);
    }
    T&& value() && {
        assert(ok());
        return std::get<T>(std::move(m_state));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const {
        assert(!ok());
        return std::get<Error>(m_state);
    }

private:
    std::variant<T, Error> m_state;
};

template <typename T>
struct Partial {
    T value;
    std::optional<Error> stopped_by;  // what cut `value` short; nullopt when it is complete

    bool complete() const { return !stopped_by.has_value(); }
    bool cancelled() const { return stopped_by && stopped_by->code == ErrorCode::E_CANCELLED; }
    T* operator->() { return &value; }
    const T* operator->() const { return &value; }
    T& operator*() { return value; }
    const T& operator*() const { return value; }
};

inline Error cancelled_error(std::string_view operation = {}, std::optional<uint64_t> offset = std::nullopt) {
    std::string message = operation.empty() ? "cancelled" : std::string(operation) + " cancelled";
    return Error{ErrorCode::E_CANCELLED, "", offset, std::move(message)};
}
inline bool is_cancelled(const Error& error) { return error.code == ErrorCode::E_CANCELLED; }

// Result of an operation that produces nothing but can fail.
struct Done {};
using Status = Result<Done>;
inline Status ok_status() { return Done{}; }

}  // namespace mlens
