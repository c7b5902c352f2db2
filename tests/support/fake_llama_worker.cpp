// A stand-in for mlens-llama-worker (started through MLENS_LLAMA_WORKER) that breaks the wire on
// purpose, for the tests of WorkerSession's limits. It reads the first request from the channel
// (`--channel FD`, as the real worker), answers as MLENS_FAKE_WORKER_MODE says, then waits
// without sending anything until the client closes the socket or kills it:
//   deep       a frame of 100000 nested one-element arrays
//   oversized  a frame header announcing 2^32 - 1 bytes
//   many       a frame whose map announces 2^40 pairs in a few bytes
//   partial    a frame header announcing 512 MiB, then 16 bytes of it
//   silent     nothing
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool send_bytes(int fd, const std::vector<uint8_t>& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return false;
        sent += static_cast<size_t>(n);
    }
    return true;
}

std::vector<uint8_t> header(uint32_t length) {
    return {static_cast<uint8_t>(length), static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length >> 16),
            static_cast<uint8_t>(length >> 24)};
}

std::vector<uint8_t> framed(const std::vector<uint8_t>& body) {
    std::vector<uint8_t> bytes = header(static_cast<uint32_t>(body.size()));
    bytes.insert(bytes.end(), body.begin(), body.end());
    return bytes;
}

std::vector<uint8_t> reply_for(const std::string& mode) {
    if (mode == "deep") {
        std::vector<uint8_t> body(100000, 0x81);  // array of one item, 100000 times
        body.push_back(0x00);
        return framed(body);
    }
    if (mode == "oversized") return header(0xffffffffu);
    if (mode == "many") return framed({0xbb, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x61});
    if (mode == "partial") {
        std::vector<uint8_t> bytes = header(512u << 20);
        bytes.insert(bytes.end(), 16, 0x9f);
        return bytes;
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    int fd = -1;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--channel") == 0) fd = std::atoi(argv[i + 1]);
    const char* mode = std::getenv("MLENS_FAKE_WORKER_MODE");
    if (fd < 0 || !mode) return 2;
    uint8_t head[4];
    if (::recv(fd, head, sizeof head, MSG_WAITALL) != static_cast<ssize_t>(sizeof head)) return 1;
    uint32_t remaining = head[0] | (uint32_t(head[1]) << 8) | (uint32_t(head[2]) << 16) | (uint32_t(head[3]) << 24);
    uint8_t buf[4096];
    while (remaining > 0) {
        const ssize_t n = ::recv(fd, buf, remaining < sizeof buf ? remaining : sizeof buf, 0);
        if (n <= 0) return 1;
        remaining -= static_cast<uint32_t>(n);
    }
    if (!send_bytes(fd, reply_for(mode))) return 1;
    while (::recv(fd, buf, sizeof buf, 0) > 0) {}
    return 0;
}
