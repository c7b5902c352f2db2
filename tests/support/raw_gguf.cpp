#include "raw_gguf.h"

#include <cstring>

#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/model/model.h"

namespace mlens::test {

Status write_raw_gguf(const std::string& path, const std::vector<RawTensor>& tensors) {
    Model m;
    m.format = Format::gguf;
    MetadataEntry arch;
    arch.key = "general.architecture";
    arch.value = Value::of_string("llama");
    m.metadata.push_back(arch);
    for (const RawTensor& r : tensors) {
        TensorInfo t;
        t.name = r.name;
        t.type = describe_ggml_type(r.type);
        t.ne = r.ne;
        t.n_elements = 1;
        for (uint64_t d : r.ne) t.n_elements *= d;
        t.n_bytes = r.bytes.size();
        m.tensors.push_back(t);
    }
    return write_gguf(m, path, nullptr, [&](size_t i, uint64_t off, uint64_t len, void* dst) -> Status {
        std::memcpy(dst, tensors[i].bytes.data() + off, len);
        return ok_status();
    });
}

}  // namespace mlens::test
