// The terminal the text output of mlens is read in: its width, and the one place that keeps every
// line of text output within it.
//
// Contract:
//  - terminal_columns() is $COLUMNS when it holds a whole number from 20 to 1000; else the width of
//    the terminal standard output is when it is one; else kUnfittedColumns: output to a pipe or a
//    file is not fitted to any width (tables at their natural width, no line broken), so a name in
//    it is found whole by grep and it reads the same on every machine. Read once per run.
//  - LineFitter, while it lives, sits between std::cout and standard output: a line of at most
//    terminal_columns() columns (display_width.h) passes unchanged, a longer one is broken between
//    words with a hanging indent (wrap_words, text/fit_width.h); a single word wider than the
//    terminal stays whole. Text passes on at each line end and whenever std::cout is flushed, so
//    its order with writes to stdout that bypass std::cout (fwrite) holds when those come after a
//    flush. Tables (print_table) fit themselves to the width first, so they are never broken.
//  - print_command_line prints a shell command (with its indentation) on std::cout as
//    wrap_command (text/fit_width.h) breaks it: " \\" continuations, so the lines paste as one.
//    Its lines pass a LineFitter whole: one wider than the terminal (an option and its value)
//    is not broken again, which would cut the command.
//  - JSON results (print_json_result) and the files `--reference` prints go around it: their text
//    is never rewrapped.
#pragma once

#include <cstddef>
#include <limits>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace mlens::cli {

// The width of output that is not fitted: wider than any line, with room to add widths to it.
inline constexpr size_t kUnfittedColumns = std::numeric_limits<size_t>::max() / 4;

size_t terminal_columns();
void print_command_line(const std::string& line);

class LineFitter : public std::streambuf {
public:
    explicit LineFitter(std::ostream& out);
    ~LineFitter() override;
    LineFitter(const LineFitter&) = delete;
    LineFitter& operator=(const LineFitter&) = delete;
    // Writes `line` and a newline after what came before, as they are.
    void write_whole_line(std::string_view line);

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

private:
    void emit_line(bool with_newline);

    std::ostream& m_out;
    std::streambuf* m_target;
    std::string m_line;
    size_t m_columns;
};

}  // namespace mlens::cli
