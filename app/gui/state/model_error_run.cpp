#include "model_error_run.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mlens {

Result<ModelErrorRun> run_model_error(ModelErrorRun run, JobContext* job) {
    std::optional<NameAlignment> aligned = automatic_name_alignment(*run.reference, *run.model);
    const Pairing pairing =
        aligned ? pair_tensors(*run.reference, *run.model, aligned->map, aligned->side) : pair_tensors(*run.reference, *run.model);
    if (aligned) run.name_alignment = aligned->label;
    run.only_reference = pairing.only_a.size();
    run.only_model = pairing.only_b.size();
    auto r = compare_models(*run.reference, *run.model, pairing, job);
    if (!r) return r.error();
    run.error = std::move(*r);
    double squares = 0, count = 0;
    for (const TensorError& t : run.error.tensors) {
        if (!t.error) {
            ++run.failed;
            continue;
        }
        ++run.compared;
        squares += t.error->rmse * t.error->rmse * static_cast<double>(t.error->count);
        count += static_cast<double>(t.error->count);
    }
    run.pooled_rmse = count > 0 ? std::sqrt(squares / count) : 0.0;
    return run;
}

namespace {

std::optional<double> metric(const TensorError& t, ErrorColumn column) {
    if (column == ErrorColumn::layer) return t.layer;
    if (!t.error) return std::nullopt;
    switch (column) {
        case ErrorColumn::rmse:
            return t.error->rmse;
        case ErrorColumn::nmse:
            return t.error->nmse;
        case ErrorColumn::max_abs:
            return t.error->max_abs;
        case ErrorColumn::cosine:
            return t.error->cosine;
        case ErrorColumn::snr_db:
            return t.error->snr_db;
        default:
            return std::nullopt;
    }
}

}  // namespace

std::vector<size_t> sorted_tensor_rows(const ModelError& error, ErrorColumn column, bool descending) {
    const std::vector<TensorError>& rows = error.tensors;
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    if (column == ErrorColumn::name || column == ErrorColumn::types) {
        auto key = [&](size_t i) { return column == ErrorColumn::name ? rows[i].name_b : rows[i].type_a + " " + rows[i].type_b; };
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return descending ? key(y) < key(x) : key(x) < key(y); });
        return order;
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        std::optional<double> a = metric(rows[x], column), b = metric(rows[y], column);
        if (!a || std::isnan(*a)) return false;
        if (!b || std::isnan(*b)) return true;
        return descending ? *b < *a : *a < *b;
    });
    return order;
}

std::optional<size_t> find_tensor_row(const ModelError& error, const std::string& name_a) {
    for (size_t i = 0; i < error.tensors.size(); ++i)
        if (error.tensors[i].name_a == name_a) return i;
    return std::nullopt;
}

}  // namespace mlens
