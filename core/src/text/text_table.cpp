#include "mlens/text/text_table.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "mlens/text/display_width.h"
#include "mlens/text/fit_width.h"

namespace mlens {

bool numeric_cell(const std::string& cell) {
    if (cell == "-" || cell == "nan" || cell == "inf" || cell == "-inf" || cell == "+inf") return true;
    std::string_view s(cell);
    for (std::string_view suffix : {"%", "\xC3\x97", "x"})
        if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
            s.remove_suffix(suffix.size());
            break;
        }
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' || c == ',';
    });
}

namespace {

// Each row below the headings as its first cell on a line, then one line per other cell: its
// heading and its value, indented.
std::vector<std::string> stanza_lines(const std::vector<std::vector<std::string>>& rows, size_t header_rows, size_t columns) {
    const std::vector<std::string>& headings = rows[header_rows - 1];
    std::vector<std::string> out;
    for (size_t r = header_rows; r < rows.size(); ++r) {
        if (rows[r].empty()) continue;
        for (std::string& piece : break_cell(rows[r][0], columns)) out.push_back(std::move(piece));
        std::vector<std::vector<std::string>> fields;
        for (size_t c = 1; c < rows[r].size(); ++c) fields.push_back({"  " + (c < headings.size() ? headings[c] : std::string()), rows[r][c]});
        for (std::string& line : table_lines(fields, 0, columns)) out.push_back(std::move(line));
    }
    return out;
}

}  // namespace

std::vector<std::string> table_lines(const std::vector<std::vector<std::string>>& rows, size_t header_rows, size_t columns) {
    std::vector<size_t> widths, headings;
    std::vector<bool> numeric;
    for (size_t r = 0; r < rows.size(); ++r)
        for (size_t c = 0; c < rows[r].size(); ++c) {
            if (widths.size() <= c) {
                widths.push_back(0);
                headings.push_back(0);
                numeric.push_back(true);
            }
            widths[c] = std::max(widths[c], display_width(rows[r][c]));
            if (r < header_rows)
                headings[c] = std::max(headings[c], display_width(rows[r][c]));
            else if (!rows[r][c].empty() && !numeric_cell(rows[r][c]))
                numeric[c] = false;
        }
    const bool has_data = rows.size() > header_rows;
    for (size_t c = 0; c < widths.size(); ++c) numeric[c] = numeric[c] && has_data;
    size_t total = widths.empty() ? 0 : 2 * (widths.size() - 1);
    for (size_t w : widths) total += w;
    // Text columns give up width, widest first, down to `floor(c)`.
    auto shrink = [&](auto floor) {
        while (total > columns) {
            size_t widest = widths.size();
            for (size_t c = 0; c < widths.size(); ++c)
                if (!numeric[c] && widths[c] > floor(c) && (widest == widths.size() || widths[c] > widths[widest])) widest = c;
            if (widest == widths.size()) return;
            --widths[widest];
            --total;
        }
    };
    shrink([&](size_t c) { return std::max(headings[c], kMinTextColumn); });
    if (total > columns && header_rows > 0 && widths.size() > 2) return stanza_lines(rows, header_rows, columns);
    shrink([&](size_t) { return kMinTextColumn; });

    std::vector<std::string> out;
    for (size_t r = 0; r < rows.size(); ++r) {
        const std::vector<std::string>& row = rows[r];
        std::vector<std::vector<std::string>> pieces(row.size());
        size_t height = 1;
        for (size_t c = 0; c < row.size(); ++c) {
            pieces[c] = break_cell(row[c], widths[c]);
            height = std::max(height, pieces[c].size());
        }
        for (size_t i = 0; i < height; ++i) {
            std::string line;
            for (size_t c = 0; c < row.size(); ++c) {
                const std::string cell = i < pieces[c].size() ? pieces[c][i] : std::string();
                const size_t pad = widths[c] - std::min(widths[c], display_width(cell));
                const bool right = numeric[c] && r >= header_rows;
                if (right) line.append(pad, ' ');
                line += cell;
                if (c + 1 < row.size()) line.append((right ? 0 : pad) + 2, ' ');
            }
            line.erase(line.find_last_not_of(' ') + 1);  // an empty last cell leaves no padding
            out.push_back(std::move(line));
        }
    }
    return out;
}

}  // namespace mlens
