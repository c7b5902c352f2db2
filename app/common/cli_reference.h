// A program's command-line reference taken from its CLI11 definition, the one --help prints,
// written out as a man page (troff) and as bash, zsh and fish completion scripts: the installed
// documentation and completions list exactly the commands and options the program accepts.
//
// Contract:
//  - command_reference(app) lists `app`'s options and subcommands in definition order; options
//    and subcommands in no group (CLI11's way of hiding them) are left out.
//  - man_page: sections NAME (from a description "NAME — summary"), SYNOPSIS, DESCRIPTION,
//    COMMANDS (each subcommand: usage line, description, arguments, options), OPTIONS (the
//    program's own), then `reference.sections` in order, then SEE ALSO. Text is escaped for troff
//    (backslashes, lines starting with a dot or quote, the hyphens of option names); dashes,
//    middle dots, arrows and ellipses become troff glyphs.
//  - reference_document serves both through one switch, `PROG --reference FORMAT`.
//  - help_footer: the same sections as plain text, for CLI11's footer, so --help shows them too:
//    each section's descriptions in one column after its terms of up to 24 characters; a longer
//    term has a line of its own, its description below it in that column.
//  - completion_script completes subcommands, each one's options (with the choices of options
//    limited to a set), and arguments by their name: TENSOR offers the tensor names of the first
//    file on the line (`PROG tensors FILE --names`), MODEL the models of the default Ollama
//    stores (`PROG store --names`), PATH, A and B files and those models, any other name files.
//    PROG is the program as typed on the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace mlens {

struct OptionReference {
    std::vector<std::string> names;  // "-h", "--help"; for an argument its name ("PATH")
    bool argument = false;  // positional
    bool takes_value = false;
    bool required = false;
    bool repeats = false;  // an argument taking any number of values
    std::string value_name;  // "TEXT", "UINT", ...
    std::vector<std::string> choices;  // from an IsMember check
    std::string description;
};

struct CommandReference {
    std::string name;
    std::string description;
    std::vector<OptionReference> options;  // named options, then...
    std::vector<OptionReference> arguments;  // ...positionals, each in definition order
    std::vector<CommandReference> subcommands;
};

struct ReferenceSection {
    std::string title;  // "EXIT STATUS"
    std::vector<std::pair<std::string, std::string>> entries;  // term, its text
};

struct ProgramReference {
    std::string name;  // "mlens": CLI11 names the app only when it parses
    std::string version;  // "0.1.0"
    std::string description;  // DESCRIPTION's paragraph
    std::vector<ReferenceSection> sections;
    std::vector<std::string> see_also;  // "modellens(1)"
};

enum class CompletionShell { bash, zsh, fish };

// `name` names the top command (CLI11's root app has none before it parses).
CommandReference command_reference(const CLI::App& app, const std::string& name);
std::string man_page(const CLI::App& app, const ProgramReference& reference);
std::string help_footer(const std::vector<ReferenceSection>& sections);
std::string completion_script(const CLI::App& app, const std::string& name, CompletionShell shell);
// The document a format names: "man" (man_page), "bash", "zsh" or "fish" (completion_script);
// nullopt for any other format.
std::optional<std::string> reference_document(const CLI::App& app, const ProgramReference& reference, std::string_view format);

}  // namespace mlens
