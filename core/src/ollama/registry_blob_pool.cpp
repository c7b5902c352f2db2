#include "registry_blob_pool.h"

#include <algorithm>
#include <list>
#include <mutex>

namespace mlens {

namespace {

class PooledBlob;

}  // namespace

// The blobs holding a source, most recently read first. Its mutex is taken before a blob's,
// never after, so that dropping a blob's source cannot wait for a reader of that blob.
class RegistryBlobPool {
public:
    explicit RegistryBlobPool(size_t open_blobs) : m_open_blobs(std::max<size_t>(open_blobs, 1)) {}
    void used(const PooledBlob* blob);
    void forget(const PooledBlob* blob);

private:
    std::mutex m_mutex;
    std::list<const PooledBlob*> m_open;
    size_t m_open_blobs;
};

namespace {

class PooledBlob final : public ByteSource {
public:
    PooledBlob(std::shared_ptr<RegistryBlobPool> pool, std::string url, RemoteOptions options, ByteSourcePtr first)
        : ByteSource(first->path(), first->size()),
          m_pool(std::move(pool)),
          m_url(std::move(url)),
          m_options(std::move(options)),
          m_query(first->reference_query()),
          m_source(std::move(first)) {}
    ~PooledBlob() override { m_pool->forget(this); }

    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        return with_source([&](const ByteSource& s) { return s.read(offset, length, dst); });
    }
    bool read_ahead(uint64_t offset, uint64_t length, void* dst, uint64_t ahead_end) const override {
        return with_source([&](const ByteSource& s) { return s.read_ahead(offset, length, dst, ahead_end); });
    }
    std::string read_failure() const override {
        std::lock_guard lock(m_mutex);
        return m_failure;
    }
    std::string reference_query() const override { return m_query; }

    // Lets go of the source unless a read of it failed.
    void drop() const {
        std::lock_guard lock(m_mutex);
        if (!m_failed) m_source.reset();
    }

private:
    template <typename Read>
    bool with_source(const Read& read) const {
        ByteSourcePtr source = open_source();
        if (!source) return false;
        m_pool->used(this);
        if (read(*source)) return true;
        std::lock_guard lock(m_mutex);
        m_failure = source->read_failure();
        m_failed = true;
        m_source = source;
        return false;
    }

    // The source held, or the URL opened again.
    ByteSourcePtr open_source() const {
        {
            std::lock_guard lock(m_mutex);
            if (m_source) return m_source;
        }
        auto reopened = open_remote(m_url, m_options);
        std::lock_guard lock(m_mutex);
        if (!reopened) {
            m_failure = reopened.error().to_string();
            return nullptr;
        }
        if ((*reopened)->size() != size()) {
            m_failure = Error{ErrorCode::E_REMOTE_CHANGED, "", std::nullopt,
                              path() + ": the registry's blob has " + std::to_string((*reopened)->size()) + " bytes now, " +
                                  std::to_string(size()) + " when it was opened"}
                            .to_string();
            return nullptr;
        }
        if (!m_source) m_source = std::move(*reopened);
        return m_source;
    }

    std::shared_ptr<RegistryBlobPool> m_pool;
    std::string m_url;
    RemoteOptions m_options;
    std::string m_query;
    mutable std::mutex m_mutex;
    mutable ByteSourcePtr m_source;
    mutable std::string m_failure;
    mutable bool m_failed = false;
};

}  // namespace

void RegistryBlobPool::used(const PooledBlob* blob) {
    std::lock_guard lock(m_mutex);
    auto at = std::find(m_open.begin(), m_open.end(), blob);
    if (at != m_open.end())
        m_open.splice(m_open.begin(), m_open, at);
    else
        m_open.push_front(blob);
    while (m_open.size() > m_open_blobs) {
        m_open.back()->drop();
        m_open.pop_back();
    }
}

void RegistryBlobPool::forget(const PooledBlob* blob) {
    std::lock_guard lock(m_mutex);
    m_open.remove(blob);
}

std::shared_ptr<RegistryBlobPool> make_registry_blob_pool(size_t open_blobs) { return std::make_shared<RegistryBlobPool>(open_blobs); }

ByteSourcePtr pooled_blob(const std::shared_ptr<RegistryBlobPool>& pool, const std::string& url, const RemoteOptions& options,
                          ByteSourcePtr first) {
    auto blob = std::make_shared<PooledBlob>(pool, url, options, std::move(first));
    pool->used(blob.get());
    return blob;
}

}  // namespace mlens
