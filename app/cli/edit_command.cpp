// mlens edit FILE -o OUT | --in-place | --dry-run | --undo: edits a GGUF file's metadata, or a
// safetensors file's __metadata__, without touching its tensor data (edit/edit_plan.h,
// edit_write.h, edit_in_place.h). --json prints the plan and what was written as one object
// (assets/schemas/mlens-edit.schema.json).
// Test hooks, read from the environment: MLENS_EDIT_DATA_PATH=copy_file_range|stream forces that
// data path (WriteEditOptions::force_path); MLENS_EDIT_PAUSE_MS=N says each in-place step on stderr
// ("in-place step undo_saved") and waits N milliseconds after it, for the signal tests.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cli_common.h"
#include "mlens/edit/edit_in_place.h"
#include "mlens/edit/edit_write.h"
#include "mlens/infer/dry_run.h"
#include "mlens/io/text_file.h"
#include "mlens/model/model_inputs.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

constexpr uint64_t kMaxEditFileBytes = 64ull << 20;

struct EditArguments {
    std::string path;
    std::string out;
    std::vector<std::string> sets;
    std::vector<std::string> deletes;
    std::vector<std::string> renames;  // pairs
    std::string chat_template_file;
    std::string from_json;
    bool dry_run = false;
    bool in_place = false;
    bool undo = false;
    bool json = false;
};

int g_pause_ms = 0;

void pause_after_step(InPlaceStep step) {
    std::fprintf(stderr, "in-place step %s\n", in_place_step_name(step));
    std::this_thread::sleep_for(std::chrono::milliseconds(g_pause_ms));
}

// The edits of the command line: the edits file first, then --set, the chat template, --delete
// and --rename. Errors are about the file they come from.
Result<EditList> collect_edits(const EditArguments& a, std::string& about) {
    EditList list;
    if (!a.from_json.empty()) {
        about = a.from_json;
        auto text = read_text_file(a.from_json, kMaxEditFileBytes);
        if (!text) return text.error();
        auto edits = parse_edits_json(*text);
        if (!edits) return edits.error();
        list.edits = std::move(*edits);
    }
    about = "";
    for (const std::string& s : a.sets) {
        auto e = parse_set_argument(s);
        if (!e) return e.error();
        list.edits.push_back(std::move(*e));
    }
    if (!a.chat_template_file.empty()) {
        about = a.chat_template_file;
        auto text = read_text_file(a.chat_template_file, kMaxEditFileBytes);
        if (!text) return text.error();
        list.edits.push_back(Edit::set("tokenizer.chat_template", std::move(*text), KeyType{ValueType::string, std::nullopt}));
        about = "";
    }
    for (const std::string& k : a.deletes) list.edits.push_back(Edit::remove(k));
    for (size_t i = 0; i + 1 < a.renames.size(); i += 2) list.edits.push_back(Edit::rename(a.renames[i], a.renames[i + 1]));
    return list;
}

nlohmann::json plan_json(const EditPlan& plan) {
    nlohmann::json changes = nlohmann::json::array();
    for (const KeyChange& c : plan.changes)
        changes.push_back({{"kind", key_change_kind_name(c.kind)},
                           {"key", c.key},
                           {"new_key", c.kind == KeyChangeKind::renamed ? nlohmann::json(c.new_key) : nlohmann::json()},
                           {"type_before", c.type_before.empty() ? nlohmann::json() : nlohmann::json(c.type_before)},
                           {"type_after", c.type_after.empty() ? nlohmann::json() : nlohmann::json(c.type_after)},
                           {"value_before", c.kind == KeyChangeKind::added ? nlohmann::json() : nlohmann::json(c.value_before)},
                           {"value_after", c.kind == KeyChangeKind::removed ? nlohmann::json() : nlohmann::json(c.value_after)},
                           {"bytes_before", c.bytes_before},
                           {"bytes_after", c.bytes_after}});
    return {{"changes", changes},
            {"keys_before", plan.key_count_before},
            {"keys_after", plan.key_count_after},
            {"tensors", plan.tensors.size()},
            {"header_bytes_before", plan.old_header_bytes},
            {"header_bytes_after", plan.new_header_bytes},
            {"data_start_before", plan.old_data_start},
            {"data_start_after", plan.new_data_start},
            {"data_shift", plan.data_shift()},
            {"file_bytes_after", plan.new_file_bytes()},
            {"alignment", plan.alignment},
            {"fits_in_place", plan.fits_in_place},
            {"planned_data_path", planned_data_path_name(plan.data_path)}};
}

