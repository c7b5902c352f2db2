// Editing a 2 GiB sparse GGUF: every tensor hashes the same after each data path, the path taken
// is the one the filesystem allows, and an in-place edit writes the header and little more.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fstream>

#include "../../core/src/formats/keyed_hash.h"
#include "gguf_builder.h"
#include "mlens/edit/edit_in_place.h"
#include "mlens/edit/edit_write.h"
#include "mlens/formats/gguf_reader.h"
#include "sparse_models.h"
#include "test_paths.h"

using namespace mlens;

namespace {

constexpr uint64_t kTensorBytes = 512ull << 20;
constexpr int kTensors = 4;
constexpr uint64_t kChunk = 4u << 20;

// A GGUF header (chat template, EOS id, name) with four F32 tensors of 512 MiB in a hole, each
// with 4 KiB of distinct bytes at its start and in its middle.
std::string write_sparse_model(const test::TempDir& dir) {
    test::GgufBuilder b;
    b.header(kTensors, 4);
    b.kv_string("general.architecture", "llama");
    b.kv_string("general.name", "sparse-2g");
    b.kv_u32("tokenizer.ggml.eos_token_id", 2);
    b.kv_string("tokenizer.chat_template", "{{ old }}");
    for (int i = 0; i < kTensors; ++i) b.tensor_info("t" + std::to_string(i), {kTensorBytes / 4}, 0, i * kTensorBytes);
    b.pad_to(32);
    const uint64_t data_start = b.size();
    const std::string path = dir.file("sparse.gguf");
    test::write_whole_file(path, b.bytes);
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(data_start + kTensors * kTensorBytes)) == 0);
    for (int i = 0; i < kTensors; ++i)
        for (uint64_t at : {uint64_t{0}, kTensorBytes / 2}) {
            std::vector<uint8_t> mark(4096);
            for (size_t k = 0; k < mark.size(); ++k) mark[k] = static_cast<uint8_t>(k * 7 + i + at);
            REQUIRE(test::patch_file(path, data_start + i * kTensorBytes + at, mark));
        }
    return path;
}

// Each tensor's hash: KeyedHash of each 4 MiB chunk folded in order (an all-zero chunk, checked
// exactly, folds a constant, so the holes cost a comparison rather than a hash).
std::vector<uint64_t> tensor_hashes(const Model& m) {
    static const std::vector<uint8_t> zeros(kChunk, 0);
    std::vector<uint64_t> out;
    std::vector<uint8_t> chunk(kChunk);
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        uint64_t h = 0;
        for (uint64_t off = 0; off < *m.tensors[i].n_bytes; off += kChunk) {
            REQUIRE(m.read_tensor_bytes(i, off, kChunk, chunk.data()));
            const bool zero = std::memcmp(chunk.data(), zeros.data(), kChunk) == 0;
            h = h * 1000003u + (zero ? 1 : KeyedHash{}(std::string_view(reinterpret_cast<const char*>(chunk.data()), kChunk)));
        }
        out.push_back(h);
    }
    return out;
}

bool filesystem_clones(const test::TempDir& dir) {
    test::write_whole_file(dir.file("probe-a"), std::vector<uint8_t>(4096, 1));
    test::write_whole_file(dir.file("probe-b"), {});
    const int a = ::open(dir.file("probe-a").c_str(), O_RDONLY);
    const int b = ::open(dir.file("probe-b").c_str(), O_WRONLY);
    const bool clones = a >= 0 && b >= 0 && ::ioctl(b, FICLONE, a) == 0;
    ::close(a);
    ::close(b);
    return clones;
}

// The bytes of the filesystem blocks the marks of write_sparse_model fall in, from the data start
// on: what a copy that skips holes reads.
uint64_t marked_block_bytes(const std::string& path, uint64_t data_start) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    const uint64_t block = static_cast<uint64_t>(st.st_blksize);
    uint64_t total = 0;
    for (int i = 0; i < kTensors; ++i)
        for (uint64_t at : {uint64_t{0}, kTensorBytes / 2}) {
            const uint64_t begin = data_start + i * kTensorBytes + at;
            const uint64_t first_block = begin / block * block;
            const uint64_t end_block = (begin + 4096 + block - 1) / block * block;
            total += end_block - std::max(first_block, data_start);
        }
    return total;
}

uint64_t bytes_written_so_far() {
    std::ifstream io("/proc/self/io");
    std::string name;
    uint64_t value = 0;
    while (io >> name >> value)
        if (name == "wchar:") return value;
    FAIL("no wchar in /proc/self/io");
    return 0;
}

std::vector<uint8_t> read_prefix(const std::string& path, size_t n) {
    std::vector<uint8_t> out(n);
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n));
    out.resize(static_cast<size_t>(in.gcount()));
    return out;
}

