// The shape of an Ollama store on disk, as far as writing files needs it: the output guard
// (safe_file_writer.h) protects the store an input lies in, and the store reader (ollama/store.h)
// finds stores by the same rule.
//
// Contract:
//  - is_store_root is the store-root rule, the one every command and view uses: a directory
//    holding a manifests/ directory (Ollama creates it with the first pull and keeps it), symbolic
//    links followed. A directory with only blobs/ holds no model Ollama could name, so it is not
//    a store.
//  - is_blob_file_name: exactly "sha256-" followed by 64 lowercase hex digits, the name of a blob
//    in blobs/ (ollama/digest.h labels every other name found there). A pure function of the name.
#pragma once

#include <string>
#include <string_view>

namespace mlens {

bool is_store_root(const std::string& path);
bool is_blob_file_name(std::string_view name);

}  // namespace mlens
