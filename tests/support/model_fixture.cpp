#include "model_fixture.h"

#include <ggml.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_writer.h"
#include "model_parts.h"

namespace mlens::test {

std::vector<float> test_signal(uint64_t n, uint32_t seed) {
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) {
        double x = static_cast<double>(i) + seed * 0.37;
        v[i] = static_cast<float>(0.6 * std::sin(x * 0.731) + 0.3 * std::sin(x * 0.0137 + seed) + 0.1 * std::cos(x * 2.3));
    }
    return v;
}

std::vector<std::vector<uint8_t>> write_fixture_model(const std::string& path, const std::vector<FixtureTensor>& tensors,
                                                      const std::string& architecture) {
    Model m;
    add_metadata(m, "general.architecture", Value::of_string(architecture));
    return write_fixture_gguf(path, std::move(m.metadata), tensors);
}

std::vector<std::vector<uint8_t>> write_fixture_gguf(const std::string& path, std::vector<MetadataEntry> metadata,
                                                     const std::vector<FixtureTensor>& tensors) {
    Model m;
    m.format = Format::gguf;
    m.metadata = std::move(metadata);
    std::vector<std::vector<uint8_t>> data;
    for (const FixtureTensor& f : tensors) {
        auto type = static_cast<ggml_type>(f.ggml_type);
        TensorInfo t = tensor_info(f.name, f.ggml_type, f.ne);
        const int64_t n_per_row = static_cast<int64_t>(f.ne[0]);
        const int64_t rows = static_cast<int64_t>(f.values.size()) / n_per_row;
        std::vector<uint8_t> bytes(ggml_row_size(type, n_per_row) * rows);
        if (type == GGML_TYPE_F32) {
            std::memcpy(bytes.data(), f.values.data(), bytes.size());
        } else {
            std::vector<float> importance(n_per_row, 1.0f);
            const float* imatrix = ggml_quantize_requires_imatrix(type) ? importance.data() : nullptr;
            ggml_quantize_chunk(type, f.values.data(), bytes.data(), 0, rows, n_per_row, imatrix);
        }
        t.n_bytes = bytes.size();
        m.tensors.push_back(t);
        data.push_back(std::move(bytes));
    }
    Status s = write_gguf(m, path, nullptr, [&](size_t i, uint64_t off, uint64_t len, void* dst) -> Status {
        std::memcpy(dst, data[i].data() + off, len);
        return ok_status();
    });
    if (!s) throw std::runtime_error(s.error().to_string());
    return data;
}

}  // namespace mlens::test
