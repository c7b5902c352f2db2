// completion_script of cli_reference.h: the bash, zsh and fish scripts, each a table of the
// program's commands, options and argument names (from command_reference) around a few shell
// functions that turn an argument's name into candidates.
#include <CLI/CLI.hpp>

#include "cli_reference.h"

namespace mlens {

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator = " ") {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
    return out;
}

// A shell word in single quotes.
std::string shell_quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The kind of candidates an argument's name asks for (the contract in cli_reference.h).
std::string argument_kind(const std::string& name) {
    if (name == "TENSOR") return "tensor";
    if (name == "MODEL") return "model";
    if (name == "PATH" || name == "A" || name == "B") return "path";
    return "file";
}

std::string kinds_of(const CommandReference& c) {
    std::vector<std::string> kinds;
    for (const OptionReference& a : c.arguments) kinds.push_back(argument_kind(a.names.front()) + (a.repeats ? "..." : ""));
    return joined(kinds);
}

// Every name of `options`, or only those of the options taking a value.
std::vector<std::string> names_of(const std::vector<OptionReference>& options, bool only_valued) {
    std::vector<std::string> out;
    for (const OptionReference& o : options)
        if (o.takes_value || !only_valued)
            for (const std::string& n : o.names) out.push_back(n);
    return out;
}

// bash: one `case` over the subcommand sets the options, those taking a value and the argument
// kinds; _NAME_words then finds which argument the cursor is on.
std::string bash_script(const CommandReference& program) {
    const std::string p = program.name;
    const std::string fn = "_" + p;
    std::vector<std::string> commands;
    for (const CommandReference& c : program.subcommands) commands.push_back(c.name);
    std::string s;
    s += "# bash completion for " + p + ", generated from its command-line definition.\n";
    s += fn +
        "_candidates() {\n"
        "    local kind=$1 cur=$2 first=$3 prog=$4\n"
        "    case $kind in\n"
        "        tensor) [[ -n $first ]] && mapfile -t COMPREPLY < <(compgen -W \"$(\"$prog\" tensors \"$first\" --names 2>/dev/null)\" -- "
        "\"$cur\") ;;\n"
        "        model|path) mapfile -t COMPREPLY < <(compgen -W \"$(\"$prog\" store --names 2>/dev/null)\" -- \"$cur\")\n"
        "            declare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions \"$cur\" ;;\n"
        "    esac\n"
        "    if [[ $kind != tensor && $kind != model ]]; then\n"
        "        compopt -o filenames 2>/dev/null\n"
        "        local f; while IFS= read -r f; do COMPREPLY+=(\"$f\"); done < <(compgen -f -- \"$cur\")\n"
        "    fi\n"
        "}\n";
    s += fn +
        "() {\n"
        "    local cur prev words cword\n"
        "    if declare -F _get_comp_words_by_ref >/dev/null; then\n"
        "        _get_comp_words_by_ref -n : cur prev words cword\n"
        "    else\n"
        "        words=(\"${COMP_WORDS[@]}\"); cword=$COMP_CWORD; cur=${words[cword]}; prev=${words[cword-1]}\n"
        "    fi\n"
        "    COMPREPLY=()\n";
    const std::vector<std::string> top_options = names_of(program.options, false);
    if (program.subcommands.empty()) {
        s += "    local options=" + shell_quoted(joined(top_options)) + " valued=" + shell_quoted(joined(names_of(program.options, true))) +
            " kinds=" + shell_quoted(kinds_of(program)) + " first=1\n";
    } else {
        s += "    if (( cword == 1 )); then\n"
             "        mapfile -t COMPREPLY < <(compgen -W " +
            shell_quoted(joined(commands) + " " + joined(top_options)) +
            " -- \"$cur\")\n"
            "        return\n"
            "    fi\n"
            "    local options='' valued='' kinds='' first=2\n"
            "    case ${words[1]} in\n";
        for (const CommandReference& c : program.subcommands)
            s += "        " + c.name + ") options=" + shell_quoted(joined(names_of(c.options, false))) +
                " valued=" + shell_quoted(joined(names_of(c.options, true))) + " kinds=" + shell_quoted(kinds_of(c)) + " ;;\n";
        s += "        *) return ;;\n"
             "    esac\n";
    }
    s += "    case $prev in\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> choice_options;
    auto collect = [&](const CommandReference& c) {
        for (const OptionReference& o : c.options)
            if (!o.choices.empty())
                for (const std::string& n : o.names) choice_options.push_back({n, o.choices});
    };
    collect(program);
    for (const CommandReference& c : program.subcommands) collect(c);
    std::vector<std::string> seen;
    for (const auto& [name, choices] : choice_options) {
        bool dup = false;
        for (const std::string& n : seen) dup = dup || n == name;
        if (dup) continue;
        seen.push_back(name);
        s += "        " + name + ") mapfile -t COMPREPLY < <(compgen -W " + shell_quoted(joined(choices)) + " -- \"$cur\"); return ;;\n";
    }
    s += "    esac\n"
         "    if [[ -n $prev && \" $valued \" == *\" $prev \"* ]]; then " +
        fn +
        "_candidates file \"$cur\"; return; fi\n"
        "    if [[ $cur == -* ]]; then\n"
        "        mapfile -t COMPREPLY < <(compgen -W \"$options\" -- \"$cur\")\n"
        "        return\n"
        "    fi\n"
        "    # Which argument the cursor is on: the words before it, less options and their values.\n"
        "    local i n=0 file=''\n"
        "    for (( i = first; i < cword; i++ )); do\n"
        "        if [[ ${words[i]} == -* ]]; then\n"
        "            [[ \" $valued \" == *\" ${words[i]} \"* ]] && (( i++ ))\n"
        "            continue\n"
        "        fi\n"
        "        [[ -z $file ]] && file=${words[i]}\n"
        "        (( n++ ))\n"
        "    done\n"
        "    local -a kind_list=($kinds)\n"
        "    local kind=${kind_list[n]:-}\n"
        "    if [[ -z $kind && ${kind_list[-1]:-} == *... ]]; then kind=${kind_list[-1]}; fi\n"
        "    [[ -n $kind ]] && " +
        fn +
        "_candidates \"${kind%...}\" \"$cur\" \"${file/#\\~/$HOME}\" \"${words[0]}\"\n"
        "}\n"
        "complete -F " +
        fn + " " + p + "\n";
    return s;
}

