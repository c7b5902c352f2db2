// RemoteSource: a ByteSource over a file on an HTTP(S) server, read with Range requests.
//
// Contract:
//  - open_remote asks for the first kFirstFetchBytes (bytes=0-524287) and learns the size from
//    the answer's Content-Range; the file's validator is its strong ETag, else its Last-Modified.
//    A server that answers 200 (ignores Range) fails the open with E_NO_RANGE after at most one
//    receive buffer of the body (http_client.h). path() is display_url(url): no credential, no
//    query.
//  - An empty file (answered 416 with Content-Range "bytes */0", http_client.h) opens as a source
//    of size 0 in that one request, never an error: a reader of several files from one server
//    (TransferBatch) goes on to the next. An open that learns from the cache's one-byte check
//    that the file is empty fetches nothing more.
//  - read() serves what is held and fetches what is missing, in one request per gap. Reads that
//    continue where the last fetch ended (a header parsed front to back) fetch ahead
//    geometrically: each such request fetches three times what the run has fetched so far, so
//    the run holds 512 KiB, 2 MiB, 8 MiB, 32 MiB after 1, 2, 3, 4 requests: a header of up to
//    7 MiB (the parser's 1 MiB window past it included) opens in 3 requests and 8 MiB. A read
//    elsewhere starts a new run with kFirstFetchBytes.
//  - read_ahead() (tensor data, byte_source.h) fetches up to its ahead_end and never past it, so
//    reading one tensor's bytes transfers that tensor's bytes and no others.
//  - One request fetches at most kMaxFetchBytes; more is more requests. All remote sources of the
//    process together hold at most kHeldBytes in memory (or what set_remote_held_limit set) once
//    their reads are done, beside the range each source used last: after a read, the least
//    recently used ranges of any source not reading at that moment are dropped past it (and
//    fetched again, or read from the cache, when read again). remote_held_bytes() is what they
//    hold now.
//  - Every answer is checked against the open's: its Content-Range must name the size seen at
//    open (a 416's "bytes */LENGTH" names LENGTH, http_client.h) and it must carry the same
//    validator, or none for a file opened without one; else the read fails with
//    E_REMOTE_CHANGED. A file with a validator: every later request carries If-Range with it, so
//    a change on the server (200 to If-Range, or another ETag, Last-Modified or size in a 206) is
//    always seen and nothing of the new file is ever mixed with the bytes held. A file without
//    one (no strong ETag, no Last-Modified) can be checked only by its size and by its weak ETag
//    when it has one (an answer with another weak ETag is E_REMOTE_CHANGED): a change that keeps
//    both is not seen, and bytes of two versions of it may be mixed in one read; its ranges are
//    never stored in the cache (range_cache.h), so no later open reads them.
//  - read() is const and thread-safe (one mutex; a fetch holds it). A failed read returns false
//    and read_failure() says why (the HTTP error's text). A fetch that failed for any reason but a
//    cancellation ends the source's fetching: later reads of bytes not held fail at once with the
//    same failure and send nothing (a reader that goes on after a failed read, a token at a time,
//    would otherwise send a request per read). Bytes already held are still read. Opening the
//    URL again starts afresh.
//  - A version is stored only when its answer shows it could not change unseen: without a
//    Last-Modified, or with one a whole second or more before the answer's Date (a date in the
//    answer's own second, or no Date, is weak: RFC 9110 8.8.2.2).
//  - With a cache (range_cache.h): an open of a URL the cache has asks the server for one byte
//    (bytes=0-0) to learn the current size and validator; when that version is stored, the open
//    transfers nothing more and every stored range is read from disk, so a second run costs one
//    request of one byte. Ranges fetched are stored in the entry of the version the source
//    opened; a file that changed since gets a new entry (the old one is removed).
//  - Download budget: set_download_budget(bytes) bounds what all remote sources of the process
//    fetch from then on (the CLI's --max-download); a fetch that would go past it fails with
//    E_DOWNLOAD_LIMIT naming the amounts; read-ahead shrinks to what the budget has left, so
//    only bytes a read asks for can fail it. What the budget is charged is what was received: an
//    open asks for its first bytes (at most what is left) and what a shorter file did not send
//    goes back. Budget 0 means none.
#pragma once

#include <optional>
#include <string>

#include "mlens/io/byte_source.h"
#include "mlens/job.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/range_cache.h"
#include "mlens/remote/remote_url.h"

namespace mlens {

constexpr uint64_t kFirstFetchBytes = 512u << 10;
constexpr uint64_t kMaxFetchBytes = 64u << 20;
constexpr uint64_t kHeldBytes = 256u << 20;

struct RemoteOptions {
    HttpOptions http = http_options_from_environment();
    std::optional<Credential> credential;
    std::shared_ptr<RangeCache> cache;  // null: nothing is kept on disk
};

Result<ByteSourcePtr> open_remote(const std::string& url, const RemoteOptions& options, JobContext* job = nullptr);

uint64_t remote_held_bytes();
void set_remote_held_limit(uint64_t bytes);

// Remote sources of this process fetch at most `bytes` more from now on (0: no limit).
void set_download_budget(uint64_t bytes);
// The budget set last (0: none).
uint64_t download_budget();
// What the budget has left (UINT64_MAX without one).
uint64_t download_budget_left();

}  // namespace mlens
