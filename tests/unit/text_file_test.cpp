// read_text_file: the bytes of a regular file as they are, and a refusal naming what any other
// path is, without blocking on a FIFO.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "mlens/io/text_file.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("read_text_file reads a regular file and refuses everything else", "[io]") {
    test::TempDir dir;
    const std::string text = dir.file("corpus.txt");
    {
        std::ofstream out(text, std::ios::binary);
        out << "one\r\ntwo" << std::string("\0\xff", 2);
    }
    auto read = read_text_file(text, kMaxCorpusTextBytes);
    REQUIRE(read.ok());
    CHECK(*read == std::string("one\r\ntwo") + std::string("\0\xff", 2));

    auto small = read_text_file(text, 4);
    REQUIRE(!small.ok());
    CHECK(small.error().code == ErrorCode::E_TOO_LARGE);
    CHECK(small.error().message.find("10 bytes, more than the 4 read at most") != std::string::npos);

    const std::string fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto from_fifo = read_text_file(fifo, kMaxCorpusTextBytes);
    REQUIRE(!from_fifo.ok());
    CHECK(from_fifo.error().code == ErrorCode::E_NOT_REGULAR);
    CHECK(from_fifo.error().message.find("a FIFO, not a regular file") != std::string::npos);

    auto folder = read_text_file(dir.path(), kMaxCorpusTextBytes);
    REQUIRE(!folder.ok());
    CHECK(folder.error().message.find("a directory, not a regular file") != std::string::npos);

    auto missing = read_text_file(dir.file("missing.txt"), kMaxCorpusTextBytes);
    REQUIRE(!missing.ok());
    CHECK(missing.error().code == ErrorCode::E_NOT_FOUND);
}
