// Importance matrices: the GGUF and legacy layouts of llama-imatrix read back exactly, the
// importance llama-quantize derives from them, their summaries, resolve's detection by content,
// malformed files refused with the field, and mlens imatrix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gguf_builder.h"
#include "gguf_py.h"
#include "imatrix_fixture.h"
#include "mlens/open/target.h"
#include "mlens/quant/imatrix.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// Two entries: a stacked expert tensor of 3 experts × 4 columns whose expert 1 saw no token and
// whose expert 2 has a column never activated, and a plain tensor of 8 columns.
std::vector<test::ImatrixFixtureEntry> fixture_entries() {
    return {{"blk.0.ffn_down_exps.weight", 4, {10, 0, 4}, {1, 2, 3, 4, 0, 0, 0, 0, 8, 0, 2, 6}},
            {"blk.0.attn_q.weight", 8, {16}, {0.5f, 1, 2, 4, 8, 16, 32, 64}}};
}

ByteSourcePtr gguf_fixture() { return memory_source(test::gguf_imatrix_bytes(fixture_entries(), {"wiki.train.raw"}, 7, 512), "im.gguf"); }
ByteSourcePtr legacy_fixture() { return memory_source(test::legacy_imatrix_bytes(fixture_entries(), 7, "wiki.train.raw"), "im.dat"); }

}  // namespace

