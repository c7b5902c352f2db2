#include "sparse_models.h"

#include <fcntl.h>
#include <unistd.h>

#include <ggml.h>

#include "gguf_builder.h"
#include "safetensors_builder.h"

namespace mlens::test {

namespace {

// Writes `header` to a new file at `path` and extends it with a hole to `size` bytes.
bool write_with_hole(const std::string& path, const std::vector<uint8_t>& header, uint64_t size) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    bool ok =
        ::write(fd, header.data(), header.size()) == static_cast<ssize_t>(header.size()) && ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    return ::close(fd) == 0 && ok;
}

}  // namespace

std::vector<uint64_t> write_sparse_gguf(const std::string& path, const std::vector<SparseTensor>& tensors) {
    constexpr uint64_t kAlignment = 32;
    GgufBuilder g;
    g.header(tensors.size(), 1).kv_string("general.architecture", "llama");
    std::vector<uint64_t> relative;
    uint64_t at = 0;
    for (const SparseTensor& t : tensors) {
        uint64_t elements = 1;
        for (uint64_t d : t.ne) elements *= d;
        const auto type = static_cast<ggml_type>(t.ggml_type);
        relative.push_back(at);
        g.tensor_info(t.name, t.ne, t.ggml_type, at);
        at += (elements / ggml_blck_size(type) * ggml_type_size(type) + kAlignment - 1) / kAlignment * kAlignment;
    }
    g.pad_to(kAlignment);
    const uint64_t data_start = g.size();
    if (!write_with_hole(path, g.bytes, data_start + at)) return {};
    for (uint64_t& offset : relative) offset += data_start;
    return relative;
}

uint64_t write_sparse_safetensors(const std::string& path, const std::string& name, const std::string& dtype,
                                  const std::vector<uint64_t>& shape, uint64_t data_bytes) {
    std::string dims = "[";
    for (size_t i = 0; i < shape.size(); ++i) dims += (i ? "," : "") + std::to_string(shape[i]);
    dims += "]";
    std::string header = "{" + st_entry(name, dtype, dims, 0, data_bytes) + "}";
    while ((8 + header.size()) % 8) header += ' ';
    const std::vector<uint8_t> start = safetensors_bytes(header);
    return write_with_hole(path, start, start.size() + data_bytes) ? start.size() : 0;
}

bool patch_file(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return false;
    bool ok = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) == static_cast<ssize_t>(bytes.size());
    return ::close(fd) == 0 && ok;
}

}  // namespace mlens::test
