// DiagnosticsPanel (center): everything the reader found wrong or unusual — severity, code,
// field, offset, message — filterable by severity and text. Clicking a row selects the
// diagnostic, which shows its offset in the inspector's hex view.
#pragma once

#include <string>
#include <vector>

#include "panels/panel.h"

namespace mlens {

class DiagnosticsPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    std::string badge(const Document& doc) const override;

private:
    void refresh(const Model& model);

    std::string m_filter;
    bool m_show_errors = true;
    bool m_show_warnings = true;
    // The listed diagnostics and the filter they were listed for.
    std::vector<size_t> m_rows;
    std::vector<std::string> m_codes, m_fields;  // of m_rows, escaped for display
    std::string m_applied_filter;
    bool m_applied_errors = false;
    bool m_applied_warnings = false;
    bool m_built = false;
};

}  // namespace mlens
