// The blobs of a registry's model held open a few at a time. A Model keeps a source per blob for
// its whole life, and a remote source holds what it fetched (its first kFirstFetchBytes at least,
// remote_source.h): a model of a thousand tensor blobs would hold half a gigabyte of first
// fetches. A pooled blob holds its remote source only while it is among the `open_blobs` blobs
// of its pool read most recently; past that the source is dropped, with what it held, and the
// blob's URL is opened again on its next read.
//
// Contract:
//  - pooled_blob(pool, url, options, first) is a ByteSource over the blob at `url` whose source
//    is `first` (open_remote(url, options) as the model's open made it): path(), size() and
//    reference_query() are first's. The pool is shared by the blobs of one model.
//  - A read of a dropped blob opens the URL again (open_remote, with the range cache of
//    `options` when it has one, which then serves the ranges fetched before); an open that
//    fails, or finds another size than first's, fails the read and read_failure() says why. A
//    blob is named by its digest and its bytes are not checked again here: a registry that
//    serves other bytes under it is what `mlens verify` finds.
//  - After a read failed, the blob keeps its source (never dropped again): later reads of bytes
//    it does not hold fail as that source decides, without opening the URL anew.
//  - Reads are thread-safe; a source is never dropped under a read in progress.
#pragma once

#include <memory>
#include <string>

#include "mlens/io/byte_source.h"
#include "mlens/remote/remote_source.h"

namespace mlens {

class RegistryBlobPool;

std::shared_ptr<RegistryBlobPool> make_registry_blob_pool(size_t open_blobs);

ByteSourcePtr pooled_blob(const std::shared_ptr<RegistryBlobPool>& pool, const std::string& url, const RemoteOptions& options,
                          ByteSourcePtr first);

}  // namespace mlens
