// Result<T>: the value of a core operation or the Error that stopped it.
//
// Contract: no exception crosses the core boundary. A function that can fail on input returns
// Result<T>; programmer errors (calling value() on an error) assert. Error carries the machine
// code (an ErrorCode, printed as e.g. ErrorCode::E_TRUNCATED), the field path in the input ("kv[0].key"), the absolute byte offset
// where one applies, and a human message with exact numbers.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
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

// Result of an operation that produces nothing but can fail.
struct Done {};
using Status = Result<Done>;
inline Status ok_status() { return Done{}; }

}  // namespace mlens