nlohmann::json verification_json(const EditVerification& v) {
    return {{"passed", v.passed()},
            {"reopened", v.reopened},
            {"keys_as_planned", v.keys_as_planned},
            {"tensors", v.tensors},
            {"tensors_equal", v.tensors_equal},
            {"fsck_ran", v.fsck_ran},
            {"fsck_errors", v.fsck_errors},
            {"fsck_warnings", v.fsck_warnings},
            {"problem", v.passed() ? nlohmann::json() : nlohmann::json(v.first_problem())},
            {"loads", v.output_loads ? loadability_json(*v.output_loads) : nlohmann::json()},
            {"llama_dry_run", v.llama_output ? nlohmann::json{{"output", dry_load_json(*v.llama_output)},
                                                              {"input", v.llama_input ? dry_load_json(*v.llama_input) : nlohmann::json()}}
                                             : nlohmann::json()}};
}

std::string signed_text(int64_t v) { return (v > 0 ? "+" : "") + std::to_string(v); }

void print_plan(const EditPlan& plan) {
    std::vector<std::vector<std::string>> rows;
    for (const KeyChange& c : plan.changes) {
        const std::string sizes = std::to_string(c.bytes_before) + " → " + std::to_string(c.bytes_after) + " bytes";
        switch (c.kind) {
            case KeyChangeKind::added:
                rows.push_back({"+", escape_for_display(c.key, 200), c.type_after, c.value_after, sizes});
                break;
            case KeyChangeKind::removed:
                rows.push_back({"-", escape_for_display(c.key, 200), c.type_before, c.value_before, sizes});
                break;
            case KeyChangeKind::changed:
                rows.push_back({"~", escape_for_display(c.key, 200),
                                c.type_before == c.type_after ? c.type_after : c.type_before + " → " + c.type_after,
                                c.value_before + " → " + c.value_after, sizes});
                break;
            case KeyChangeKind::renamed:
                rows.push_back(
                    {">", escape_for_display(c.key, 200) + " → " + escape_for_display(c.new_key, 200), c.type_after, c.value_after, sizes});
                break;
        }
    }
    print_table(rows, 0);
    std::cout << "keys: " << plan.key_count_before << " → " << plan.key_count_after << "; header: " << plan.old_header_bytes << " → "
              << plan.new_header_bytes << " bytes; data start: " << plan.old_data_start << " → " << plan.new_data_start << " ("
              << signed_text(plan.data_shift()) << ", alignment " << plan.alignment << "); " << plan.tensors.size() << " tensors "
              << (plan.data_shift() == 0 ? "stay where they are" : "move by " + signed_text(plan.data_shift()) + " bytes") << "\n";
    std::cout << "fits in place: " << (plan.fits_in_place ? "yes" : "no") << "; data: " << planned_data_path_name(plan.data_path) << "\n";
}

// In place, the tensors' bytes are not written: the check is that the new header places every one
// where it was, over the same bytes.
void print_verification(const EditVerification& v, bool in_place) {
    std::cout << "verified: re-opened, keys as planned, " << v.tensors_equal << " of " << v.tensors
              << (in_place ? " tensors where they were (their bytes not written)" : " tensors byte-identical to the input") << ", fsck "
              << v.fsck_errors << " errors " << v.fsck_warnings << " warnings (in the tensor values, as in the input)\n";
    if (const std::string loads = v.load_summary(); !loads.empty()) std::cout << "the output " << escape_for_display(loads) << "\n";
}

int run_undo(const EditArguments& a) {
    auto undone = undo_edit(a.path);
    if (!undone) return fail(a.path, undone.error());
    if (a.json) {
        print_json_result({{"path", a.path},
                           {"undo",
                            {{"span_offset", undone->span_offset},
                             {"bytes_restored", undone->bytes_restored},
                             {"already_original", undone->already_original}}}});
        return kExitOk;
    }
    if (undone->already_original)
        std::cout << escape_for_display(a.path) << " already has its original header; undo file removed\n";
    else
        std::cout << "restored " << undone->bytes_restored << " header bytes at offset " << undone->span_offset << " of "
                  << escape_for_display(a.path) << "\n";
    return kExitOk;
}

