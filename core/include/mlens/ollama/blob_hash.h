// Streaming sha256 of a blob (OpenSSL EVP), for verifying store blobs on demand.
//
// Contract:
//  - The file is opened O_RDONLY | O_NOFOLLOW | O_NONBLOCK and must be a regular file (checked on
//    the descriptor, E_NOT_REGULAR_FILE); it is read in fixed chunks until EOF, never sized or
//    preallocated from anything in a manifest. Memory is one chunk.
//  - Cancellable: job is checked between chunks (E_CANCELLED); on_progress, if given, receives
//    the bytes hashed so far after each chunk.
//  - A file that changes size while it is read is reported (E_CHANGED) instead of hashed as a
//    mix; read errors are E_IO.
//  - sha256_source hashes a ByteSource front to back in 4 MiB reads (read_ahead to its end, so a
//    remote source fetches large ranges: remote_source.h), with the same cancel and progress; a
//    read that fails is source_read_error's error (a remote source's E_NETWORK, E_DOWNLOAD_LIMIT,
//    E_REMOTE_CHANGED ...). Memory is one read.
//  - verify_blob compares the hash with the digest the manifest names (E_DIGEST_MISMATCH with the
//    expected and actual digests); verification never trusts the size alone. It reports progress
//    to the job as bytes hashed / the blob's size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "mlens/io/byte_source.h"
#include "mlens/job.h"
#include "mlens/ollama/digest.h"
#include "mlens/ollama/store.h"
#include "mlens/result.h"

namespace mlens {

struct FileHash {
    std::string hex;  // 64 lowercase hex digits
    uint64_t bytes = 0;
};

// The sha256 of bytes in memory, 64 lowercase hex digits.
std::string sha256_hex_digest(std::string_view bytes);

Result<FileHash> sha256_file(const std::string& path, JobContext* job = nullptr, const std::function<void(uint64_t)>& on_progress = {});

Result<FileHash> sha256_source(const ByteSource& source, JobContext* job = nullptr, const std::function<void(uint64_t)>& on_progress = {});

// Hashes the blob and compares; ok when the content matches `expected`.
Status verify_blob(const BlobLookup& blob, const BlobDigest& expected, JobContext* job = nullptr);

}  // namespace mlens
