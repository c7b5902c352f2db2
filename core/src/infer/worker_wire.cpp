#include "worker_wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <string>

namespace mlens::wire {

namespace {

Error wire_error(std::string message) { return Error{ErrorCode::E_WIRE, "", std::nullopt, std::move(message)}; }

Status send_all(int fd, const uint8_t* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Error{ErrorCode::E_EOF, "", std::nullopt, std::string("the other side is gone: ") + std::strerror(errno)};
        data += n;
        size -= static_cast<size_t>(n);
    }
    return ok_status();
}

// Bytes read from the socket at a time: the most the kept bytes grow by before take() looks at them.
constexpr size_t kReceiveChunk = 1u << 20;
constexpr uint64_t kIndefinite = UINT64_MAX;

uint32_t frame_length(const uint8_t* head) {
    return head[0] | (uint32_t(head[1]) << 8) | (uint32_t(head[2]) << 16) | (uint32_t(head[3]) << 24);
}

// Walks the items of one CBOR value without building them, so that its nesting is known before
// nlohmann's decoder, which recurses once per level, sees it. Each container's remaining item
// count is kept on a stack (kIndefinite until its 0xff); a count larger than the bytes left is
// refused at once, as it cannot be met.
Status check_cbor_nesting(std::span<const uint8_t> body) {
    std::vector<uint64_t> open;
    size_t pos = 0;
    const Error ends_early = wire_error("a frame ends inside its CBOR value");
    // The argument of a head (RFC 8949 3.1): in the head itself, or in the 1, 2, 4 or 8 bytes after.
    auto argument = [&](uint8_t info, uint64_t& value) {
        if (info < 24) {
            value = info;
            return true;
        }
        if (body.size() - pos < (size_t{1} << (info - 24))) return false;
        value = 0;
        for (size_t i = 0; i < (size_t{1} << (info - 24)); ++i) value = value << 8 | body[pos++];
        return true;
    };
    // One item is complete: it counts against its container, which may complete in turn.
    auto finish_item = [&] {
        while (!open.empty() && open.back() != kIndefinite) {
            if (--open.back() > 0) return;
            open.pop_back();
        }
    };
    auto announces = [&](uint64_t count, const char* what) {
        return wire_error("a frame announces " + std::to_string(count) + " " + what + " in " + std::to_string(body.size() - pos) +
                          " bytes");
    };
    auto open_container = [&](uint64_t items) -> Status {
        if (items == 0) {
            finish_item();
            return ok_status();
        }
        if (items != kIndefinite && items > body.size() - pos) return announces(items, "items");
        if (open.size() == kMaxFrameDepth) return wire_error("a frame nests deeper than " + std::to_string(kMaxFrameDepth) + " levels");
        open.push_back(items);
        return ok_status();
    };
    do {
        if (pos >= body.size()) return ends_early;
        const uint8_t head = body[pos++];
        const uint8_t major = head >> 5, info = head & 31;
        if (head == 0xff) {
            if (open.empty() || open.back() != kIndefinite) return wire_error("a frame holds a CBOR break outside a container");
            open.pop_back();
            finish_item();
            continue;
        }
        if (info >= 28 && (info < 31 || major < 2 || major > 5)) return wire_error("a frame holds an invalid CBOR item");
        if (info == 31) {
            if (Status s = open_container(kIndefinite); !s) return s;
            continue;
        }
        uint64_t value = 0;
        if (!argument(info, value)) return ends_early;
        Status s = ok_status();
        if (major == 2 || major == 3) {
            if (value > body.size() - pos) return ends_early;
            pos += static_cast<size_t>(value);
            finish_item();
        } else if (major == 4) {
            s = open_container(value);
        } else if (major == 5) {
            // A pair is two items, each of at least one byte.
            s = value > (body.size() - pos) / 2 ? announces(value, "pairs") : open_container(value * 2);
        } else if (major == 6) {
            s = open_container(1);
        } else {
            finish_item();
        }
        if (!s) return s;
    } while (!open.empty());
    if (pos != body.size()) return wire_error("a frame has bytes after its CBOR value");
    return ok_status();
}

}  // namespace

Status write_frame(int fd, const Json& message) {
    std::vector<uint8_t> body = Json::to_cbor(message);
    if (body.size() > kMaxFrameBytes) return wire_error("a message of " + std::to_string(body.size()) + " bytes is too large");
    const auto n = static_cast<uint32_t>(body.size());
    const uint8_t head[4] = {static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n >> 16),
                             static_cast<uint8_t>(n >> 24)};
    Status st = send_all(fd, head, sizeof head);
    if (!st) return st;
    return send_all(fd, body.data(), body.size());
}

Status FrameReader::receive(int fd, bool wait) {
    const size_t had = m_bytes.size();
    m_bytes.resize(had + kReceiveChunk);
    ssize_t n = -1;
    do { n = ::recv(fd, m_bytes.data() + had, kReceiveChunk, wait ? 0 : MSG_DONTWAIT); } while (n < 0 && errno == EINTR);
    m_bytes.resize(had + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ok_status();
    if (n <= 0)
        return Error{ErrorCode::E_EOF, "", std::nullopt,
                     m_bytes.empty() ? "the other side closed the connection" : "the connection closed inside a message"};
    return ok_status();
}

std::optional<Result<Json>> FrameReader::take() {
    if (m_bytes.size() < 4) return std::nullopt;
    const uint32_t n = frame_length(m_bytes.data());
    if (n > kMaxFrameBytes)
        return Result<Json>(wire_error("a frame announces " + std::to_string(n) + " bytes, more than the " +
                                       std::to_string(kMaxFrameBytes) + " a frame may have"));
    if (m_bytes.size() - 4 < n) return std::nullopt;
    const std::span<const uint8_t> body(m_bytes.data() + 4, n);
    Status nesting = check_cbor_nesting(body);
    Json j = nesting ? Json::from_cbor(body.begin(), body.end(), true, false) : Json();
    m_bytes.erase(m_bytes.begin(), m_bytes.begin() + 4 + n);
    if (!nesting) return Result<Json>(nesting.error());
    if (j.is_discarded() || !j.is_object()) return Result<Json>(wire_error("a frame is not a CBOR object"));
    return Result<Json>(std::move(j));
}

Result<Json> FrameReader::read(int fd) {
    for (;;) {
        if (auto frame = take()) return std::move(*frame);
        if (Status s = receive(fd, true); !s) return s.error();
    }
}

Json encode_error(const Error& e) {
    Json j = {{"type", "error"}, {"code", code_name(e.code)}, {"field", e.field}, {"message", e.message}};
    if (e.offset) j["offset"] = *e.offset;
    return j;
}

Error decode_error(const Json& j) {
    Error e{code_from_name(j.at("code").get<std::string>()).value_or(ErrorCode::E_WIRE), j.value("field", std::string()), std::nullopt,
            j.at("message").get<std::string>()};
    if (j.contains("offset")) e.offset = j.at("offset").get<uint64_t>();
    return e;
}

}  // namespace mlens::wire