TEST_CASE("a GGUF imatrix reads back its datasets, chunks, counts and sums", "[imatrix]") {
    Result<Imatrix> m = read_imatrix(gguf_fixture());
    REQUIRE(m.ok());
    CHECK(m->format == ImatrixFormat::gguf);
    CHECK(m->datasets == std::vector<std::string>{"wiki.train.raw"});
    CHECK(m->chunk_count == 7u);
    CHECK(m->chunk_size == 512u);
    REQUIRE(m->entries.size() == 2);
    const ImatrixEntry& exps = m->entries[0];
    CHECK(exps.name == "blk.0.ffn_down_exps.weight");
    CHECK(exps.columns == 4);
    CHECK(exps.experts == 3);
    CHECK(exps.counts == std::vector<double>{10, 0, 4});
    CHECK(*read_sums(*m, exps, 2) == std::vector<float>{8, 0, 2, 6});
    CHECK(read_sums(*m, exps, 3).error().code == ErrorCode::E_RANGE);
    // llama-quantize: sums / count, 1 for an expert that saw no token.
    CHECK(*importance(*m, exps, 0) == std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
    CHECK(*importance(*m, exps, 1) == std::vector<float>{1, 1, 1, 1});
    CHECK(*importance(*m, exps, 2) == std::vector<float>{2, 0, 0.5f, 1.5f});
    CHECK(m->find("blk.0.attn_q.weight") == &m->entries[1]);
    CHECK(m->find("blk.0.attn_k.weight") == nullptr);

    Result<ImatrixEntrySummary> s = summarize_entry(*m, exps, 4);
    REQUIRE(s.ok());
    REQUIRE(s->experts.size() == 3);
    CHECK(s->experts[0].sum == 10);
    CHECK(s->experts[1].count == 0);
    CHECK(s->experts[1].zero_columns == 4);
    CHECK(s->experts[2].zero_columns == 1);
    CHECK(s->inactive_experts == 1);
    CHECK(s->zero_columns == 5);
    CHECK(s->zero_importance == 1);
    CHECK(s->min_importance == 0);
    CHECK(s->max_importance == 2);
    CHECK(s->mean_importance == Approx((0.1 + 0.2 + 0.3 + 0.4 + 2 + 0 + 0.5 + 1.5) / 8));
    // log10 of 0.1 … 2 over 4 bins: the seven positive importances.
    const Histogram& h = s->log10_importance;
    CHECK(h.lo == Approx(-1));
    CHECK(h.hi == Approx(std::log10(2.0)));
    CHECK(h.counts == std::vector<uint64_t>{2, 2, 1, 2});
}

TEST_CASE("a legacy imatrix reads back as llama.cpp's loader reads it", "[imatrix]") {
    Result<Imatrix> m = read_imatrix(legacy_fixture());
    REQUIRE(m.ok());
    CHECK(m->format == ImatrixFormat::legacy);
    CHECK(m->datasets == std::vector<std::string>{"wiki.train.raw"});
    CHECK(m->chunk_count == 7u);
    CHECK_FALSE(m->chunk_size.has_value());
    REQUIRE(m->entries.size() == 2);
    // No row length in the legacy layout: one expert of all the values, ncall as its count.
    const ImatrixEntry& exps = m->entries[0];
    CHECK(exps.columns == 12);
    CHECK(exps.experts == 1);
    CHECK(exps.counts == std::vector<double>{10});
    CHECK(exps.counts_offset == 4 + 4 + exps.name.size());
    CHECK(*importance(*m, m->entries[1], 0) == std::vector<float>{0.5f / 16, 1.f / 16, 2.f / 16, 4.f / 16, 0.5f, 1, 2, 4});

    // Without the optional trailer it still opens.
    std::vector<uint8_t> bare = test::legacy_imatrix_bytes(fixture_entries(), 7, "");
    bare.resize(bare.size() - 8);
    Result<Imatrix> no_trailer = read_imatrix(memory_source(bare));
    REQUIRE(no_trailer.ok());
    CHECK_FALSE(no_trailer->chunk_count.has_value());
    CHECK(no_trailer->datasets.empty());
}

TEST_CASE("importance_for gives each expert's rows their run, from either layout", "[imatrix]") {
    Result<Imatrix> gguf = read_imatrix(gguf_fixture());
    Result<Imatrix> legacy = read_imatrix(legacy_fixture());
    REQUIRE((gguf.ok() && legacy.ok()));
    // A stacked tensor of 3 experts × 2 rows of 4 values.
    for (const Imatrix* m : {&*gguf, &*legacy}) {
        Result<ColumnImportance> all = importance_for(*m, "blk.0.ffn_down_exps.weight", 4, 6, std::nullopt);
        REQUIRE(all.ok());
        CHECK(all->rows_per_run == 2);
        CHECK(all->values.size() == 12);
        CHECK(all->run_of_row(5)[0] == (m == &*gguf ? 2.0f : 0.8f));
        Result<ColumnImportance> one = importance_for(*m, "blk.0.ffn_down_exps.weight", 4, 2, 2);
        REQUIRE(one.ok());
        CHECK(one->values == std::vector<float>(all->values.begin() + 8, all->values.end()));
        CHECK(one->rows_per_run == 2);
    }
    CHECK(importance_for(*gguf, "blk.1.attn_q.weight", 8, 4, std::nullopt).error().message ==
          "the importance matrix has no entry for blk.1.attn_q.weight");
    CHECK(importance_for(*gguf, "blk.0.attn_q.weight", 16, 4, std::nullopt).error().message ==
          "the importance matrix has 8 columns for blk.0.attn_q.weight, whose rows have 16 values");
    CHECK(importance_for(*gguf, "blk.0.ffn_down_exps.weight", 4, 5, std::nullopt).error().message ==
          "blk.0.ffn_down_exps.weight has 5 rows, which do not split into the importance matrix's 3 experts");
    CHECK(importance_for(*gguf, "blk.0.ffn_down_exps.weight", 4, 2, 3).error().code == ErrorCode::E_IMATRIX_SHAPE);
}

TEST_CASE("resolve tells an imatrix by its content, whatever its name", "[imatrix]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("stats.bin"), test::gguf_imatrix_bytes(fixture_entries(), {"d"}, 1, 8));
    test::write_whole_file(dir.file("model.gguf"), test::legacy_imatrix_bytes(fixture_entries(), 1, "d"));
    Target gguf = resolve(dir.file("stats.bin"));
    CHECK(gguf.kind == TargetKind::imatrix);
    CHECK(gguf.format == Format::gguf);
    CHECK(std::string(target_kind_name(gguf)) == "imatrix file");
    // A GGUF imatrix is a GGUF like any other: its keys and tensors open as a Model.
    Result<Model> as_gguf = open_target(gguf);
    REQUIRE(as_gguf.ok());
    CHECK(as_gguf->tensors.size() == 4);
    Target legacy = resolve(dir.file("model.gguf"));
    CHECK(legacy.kind == TargetKind::imatrix);
    CHECK(legacy.format == Format::unknown);
    CHECK(open_target(legacy).error().message ==
          "a legacy importance matrix (llama-imatrix .dat), not a model: `mlens imatrix PATH` reads it");
    CHECK_FALSE(looks_like_imatrix(*memory_source(std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o', '\n'})));
}

TEST_CASE("malformed imatrix files are refused with the field and offset", "[imatrix][malformed]") {
    const std::vector<uint8_t> legacy = test::legacy_imatrix_bytes(fixture_entries(), 7, "wiki.train.raw");
    // Every cut is an error but those at the end of the entries and after the chunk count: the
    // trailer is optional, and so is its dataset name.
    const size_t entries_end = legacy.size() - 8 - 14;
    for (size_t n = 0; n < legacy.size(); ++n) {
        Result<Imatrix> cut =
            read_imatrix(memory_source(std::vector<uint8_t>(legacy.begin(), legacy.begin() + static_cast<std::ptrdiff_t>(n))));
        INFO(n);
        CHECK(cut.ok() == (n == entries_end || n == entries_end + 4));
        if (!cut.ok())
            CHECK((cut.error().code == ErrorCode::E_TRUNCATED || cut.error().code == ErrorCode::E_COUNT ||
                   cut.error().code == ErrorCode::E_NOT_IMATRIX));
    }
    auto with_u32_at = [&](size_t offset, uint32_t v) {
        std::vector<uint8_t> b = legacy;
        std::memcpy(b.data() + offset, &v, 4);
        return read_imatrix(memory_source(b));
    };
    Result<Imatrix> entries = with_u32_at(0, 0x7fffffff);
    CHECK(entries.error().code == ErrorCode::E_COUNT);
    CHECK(entries.error().field == "n_entries");
    Result<Imatrix> name = with_u32_at(4, 0xfffffff0);
    CHECK(name.error().field == "entries[0].name_length");
    CHECK(name.error().offset == 4u);
    const size_t nval_at = 4 + 4 + fixture_entries()[0].name.size() + 4;
    Result<Imatrix> values = with_u32_at(nval_at, 1u << 30);
    CHECK(values.error().code == ErrorCode::E_COUNT);
    CHECK(values.error().field == "entries[0].n_values");
    CHECK(values.error().offset == nval_at);
    CHECK(with_u32_at(nval_at - 4, 0x80000000u).error().field == "entries[0].ncall");

    // GGUF: a sums tensor without its counts, counts of another type, counts that do not match.
    // GGUF: a sums tensor without its counts; counts for more experts than the sums hold.
    const std::vector<uint8_t> gguf = test::gguf_imatrix_bytes(fixture_entries(), {}, 1, 1);
    const std::string counts_name = "blk.0.attn_q.weight.counts";
    const auto counts_info = std::search(gguf.begin(), gguf.end(), counts_name.begin(), counts_name.end()) - gguf.begin();
    std::vector<uint8_t> unpaired = gguf;
    unpaired[static_cast<size_t>(counts_info) + counts_name.size() - 1] = 'z';  // "….countz"
    Result<Imatrix> no_counts = read_imatrix(memory_source(unpaired));
    CHECK(no_counts.error().code == ErrorCode::E_IMATRIX_SHAPE);
    CHECK(no_counts.error().message == "blk.0.attn_q.weight has in_sum2 but no counts");
    std::vector<uint8_t> two = gguf;
    two[static_cast<size_t>(counts_info) + counts_name.size() + 4 + 8] = 2;  // ne = [1, 2]
    CHECK(read_imatrix(memory_source(two)).error().message == "blk.0.attn_q.weight: 8 sums are not 2 experts of 8 columns");
    // A GGUF model is not an importance matrix.
    test::GgufBuilder plain;
    plain.header(0, 1).kv_string("general.architecture", "llama");
    CHECK(read_imatrix(memory_source(plain.bytes)).error().code == ErrorCode::E_NOT_IMATRIX);
}

TEST_CASE("mlens imatrix prints each entry's statistics, one entry's experts and histogram", "[imatrix][cli]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("im.gguf"), test::gguf_imatrix_bytes(fixture_entries(), {"wiki.train.raw"}, 7, 512));
    auto run = test::run_mlens({"imatrix", dir.file("im.gguf"), "--json"});
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    auto j = nlohmann::json::parse(run.out);
    CHECK(j["format"] == "GGUF");
    CHECK(j["count_unit"] == "tokens");
    CHECK(j["chunk_count"] == 7);
    REQUIRE(j["entries"].size() == 2);
    CHECK(j["entries"][0]["counts"] == nlohmann::json::array({10.0, 0.0, 4.0}));
    CHECK(j["entries"][0]["sum"] == 26.0);
    CHECK(j["entries"][0]["inactive_experts"] == 1);
    CHECK(j["entries"][1]["sum"] == 127.5);

    auto one = test::run_mlens({"imatrix", dir.file("im.gguf"), "--tensor", "blk.0.ffn_down_exps.weight", "--bins", "4"});
    REQUIRE(one.exit_status == 0);
    INFO(one.out);
    CHECK(one.out.find("blk.0.ffn_down_exps.weight        4        3              14") != std::string::npos);
    CHECK(one.out.find("1 activated columns with importance 0 are not in the histogram") != std::string::npos);
    auto missing = test::run_mlens({"imatrix", dir.file("im.gguf"), "--tensor", "nope"});
    CHECK(missing.exit_status == 1);
    CHECK(missing.err.find("has no entry nope") != std::string::npos);
}

TEST_CASE("a GGUF imatrix's counts and sums are those gguf-py reads from the file", "[imatrix][gguf-py]") {
    if (auto why = test::gguf_py_unavailable()) FAIL(*why);
    test::TempDir dir;
    const std::string path = dir.file("im.gguf");
    test::write_whole_file(path, test::gguf_imatrix_bytes(fixture_entries(), {"wiki.train.raw"}, 7, 512));
    std::string failure;
    std::optional<std::string> printed = test::gguf_py_tensor_values(path, failure);
    INFO(failure);
    REQUIRE(printed);
    const auto theirs = nlohmann::json::parse(*printed);
    Result<Imatrix> m = open_imatrix(path);
    REQUIRE(m.ok());
    REQUIRE(theirs.size() == 2 * m->entries.size());
    for (const ImatrixEntry& e : m->entries) {
        INFO(e.name);
        std::vector<double> counts, sums;
        for (double c : theirs.at(e.name + ".counts")) counts.push_back(c);
        CHECK(e.counts == counts);
        for (uint64_t x = 0; x < e.experts; ++x) {
            Result<std::vector<float>> expert = read_sums(*m, e, x);
            REQUIRE(expert.ok());
            sums.insert(sums.end(), expert->begin(), expert->end());
        }
        CHECK(sums == theirs.at(e.name + ".in_sum2").get<std::vector<double>>());
    }
}