// zsh: _arguments specs per subcommand; arguments complete through three small functions.
std::string zsh_escaped(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

std::string zsh_specs(const std::string& p, const CommandReference& c) {
    std::vector<std::string> specs;
    for (const OptionReference& o : c.options)
        for (const std::string& n : o.names) {
            std::string spec = n + "[" + zsh_escaped(o.description) + "]";
            if (o.takes_value)
                spec += ":" + zsh_escaped(o.value_name.empty() ? "value" : o.value_name) + ":" +
                    (!o.choices.empty()           ? "(" + joined(o.choices) + ")"
                         : o.value_name == "TEXT" ? "_files"
                                                  : " ");
            specs.push_back(shell_quoted(spec));
        }
    for (const OptionReference& a : c.arguments) {
        const std::string kind = argument_kind(a.names.front());
        const std::string action = kind == "file" ? "_files" : "_" + p + "_" + kind;
        const std::string prefix = a.repeats ? "*" : (a.required ? "" : ":");
        specs.push_back(shell_quoted(prefix + ":" + zsh_escaped(a.names.front()) + ":" + action));
    }
    return joined(specs);
}

std::string zsh_script(const CommandReference& program) {
    const std::string p = program.name;
    std::string s = "#compdef " + p + "\n# zsh completion for " + p + ", generated from its command-line definition.\n";
    s += "_" + p +
        "_model() {\n"
        "    local -a models; models=(${(f)\"$(" +
        p +
        " store --names 2>/dev/null)\"})\n"
        "    _describe -t models 'model reference' models\n"
        "}\n";
    s += "_" + p + "_path() { _alternative 'models:model reference:_" + p + "_model' 'files:file:_files' }\n";
    s += "_" + p +
        "_tensor() {\n"
        "    local file w; for w in ${words[2,CURRENT-1]}; do [[ $w != -* ]] && { file=$w; break; }; done\n"
        "    [[ -z $file ]] && return 1\n"
        "    local -a names; names=(${(f)\"$(" +
        p +
        " tensors ${~file} --names 2>/dev/null)\"})\n"
        "    compadd -a names\n"
        "}\n";
    s += "_" + p + "() {\n";
    if (program.subcommands.empty()) {
        s += "    _arguments -s " + zsh_specs(p, program) + "\n}\n";
    } else {
        s += "    local -a commands; commands=(\n";
        for (const CommandReference& c : program.subcommands)
            s += "        " + shell_quoted(c.name + ":" + zsh_escaped(c.description)) + "\n";
        s += "    )\n"
             "    if (( CURRENT == 2 )); then _describe -t commands '" +
            p +
            " command' commands; return; fi\n"
            "    shift words; (( CURRENT-- ))\n"
            "    case ${words[1]} in\n";
        for (const CommandReference& c : program.subcommands) s += "        " + c.name + ") _arguments -s " + zsh_specs(p, c) + " ;;\n";
        s += "    esac\n}\n";
    }
    s += "compdef _" + p + " " + p + "\n";
    return s;
}

// fish: one `complete` line per subcommand and option; arguments through __NAME_argument_kind.
std::string fish_script(const CommandReference& program) {
    const std::string p = program.name;
    const std::string fn = "__" + p;
    std::string s = "# fish completion for " + p + ", generated from its command-line definition.\n";
    s += "function " + fn +
        "_argument_kind\n"
        "    set -l words (commandline -opc)\n"
        "    set -l kinds; set -l valued; set -l first 2\n";
    if (program.subcommands.empty()) {
        s += "    set first 1; set kinds " + kinds_of(program) + "; set valued " + joined(names_of(program.options, true)) + "\n";
    } else {
        s += "    test (count $words) -ge 2; or return 1\n"
             "    switch $words[2]\n";
        for (const CommandReference& c : program.subcommands)
            s += "        case " + c.name + "\n            set kinds " + kinds_of(c) + "; set valued " + joined(names_of(c.options, true)) +
                "\n";
        s += "        case '*'\n            return 1\n"
             "    end\n";
    }
    s += "    set -l n 0; set -l skip 0\n"
         "    for w in $words[(math $first + 1)..-1]\n"
         "        if test $skip = 1; set skip 0; continue; end\n"
         "        if string match -q -- '-*' $w; contains -- $w $valued; and set skip 1; continue; end\n"
         "        set n (math $n + 1)\n"
         "    end\n"
         "    if test $skip = 1; echo file; return; end\n"
         "    set -l kind $kinds[(math $n + 1)]\n"
         "    if test -z \"$kind\"; and string match -q -- '*...' $kinds[-1]; set kind $kinds[-1]; end\n"
         "    string replace -- '...' '' $kind\n"
         "end\n";
    s += "function " + fn +
        "_tensor_names\n"
        "    set -l words (commandline -opc)\n"
        "    for w in $words[3..-1]\n"
        "        if not string match -q -- '-*' $w; $words[1] tensors $w --names 2>/dev/null; return; end\n"
        "    end\n"
        "end\n";
    s += "function " + fn +
        "_models\n"
        "    set -l words (commandline -opc)\n"
        "    $words[1] store --names 2>/dev/null\n"
        "end\n";
    s += "complete -c " + p + " -f\n";
    const std::string in_command = program.subcommands.empty() ? "" : "not __fish_use_subcommand; and ";
    s += "complete -c " + p + " -n '" + in_command + "test (" + fn + "_argument_kind) = tensor' -a '(" + fn + "_tensor_names)'\n";
    s += "complete -c " + p + " -n '" + in_command + "contains -- (" + fn + "_argument_kind) model path' -a '(" + fn + "_models)'\n";
    s += "complete -c " + p + " -n '" + in_command + "contains -- (" + fn + "_argument_kind) path file' -F\n";
    auto option_lines = [&](const CommandReference& c, const std::string& condition) {
        for (const OptionReference& o : c.options) {
            std::string line = "complete -c " + p + (condition.empty() ? "" : " -n " + shell_quoted(condition));
            for (const std::string& n : o.names) line += n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1);
            if (o.takes_value) line += o.choices.empty() ? " -r -F" : " -x -a " + shell_quoted(joined(o.choices));
            s += line + " -d " + shell_quoted(o.description) + "\n";
        }
    };
    option_lines(program, program.subcommands.empty() ? "" : "__fish_use_subcommand");
    for (const CommandReference& c : program.subcommands) {
        s += "complete -c " + p + " -n __fish_use_subcommand -a " + c.name + " -d " + shell_quoted(c.description) + "\n";
        option_lines(c, "__fish_seen_subcommand_from " + c.name);
    }
    return s;
}

}  // namespace

std::string completion_script(const CLI::App& app, const std::string& name, CompletionShell shell) {
    const CommandReference program = command_reference(app, name);
    switch (shell) {
        case CompletionShell::bash:
            return bash_script(program);
        case CompletionShell::zsh:
            return zsh_script(program);
        case CompletionShell::fish:
            return fish_script(program);
    }
    return {};
}

}  // namespace mlens
