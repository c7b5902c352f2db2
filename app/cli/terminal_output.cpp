#include "terminal_output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "mlens/text/fit_width.h"

namespace mlens::cli {

namespace {

size_t read_terminal_columns() {
    if (const char* env = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v >= 20 && v <= 1000) return static_cast<size_t>(v);
    }
    winsize ws{};
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return kUnfittedColumns;
}

}  // namespace

size_t terminal_columns() {
    static const size_t columns = read_terminal_columns();
    return columns;
}

void print_command_line(const std::string& line) {
    auto* fitter = dynamic_cast<LineFitter*>(std::cout.rdbuf());
    for (const std::string& piece : wrap_command(line, terminal_columns())) {
        if (fitter)
            fitter->write_whole_line(piece);
        else
            std::cout << piece << '\n';
    }
}

LineFitter::LineFitter(std::ostream& out) : m_out(out), m_target(out.rdbuf()), m_columns(terminal_columns()) { m_out.rdbuf(this); }

LineFitter::~LineFitter() {
    sync();
    m_out.rdbuf(m_target);
}

void LineFitter::emit_line(bool with_newline) {
    std::string text;
    if (with_newline) {
        for (const std::string& piece : wrap_words(m_line, m_columns)) text += piece + "\n";
    } else {
        text = m_line;  // an unfinished line passes as it is: the rest may follow after a flush
    }
    m_target->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    m_line.clear();
}

void LineFitter::write_whole_line(std::string_view line) {
    m_line.append(line);
    m_line += '\n';
    emit_line(false);
}

LineFitter::int_type LineFitter::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    if (ch == '\n')
        emit_line(true);
    else
        m_line += ch;
    return c;
}

std::streamsize LineFitter::xsputn(const char* s, std::streamsize n) {
    std::string_view text(s, static_cast<size_t>(n));
    for (size_t nl; (nl = text.find('\n')) != std::string_view::npos; text.remove_prefix(nl + 1)) {
        m_line.append(text.substr(0, nl));
        emit_line(true);
    }
    m_line.append(text);
    return n;
}

int LineFitter::sync() {
    if (!m_line.empty()) emit_line(false);
    return m_target->pubsync();
}

}  // namespace mlens::cli
