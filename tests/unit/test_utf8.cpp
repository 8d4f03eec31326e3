// UTF-8 validity, U+FFFD replacement and base64: what lets reports carry argv
// and paths that are not UTF-8.
#include <max_rss/util/utf8.hpp>

#include <catch2/catch.hpp>

#include <string>

using max_rss::base64_decode;
using max_rss::base64_encode;
using max_rss::is_valid_utf8;
using max_rss::to_valid_utf8;

namespace {
const std::string fffd = "\xEF\xBF\xBD";
}

TEST_CASE("is_valid_utf8 accepts RFC 3629 and nothing else", "[utf8]") {
    CHECK(is_valid_utf8(""));
    CHECK(is_valid_utf8("plain ascii\n\t"));
    CHECK(is_valid_utf8("µs ± σ … → 𝄞"));
    CHECK(is_valid_utf8(std::string("nul\0inside", 10)));
    CHECK_FALSE(is_valid_utf8("\xFF"));
    CHECK_FALSE(is_valid_utf8("a\x80"));              // a lone continuation byte
    CHECK_FALSE(is_valid_utf8("\xC0\xAF"));           // overlong '/'
    CHECK_FALSE(is_valid_utf8("\xE0\x80\xAF"));       // overlong '/'
    CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));       // a surrogate, U+D800
    CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));   // above U+10FFFF
    CHECK_FALSE(is_valid_utf8("\xE2\x82"));           // truncated €
}

TEST_CASE("to_valid_utf8 replaces each maximal ill-formed subpart by one U+FFFD", "[utf8]") {
    CHECK(to_valid_utf8("µs ± σ … → 𝄞") == "µs ± σ … → 𝄞");
    CHECK(to_valid_utf8("a\xFF" "b") == "a" + fffd + "b");
    CHECK(to_valid_utf8("\xE2\x82") == fffd);                       // one subpart
    CHECK(to_valid_utf8("\xE2\x82" "x") == fffd + "x");
    CHECK(to_valid_utf8("\xC0\xAF") == fffd + fffd);                // C0 never starts a sequence
    CHECK(to_valid_utf8("\xED\xA0\x80") == fffd + fffd + fffd);     // ED A0 is not a prefix
    CHECK(to_valid_utf8("\xF0\x9D\x84") == fffd);                   // truncated 𝄞
    CHECK(to_valid_utf8("\xF0\x9D\x84\x9E\xF0") == "𝄞" + fffd);
    CHECK(is_valid_utf8(to_valid_utf8("\x80\x81\xFE\xFF\xC2")));
}

TEST_CASE("base64 round-trips any bytes, RFC 4648 test vectors", "[utf8]") {
    CHECK(base64_encode("") == "");
    CHECK(base64_encode("f") == "Zg==");
    CHECK(base64_encode("fo") == "Zm8=");
    CHECK(base64_encode("foo") == "Zm9v");
    CHECK(base64_encode("foob") == "Zm9vYg==");
    CHECK(base64_encode("fooba") == "Zm9vYmE=");
    CHECK(base64_encode("foobar") == "Zm9vYmFy");
    CHECK(base64_encode("\xFB\xFF") == "+/8=");
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    CHECK(base64_decode(base64_encode(all)) == all);
    CHECK(base64_decode("Zm9vYg==") == "foob");
    CHECK(base64_decode("") == "");
    CHECK_FALSE(base64_decode("Zm9vYg=").has_value());   // not padded
    CHECK_FALSE(base64_decode("Zm9v Yg==").has_value());  // not the alphabet
    CHECK_FALSE(base64_decode("Zg=a").has_value());       // padding in the middle
    CHECK_FALSE(base64_decode("====").has_value());
}
