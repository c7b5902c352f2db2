#include "prompt_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mlens/io/unique_fd.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

const std::string kLimitText = "1 MiB (" + std::to_string(kMaxPromptBytes) + " bytes)";

Error prompt_error(const std::string& message) { return Error{ErrorCode::E_PROMPT, "", std::nullopt, message}; }

// Reads until end of file or limit + 1 bytes.
Result<std::string> read_capped(int fd, const std::string& source) {
    std::string text;
    char buf[65536];
    while (text.size() <= kMaxPromptBytes) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return prompt_error("cannot read " + source + ": " + std::strerror(errno));
        if (n == 0) return text;
        text.append(buf, static_cast<size_t>(n));
    }
    return prompt_error(source + " holds more than " + kLimitText + ", the limit for a prompt");
}

}  // namespace

Result<std::string> read_prompt_file(const std::string& path) {
    const std::string source = "prompt file " + escape_for_display(path);
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!file.valid()) return prompt_error("cannot open " + source + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return prompt_error(source + " is not a regular file");
    if (static_cast<uint64_t>(st.st_size) > kMaxPromptBytes)
        return prompt_error(source + " is " + std::to_string(st.st_size) + " bytes; a prompt is limited to " + kLimitText);
    return read_capped(file.get(), source);
}

Result<std::string> read_prompt_stdin() { return read_capped(STDIN_FILENO, "standard input"); }

Result<std::string> resolve_prompt(const std::string& text, const std::string& file) {
    if (!file.empty()) return read_prompt_file(file);
    if (text == "-") return read_prompt_stdin();
    return text;
}

}  // namespace mlens::cli