uint64_t file_size(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return static_cast<uint64_t>(st.st_size);
}

uint64_t allocated_bytes(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return static_cast<uint64_t>(st.st_blocks) * 512;
}

WriteEditOptions forcing(DataPath path) {
    WriteEditOptions options;
    options.force_path = path;
    return options;
}

}  // namespace

TEST_CASE("editing a 2 GiB sparse GGUF keeps every tensor's hash on every data path", "[edit][sparse]") {
    test::TempDir dir;
    const std::string path = write_sparse_model(dir);
    auto model = open_gguf(path);
    REQUIRE(model);
    REQUIRE(model->error_count() == 0);
    const auto hashes = tensor_hashes(*model);
    REQUIRE(hashes.size() == kTensors);

    SECTION("a new 3 KiB chat template, another EOS id and a new name: the data streams, shifted") {
        const std::string chat_template = "{# " + std::string(3072, '-') + " #}{{ new }}";
        EditList edits{{Edit::set("tokenizer.chat_template", chat_template), Edit::set("tokenizer.ggml.eos_token_id", "3"),
                        Edit::set("general.name", "renamed model")}};
        auto plan = plan_edit(*model, edits);
        REQUIRE(plan);
        CHECK_FALSE(plan->fits_in_place);
        auto written = write_edit(*model, *plan, dir.file("out.gguf"));
        REQUIRE(written);
        CHECK(written->data_path == DataPath::stream);
        CHECK(written->data_bytes_copied == marked_block_bytes(path, model->files[0].data_start));
        CHECK(written->verification.tensors_equal == kTensors);
        auto out = open_gguf(dir.file("out.gguf"));
        REQUIRE(out);
        CHECK(tensor_hashes(*out) == hashes);
        CHECK(out->get_string("tokenizer.chat_template") == chat_template);
        CHECK(out->get_uint("tokenizer.ggml.eos_token_id") == 3u);
        CHECK(out->get_string("general.name") == "renamed model");
        CHECK(out->files[0].data_start == plan->new_data_start);
        CHECK(allocated_bytes(dir.file("out.gguf")) < (64u << 20));
    }
    SECTION("an EOS id that fits in place: cloned where the filesystem clones, copied in the kernel otherwise") {
        auto plan = plan_edit(*model, EditList{{Edit::set("tokenizer.ggml.eos_token_id", "7")}});
        REQUIRE(plan);
        REQUIRE(plan->fits_in_place);
        const DataPath expected = filesystem_clones(dir) ? DataPath::reflink : DataPath::copy_file_range;
        auto written = write_edit(*model, *plan, dir.file("clone.gguf"));
        REQUIRE(written);
        CHECK(written->data_path == expected);
        auto out = open_gguf(dir.file("clone.gguf"));
        REQUIRE(out);
        CHECK(tensor_hashes(*out) == hashes);
        CHECK(out->get_uint("tokenizer.ggml.eos_token_id") == 7u);
        SECTION("and streamed when the test hook forces it") {
            auto streamed = write_edit(*model, *plan, dir.file("streamed.gguf"), nullptr, forcing(DataPath::stream));
            REQUIRE(streamed);
            CHECK(streamed->data_path == DataPath::stream);
            auto again = open_gguf(dir.file("streamed.gguf"));
            REQUIRE(again);
            CHECK(tensor_hashes(*again) == hashes);
            CHECK(file_size(dir.file("streamed.gguf")) == file_size(dir.file("clone.gguf")));
        }
    }
    SECTION("in place: the header and little more is written, and undo puts it back") {
        const auto header_before = read_prefix(path, 1u << 20);
        auto plan = plan_edit(*model, EditList{{Edit::set("tokenizer.ggml.eos_token_id", "9"), Edit::set("general.name", "sparse-2G")}});
        REQUIRE(plan);
        REQUIRE(plan->fits_in_place);
        const uint64_t before = bytes_written_so_far();
        auto done = edit_in_place(*model, *plan);
        const uint64_t written = bytes_written_so_far() - before;
        REQUIRE(done);
        CHECK(written <= plan->old_data_start + (64u << 10));
        CHECK(done->span_bytes == plan->end_changed - plan->first_changed);
        auto out = open_gguf(path);
        REQUIRE(out);
        CHECK(out->get_uint("tokenizer.ggml.eos_token_id") == 9u);
        CHECK(out->get_string("general.name") == "sparse-2G");
        CHECK(tensor_hashes(*out) == hashes);
        auto undone = undo_edit(path);
        REQUIRE(undone);
        CHECK(undone->bytes_restored == done->span_bytes);
        CHECK(read_prefix(path, 1u << 20) == header_before);
        CHECK_FALSE(std::ifstream(undo_path_for(path)).good());
    }
}
