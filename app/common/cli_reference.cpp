#include "cli_reference.h"

#include <CLI/CLI.hpp>

namespace mlens {

namespace {

// "TEXT:{dark,light}" (CLI11 appends an IsMember check's set to the type name) → dark, light.
std::vector<std::string> choices_in(const std::string& type_name) {
    std::vector<std::string> out;
    const size_t open = type_name.find(":{");
    const size_t close = type_name.find('}', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) return out;
    std::string item;
    for (char c : type_name.substr(open + 2, close - open - 2)) {
        if (c == ',') {
            out.push_back(item);
            item.clear();
        } else if (c != ' ') {
            item += c;
        }
    }
    if (!item.empty()) out.push_back(item);
    return out;
}

OptionReference option_reference(const CLI::Option& opt) {
    OptionReference r;
    r.argument = !opt.nonpositional();
    if (r.argument) {
        r.names.push_back(opt.get_name(true));
    } else {
        for (const std::string& s : opt.get_snames()) r.names.push_back("-" + s);
        for (const std::string& l : opt.get_lnames()) r.names.push_back("--" + l);
    }
    r.takes_value = opt.get_items_expected_max() > 0;  // 0 for flags
    r.required = opt.get_required();
    r.repeats = opt.get_items_expected_max() > 1;
    const std::string type_name = opt.get_type_name();
    r.value_name = type_name.substr(0, type_name.find(':'));
    r.choices = choices_in(type_name);
    r.description = opt.get_description();
    return r;
}

// Escapes text for a troff line: backslashes, and a dot or quote that would start a request.
std::string troff_text(const std::string& text) {
    static const std::pair<const char*, const char*> kGlyphs[] = {
        {"\xE2\x80\x94", "\\(em"}, {"\xE2\x80\x93", "\\(en"}, {"\xC2\xB7", "\\(pc"},     {"\xE2\x86\x92", "\\(->"},
        {"\xE2\x80\xA6", "..."},   {"\xC3\x97", "\\(mu"},     {"\xE2\x89\xA4", "\\(<="}, {"\xE2\x89\xA5", "\\(>="}};
    std::string out;
    for (size_t i = 0; i < text.size();) {
        bool replaced = false;
        for (const auto& [utf8, glyph] : kGlyphs) {
            const std::string_view u(utf8);
            if (text.compare(i, u.size(), u) == 0) {
                out += glyph;
                i += u.size();
                replaced = true;
                break;
            }
        }
        if (replaced) continue;
        const char previous = i > 0 ? text[i - 1] : ' ';
        const char c = text[i++];
        // A hyphen starting a word is an option's minus sign ("--json"), as is the one after it.
        const bool minus = c == '-' && (previous == ' ' || previous == '(' || previous == '-' || previous == '\n');
        if (c == '\\')
            out += "\\e";
        else if (minus)
            out += "\\-";
        else
            out += c;
        if ((c == '\n') && i < text.size() && (text[i] == '.' || text[i] == '\'')) out += "\\&";
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
    return out;
}

// An option name with troff's minus signs: "\-\-json".
std::string troff_option(const std::string& name) {
    std::string out;
    for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

std::string man_term(const OptionReference& o) {
    if (o.argument) return "\\fI" + troff_text(o.names.front()) + "\\fR" + (o.repeats ? "..." : "");
    std::string out;
    for (const std::string& n : o.names) out += (out.empty() ? "" : ", ") + ("\\fB" + troff_option(n) + "\\fR");
    if (o.takes_value) out += " \\fI" + troff_text(o.value_name.empty() ? "VALUE" : o.value_name) + "\\fR";
    return out;
}

std::string man_synopsis(const std::string& program, const CommandReference& c) {
    std::string out = "\\fB" + troff_text(program) + "\\fR";
    if (!c.options.empty()) out += " [\\fIOPTIONS\\fR]";
    for (const OptionReference& a : c.arguments) {
        const std::string name = "\\fI" + troff_text(a.names.front()) + "\\fR" + (a.repeats ? "..." : "");
        out += " " + (a.required ? name : "[" + name + "]");
    }
    return out;
}

void man_items(std::string& out, const std::vector<OptionReference>& items) {
    for (const OptionReference& o : items) {
        std::string text = o.description;
        if (!o.choices.empty()) {
            std::string set;
            for (const std::string& c : o.choices) set += (set.empty() ? "" : ", ") + c;
            text += " (one of: " + set + ")";
        }
        out += ".TP\n" + man_term(o) + "\n" + troff_text(text) + "\n";
    }
}

std::string upper(std::string s) {
    for (char& c : s)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return s;
}

}  // namespace

CommandReference command_reference(const CLI::App& app, const std::string& name) {
    CommandReference c;
    c.name = name;
    c.description = app.get_description();
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue;
        OptionReference r = option_reference(*opt);
        (r.argument ? c.arguments : c.options).push_back(std::move(r));
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
        c.subcommands.push_back(command_reference(*sub, sub->get_name()));
    return c;
}

std::string man_page(const CLI::App& app, const ProgramReference& reference) {
    const CommandReference program = command_reference(app, reference.name);
    const std::string name = program.name;
    std::string summary = program.description;
    const std::string dash = name + " \xE2\x80\x94 ";
    if (summary.starts_with(dash)) summary = summary.substr(dash.size());

    std::string out;
    out += ".TH " + upper(name) + " 1 \"\" \"ModelLens " + reference.version + "\" \"User Commands\"\n";
    out += ".SH NAME\n" + troff_text(name) + " \\- " + troff_text(summary) + "\n";
    out += ".SH SYNOPSIS\n";
    if (program.subcommands.empty()) {
        out += man_synopsis(name, program) + "\n";
    } else {
        out += "\\fB" + troff_text(name) + "\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\n.br\n";
        out += "\\fB" + troff_text(name) + "\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR\n";
    }
    out += ".SH DESCRIPTION\n" + troff_text(reference.description) + "\n";
    if (!program.subcommands.empty()) {
        out += ".SH COMMANDS\n";
        for (const CommandReference& sub : program.subcommands) {
            out += ".SS " + troff_text(sub.name) + "\n";
            out += man_synopsis(name + " " + sub.name, sub) + "\n.PP\n" + troff_text(sub.description) + "\n";
            man_items(out, sub.arguments);
            man_items(out, sub.options);
        }
    }
    out += ".SH OPTIONS\n";
    man_items(out, program.arguments);
    man_items(out, program.options);
    for (const ReferenceSection& section : reference.sections) {
        out += ".SH " + troff_text(upper(section.title)) + "\n";
        for (const auto& [term, text] : section.entries) out += ".TP\n" + troff_text(term) + "\n" + troff_text(text) + "\n";
    }
    if (!reference.see_also.empty()) {
        out += ".SH SEE ALSO\n";
        for (size_t i = 0; i < reference.see_also.size(); ++i) {
            const std::string& page = reference.see_also[i];
            const size_t paren = page.find('(');
            out += ".BR " + troff_text(page.substr(0, paren)) + " " + page.substr(paren) + (i + 1 < reference.see_also.size() ? " ," : "") +
                "\n";
        }
    }
    return out;
}

std::optional<std::string> reference_document(const CLI::App& app, const ProgramReference& reference, std::string_view format) {
    if (format == "man") return man_page(app, reference);
    if (format == "bash") return completion_script(app, reference.name, CompletionShell::bash);
    if (format == "zsh") return completion_script(app, reference.name, CompletionShell::zsh);
    if (format == "fish") return completion_script(app, reference.name, CompletionShell::fish);
    return std::nullopt;
}

std::string help_footer(const std::vector<ReferenceSection>& sections) {
    // Terms up to this many characters share a section's description column.
    constexpr size_t kWidestAlignedTerm = 24;
    std::string out;
    for (const ReferenceSection& section : sections) {
        out += (out.empty() ? "" : "\n") + section.title + ":\n";
        size_t column = 0;
        for (const auto& entry : section.entries)
            if (entry.first.size() <= kWidestAlignedTerm) column = std::max(column, entry.first.size());
        for (const auto& [term, text] : section.entries) {
            // A description on a line of its own starts past eight columns, so that its wrapped
            // lines keep its indent (wrap_words).
            const std::string indent(std::max<size_t>(2 + column + 2, 10), ' ');
            if (term.size() <= column)
                out += "  " + term + std::string(column - term.size() + 2, ' ') + text + "\n";
            else
                out += "  " + term + "\n" + indent + text + "\n";
        }
    }
    return out;
}

}  // namespace mlens