int run_edit(const EditArguments& a) {
    const int modes = (a.out.empty() ? 0 : 1) + (a.in_place ? 1 : 0) + (a.undo ? 1 : 0);
    if (modes > 1) return usage_error("-o, --in-place and --undo exclude each other");
    if (a.undo) return run_undo(a);
    if (modes == 0 && !a.dry_run) return usage_error("say where the edit goes: -o OUT, --in-place, or --dry-run to only show it");
    int exit_code = kExitOk;
    // A part of a split model is edited alone: its own header is what changes.
    auto model = open_or_fail(resolve(a.path), true, exit_code, SplitParts::alone);
    if (!model) return exit_code;
    std::string about;
    auto edits = collect_edits(a, about);
    if (!edits) return fail(about, edits.error());
    if (edits->empty()) return usage_error("no edit given: --set, --delete, --rename, --chat-template-file or --from-json");
    auto plan = plan_edit(*model, *edits);
    if (!plan) return fail(a.path, plan.error());
    nlohmann::json out = {{"path", a.path},         {"output", nullptr},        {"dry_run", a.dry_run},
                          {"in_place", a.in_place}, {"plan", plan_json(*plan)}, {"result", nullptr}};
    if (!a.json) print_plan(*plan);
    if (a.dry_run) {
        if (a.json)
            print_json_result(out);
        else
            std::cout << "dry run: nothing written\n";
        return kExitOk;
    }
    if (a.in_place) {
        if (const char* pause = std::getenv("MLENS_EDIT_PAUSE_MS")) {
            g_pause_ms = std::atoi(pause);
            set_in_place_step_hook(pause_after_step);
        }
        auto done = edit_in_place(*model, *plan, nullptr, 2, dry_run_checker());
        if (!done) return fail(a.path, done.error());
        out["output"] = a.path;
        out["result"] = {{"data_path", nullptr},
                         {"bytes_written", done->span_bytes},
                         {"undo_file", done->undo_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(done->undo_path)},
                         {"verification", verification_json(done->verification)}};
        if (a.json)
            print_json_result(out);
        else {
            if (done->undo_path.empty())
                std::cout << "left " << escape_for_display(a.path) << " as it was: its header already holds these values (nothing written, no undo file)\n";
            else
                std::cout << "edited " << escape_for_display(a.path) << " in place: " << done->span_bytes << " header bytes at offset "
                          << done->span_offset << "; the old bytes are in " << escape_for_display(done->undo_path) << " (mlens edit --undo)\n";
            print_verification(done->verification, true);
        }
        return kExitOk;
    }
    WriteEditOptions options;
    if (const char* forced = std::getenv("MLENS_EDIT_DATA_PATH")) options.force_path = data_path_from_name(forced);
    // The files the edits came from are inputs too: -o naming one of them is E_OUTPUT_IS_INPUT.
    options.guard = output_guard_for(*model);
    options.dry_run = dry_run_checker();
    for (const std::string* source : {&a.chat_template_file, &a.from_json})
        if (!source->empty()) options.guard->add_input(*source);
    auto written = write_edit(*model, *plan, a.out, nullptr, options);
    // An error about the input (changed or cut short while it was copied) is said of the input.
    if (!written) return fail(written.error().field == "input" ? a.path : a.out, written.error());
    out["output"] = written->path;
    out["result"] = {{"data_path", data_path_name(written->data_path)},
                     {"bytes_written", written->bytes},
                     {"data_bytes_copied", written->data_bytes_copied},
                     {"undo_file", nullptr},
                     {"verification", verification_json(written->verification)}};
    if (a.json)
        print_json_result(out);
    else {
        std::cout << "wrote " << escape_for_display(written->path) << ": " << written->bytes << " bytes; data by "
                  << data_path_name(written->data_path) << " (" << written->data_bytes_copied << " bytes copied, holes kept)\n";
        print_verification(written->verification, false);
    }
    return kExitOk;
}

}  // namespace

void add_edit_command(CLI::App& app, int& exit_code) {
    auto* cmd =
        app.add_subcommand("edit", "Edit the metadata of a GGUF (or a safetensors file's __metadata__) without touching its tensor data");
    auto a = std::make_shared<EditArguments>();
    cmd->add_option("FILE", a->path, "GGUF or safetensors file to edit")->required();
    cmd->add_option("-o,--output", a->out, "Write the edited file here (verified, then placed)");
    cmd->add_option("--set", a->sets, "KEY=VALUE or KEY:TYPE=VALUE (TYPE: UINT32, STRING, ARRAY[INT32], ...; arrays as JSON)");
    cmd->add_option("--delete", a->deletes, "Delete KEY");
    cmd->add_option("--rename", a->renames, "Rename KEY to NEW (repeatable)")->type_size(2)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--chat-template-file", a->chat_template_file, "Set tokenizer.chat_template to this file's text");
    cmd->add_option("--from-json", a->from_json, "Edits from a JSON file: {\"set\": {...}, \"delete\": [...], \"rename\": {...}}");
    cmd->add_flag("--dry-run", a->dry_run, "Print the diff of the header and write nothing");
    cmd->add_flag("--in-place", a->in_place, "Write the new header into FILE when it fits (old bytes kept in FILE.mlens-undo)");
    cmd->add_flag("--undo", a->undo, "Put back the header bytes an --in-place edit saved in FILE.mlens-undo");
    cmd->add_flag("--json", a->json, "Print the plan and the result as JSON");
    cmd->callback([a, &exit_code] { exit_code = run_edit(*a); });
}

}  // namespace mlens::cli
