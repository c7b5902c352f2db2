// `mlens verify ollama://[REGISTRY/][NAMESPACE/]MODEL[:TAG]`: every blob of a registry model read
// whole, hashed and compared with its digest (verify_registry_model, registry_verify.h).
//
// Text: the reference and the manifest's digest, then one row per blob (config first) with its
// kind, digest cut to 12 digits, size and VERIFY ("ok", "MISMATCH" or the error's code), then
// "verdict: ok, N blobs match their digests (X hashed)" or "verdict: rejected, ...". Each failed
// blob is also a diagnostic line on stderr (format "store", its field, the whole message). JSON:
// mlens-show.schema.json's registry_verification. Exit 1 when a blob failed; a manifest that could
// not be fetched, or a model past the download limit, is the command's error (fail()).
#include <iostream>

#include "cli_common.h"
#include "cli_job.h"
#include "mlens/model/model_json.h"
#include "mlens/ollama/registry_verify.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "store_output.h"

namespace mlens::cli {

namespace {

// The failure of one blob as a diagnostic, its field after the reference ("ollama://m:t
// layers[0].digest") as a store's is after its manifest's path.
Diagnostic blob_diagnostic(const std::string& reference, const RegistryBlobCheck& blob) {
    const Error& e = blob.result.error();
    return {Severity::error, "store", e.code, reference + " " + (e.field.empty() ? blob.field : e.field), std::nullopt, e.message};
}

const char* kind_text(const RegistryBlobCheck& blob) { return layer_kind_name(layer_kind(blob.media_type)); }

void print_json(const std::string& reference, const RegistryVerification& v) {
    nlohmann::json layers = nlohmann::json::array(), diagnostics = nlohmann::json::array();
    for (const RegistryBlobCheck& blob : v.blobs) {
        layers.push_back({{"field", blob.field},
                          {"kind", kind_text(blob)},
                          {"mediaType", escape_for_display(blob.media_type, 200)},
                          {"digest", escape_for_display(blob.digest, 200)},
                          {"size", blob.size},
                          {"actual_digest", blob.actual.empty() ? nlohmann::json(nullptr) : nlohmann::json(blob.actual)},
                          {"verified", blob.verdict()}});
        if (!blob.result) diagnostics.push_back(diagnostic_to_json(blob_diagnostic(reference, blob)));
    }
    print_json_result({{"reference", reference},
                       {"repository", display_url(v.repository)},
                       {"manifest_digest", v.manifest_digest},
                       {"layers", layers},
                       {"bytes_hashed", v.bytes_hashed},
                       {"ok", v.ok()},
                       {"mismatched", v.mismatched()},
                       {"diagnostics", diagnostics}});
}

void print_text(const std::string& reference, const RegistryVerification& v) {
    for (const RegistryBlobCheck& blob : v.blobs)
        if (!blob.result) std::cerr << blob_diagnostic(reference, blob).to_line() << "\n";
    std::cout << reference << "  (" << display_url(v.repository) << ")\n"
              << "manifest  " << short_digest(v.manifest_digest) << "\n\n";
    std::vector<std::vector<std::string>> rows = {{"KIND", "DIGEST", "SIZE", "VERIFY"}};
    for (const RegistryBlobCheck& blob : v.blobs)
        rows.push_back({kind_text(blob), escape_for_display(short_digest(blob.digest), 80), human_bytes(blob.size), blob.verdict()});
    print_table(rows);
    std::cout << "\nverdict: " << v.verdict_text() << "\n";
}

}  // namespace

int print_registry_verification(const std::string& text, bool json) {
    auto reference = parse_registry_reference(std::string_view(text).substr(std::string_view("ollama://").size()));
    if (!reference) return fail(text, reference.error());
    RegistryVerification verification;
    {
        CliJob job("verifying");
        auto verified = verify_registry_model(*reference, job.job());
        if (!verified) return fail(text, verified.error());
        verification = std::move(*verified);
    }
    const std::string shown = escape_for_display(text);
    if (json)
        print_json(shown, verification);
    else
        print_text(shown, verification);
    return verification.ok() ? kExitOk : kExitBroken;
}

}  // namespace mlens::cli
