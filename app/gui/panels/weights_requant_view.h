// WeightsRequantView: the "Requantize" tab of the Weights panel — what-if requantization of the
// shown tensor or expert slice (the interactive quantize-stats): a checkbox per offered ggml
// type, grouped by family, a Run button, and a sortable table of type, bits per weight, RMSE,
// NMSE, max |a-b|, cosine and SNR dB. A row whose values equal the reference's
// (RequantRow::equals_reference) says "same values as the reference" where its numbers would be,
// instead of a perfect score. A type without numbers has its note where they would be:
// it needs an importance matrix, or why it was skipped (so the note is never scrolled out of a
// narrow panel).
//
// The reference is the one open_requant_reference (requant_reference.h) chooses with the
// document chosen under "compare with", or, when none is chosen, with the first open document
// holding the tensor under the same name and shape in a more precise float type
// (float_twin_document, paired_document.h), which a line above the table names; the heading names it, and its note (the tensor itself
// is the reference) is shown in the warning colour. An "importance matrix" picker lists the open
// imatrix documents (the first one opened is picked until the picker says otherwise); with one,
// every type is quantized with its importance for the tensor, so the IQ types run.
//
// Contract:
//  - follow() is called every frame with the tensor and expert the panel shows, its row length and
//    the compared document; it takes in a finished job. Results belong to the tensor, expert,
//    compared document and importance matrix they were computed for: when one changes, the running
//    job is cancelled and the table cleared, so no tensor's numbers are ever shown under another's
//    name. The table's heading names its tensor.
//  - Until a checkbox is clicked, the checked types are default_requant_types (requant.h) for the
//    followed row length, with or without an importance matrix.
//  - run() starts one job (requantize_weights, weights_inspection.h) for the followed tensor with
//    the checked types, in the order they are offered; a run started while one is going cancels
//    that one. The job shows progress and a Cancel button; a cancelled run keeps the table it
//    replaced.
//  - The table starts in the order the types were run; a click on a header sorts by that column
//    (the type by name, the rest by value; rows without numbers stay last), a third click
//    restores the run order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/analysis/weights_inspection.h"
#include "panels/panel.h"

namespace mlens {

class Workspace;

class WeightsRequantView {
public:
    struct OfferedType {
        const char* family;  // "legacy", "k-quants", "i-quants", "float"
        const char* name;
        uint32_t ggml_type;
        bool checked;
    };

    WeightsRequantView();

    // `picked`: the compared document was not chosen but found by float_twin_document; the view
    // then says so above the table.
    void follow(size_t tensor, std::optional<uint64_t> expert, std::string label, uint64_t row_length, uint64_t compared_document,
                const Workspace* workspace = nullptr, bool picked = false);
    // The imatrix document requantization uses (0: none); choosing sets the picker.
    void use_imatrix(uint64_t document_id) {
        m_imatrix_doc = document_id;
        m_imatrix_chosen = true;
    }
    uint64_t imatrix_document() const { return m_imatrix_doc; }
    void draw(PanelContext& ctx);
    void run(PanelContext& ctx);

    // The offered types, in run order, and whether each is checked.
    std::vector<OfferedType>& offered() { return m_offered; }
    // Checks exactly the named types (others unchecked), as clicks would; unknown names are ignored.
    void check_only(const std::vector<std::string>& names);
    const RequantResult* result() const { return m_result.get(); }
    const std::string& error_text() const { return m_error; }  // why the last run failed, or empty
    bool running() const { return static_cast<bool>(m_job); }
    // The type names of the table rows as drawn in the last frame, top to bottom.
    const std::vector<std::string>& drawn_rows() const { return m_drawn_rows; }
    // The width the table's columns took in the last frame, their cell padding included.
    float drawn_columns_width() const { return m_columns_width; }

private:
    struct Subject {
        size_t tensor = 0;
        std::optional<uint64_t> expert;
        uint64_t compared = 0;  // document id, 0: none
        uint64_t imatrix = 0;  // document id, 0: none
        bool picked = false;  // `compared` found by float_twin_document
        bool operator==(const Subject&) const = default;
    };

    void poll();
    void pick_imatrix(const Workspace* workspace);
    void imatrix_picker(PanelContext& ctx);
    void apply_default_checks();
    void clear();
    void type_checkboxes();
    // "Q4_0, Q8_0, … (9 types)": the checked types on one line.
    std::string checked_summary() const;
    void results_table(const RequantResult& r);
    void sort_rows(const RequantResult& r, int column, bool ascending);

    std::vector<OfferedType> m_offered;
    Subject m_subject;
    uint64_t m_row_length = 0;
    uint64_t m_imatrix_doc = 0;
    bool m_imatrix_chosen = false;  // the picker was used: no automatic pick
    bool m_user_checked = false;  // a checkbox was clicked: no default checks
    std::pair<uint64_t, bool> m_defaults_for{0, false};  // row length and imatrix the checks were made for
    std::string m_label;  // the followed tensor, display-safe
    // The run's rows (the analysis' own message in `error` when it failed), or E_CANCELLED.
    JobHandle<RequantResult> m_job;
    std::shared_ptr<RequantResult> m_result;
    std::string m_error;  // why the last run failed, display-safe
    std::string m_result_label;  // the tensor m_result was computed for
    std::string m_status;
    std::vector<size_t> m_order;  // row indexes in display order
    bool m_resort = true;  // m_order is to be made again from the sort specs
    bool m_refold = true;  // the type grid opens (no result) or folds (a result) next frame
    std::vector<std::string> m_drawn_rows;
    float m_columns_width = 0.0f;
};

}  // namespace mlens
