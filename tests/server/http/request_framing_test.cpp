// Request framing (RFC 9112 §2, §5, §6): the red-team findings as exact cases, then a differential check of a
// generated corpus of request heads against an independent parser (Node's llhttp, through framing_oracle.mjs).
#include "server/http/request_framing.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kairo::server::http_detail {
namespace {

using Outcome = FramedRequest::Outcome;
constexpr uint64_t kMaxBody = 1 << 20;
constexpr uint32_t kMaxHead = 16 << 10;

FramedRequest frame(const std::string& bytes) { return frame_request(bytes, kMaxBody, kMaxHead); }

std::string post(const std::string& fields, const std::string& body = "", const std::string& version = "HTTP/1.1") {
  return "POST /v1/completions " + version + "\r\nHost: x\r\n" + fields + "\r\n" + body;
}

const std::string kChunkedHello = "5\r\nhello\r\n0\r\n\r\n";

TEST(RequestFraming, UnknownTransferCodingIsRefusedSoTheBodyIsNeverReadAsARequest) {
  // The finding: "xchunked" (or "gzip") followed by a body that is itself a request was answered 400 with the
  // connection kept open, and the body then served as a second request.
  for (const std::string te : {"xchunked", "gzip", "chunked, gzip", "identity"}) {
    const auto r = frame(post("Transfer-Encoding: " + te + "\r\n", "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(r.outcome, Outcome::Refused) << te;
    EXPECT_EQ(r.refusal.status, 400) << te;
    EXPECT_EQ(r.refusal.message, "malformed HTTP request: Transfer-Encoding \"" + te +
                                     "\" does not end in chunked, so the body's length cannot be known (RFC 9112 "
                                     "§6.3); send it chunked or with Content-Length")
        << te;
  }
}

TEST(RequestFraming, ACodingBeforeChunkedIsNotImplemented) {
  // "gzip, chunked" was accepted with the gzip silently dropped.
  for (const std::string fields : {"Transfer-Encoding: gzip, chunked\r\n",
                                   "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"}) {
    const auto r = frame(post(fields, kChunkedHello));
    ASSERT_EQ(r.outcome, Outcome::Refused) << fields;
    EXPECT_EQ(r.refusal.status, 501);
    EXPECT_EQ(r.refusal.message, "the transfer coding \"gzip\" is not implemented; send the body with chunked alone "
                                 "or with Content-Length");
  }
}

TEST(RequestFraming, AWellFormedVersionOtherThan10And11Is505AndAMalformedOne400) {
  // RFC 9112 §2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT. Beast calls every version it does not read "bad version";
  // the scanner answers a well-formed one with 505 (RFC 9110 §15.6.6) before Beast sees it.
  for (const std::string v : {"HTTP/2.0", "HTTP/3.0", "HTTP/0.9", "HTTP/1.2", "HTTP/9.9"}) {
    const auto r = frame("GET / " + v + "\r\nHost: x\r\n\r\n");
    ASSERT_EQ(r.outcome, Outcome::Refused) << v;
    EXPECT_EQ(r.refusal.status, 505) << v;
    EXPECT_EQ(r.refusal.message, "the request is " + v + ", a version this server does not speak; send HTTP/1.1 (or "
                                 "HTTP/1.0)");
  }
  // After empty lines before the request line too (RFC 9112 §2.2).
  EXPECT_EQ(frame("\r\n\r\nGET / HTTP/2.0\r\nHost: x\r\n\r\n").refusal.status, 505);
  for (const std::string v : {"HTTP/1.10", "HTTP/11.1", "HTTP/A.1", "HTTP/1", "http/1.1", "HTTP/1.1 ", "HTTP/2",
                              "HTTP/2.0x", "HTTPS/1.1", ""}) {
    const auto r = frame("GET / " + v + "\r\nHost: x\r\n\r\n");
    ASSERT_EQ(r.outcome, Outcome::Refused) << v;
    EXPECT_EQ(r.refusal.status, 400) << v;
  }
  for (const std::string v : {"HTTP/1.1", "HTTP/1.0"}) {
    EXPECT_EQ(frame("GET / " + v + "\r\nHost: x\r\n\r\n").outcome, Outcome::Accepted) << v;
  }
}

TEST(RequestFraming, ChunkedIsAcceptedInAnyCaseWithExtensionsAndTrailers) {
  for (const std::string te : {"chunked", "Chunked", "CHUNKED", " chunked "}) {
    const auto r = frame(post("Transfer-Encoding:" + te + "\r\n", kChunkedHello));
    ASSERT_EQ(r.outcome, Outcome::Accepted) << te;
    EXPECT_EQ(r.body, "hello");
  }
  const std::string request =
      post("Transfer-Encoding: chunked\r\n", "5;name=value;q=\"a b\"\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n");
  const auto r = frame(request + "NEXT");  // a pipelined next request starts where this one ends
  ASSERT_EQ(r.outcome, Outcome::Accepted);
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.consumed, request.size());
}

TEST(RequestFraming, AmbiguousLengthsAreRefused) {
  const struct {
    std::string fields;
    std::string message;
  } cases[] = {
      {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
       "malformed HTTP request: both Content-Length and Transfer-Encoding; send only one"},
      {"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
       "malformed HTTP request: both Content-Length and Transfer-Encoding; send only one"},
      {"Content-Length: 5\r\nContent-Length: 5\r\n",
       "malformed HTTP request: more than one Content-Length header; send one"},
      {"Content-Length: 5, 5\r\n", "malformed HTTP request: Content-Length \"5, 5\" is not a single decimal number"},
      {"Content-Length: +5\r\n", "malformed HTTP request: Content-Length \"+5\" is not a single decimal number"},
      {"Transfer-Encoding: chunked, chunked\r\n",
       "malformed HTTP request: chunked applied more than once in Transfer-Encoding"},
      {"Transfer-Encoding: chunked,\r\n", "malformed HTTP request: Transfer-Encoding \"chunked,\" has an empty element"},
      {"Transfer-Encoding: ,chunked\r\n", "malformed HTTP request: Transfer-Encoding \",chunked\" has an empty element"},
  };
  for (const auto& c : cases) {
    const auto r = frame(post(c.fields, kChunkedHello));
    ASSERT_EQ(r.outcome, Outcome::Refused) << c.fields;
    EXPECT_EQ(r.refusal.status, 400);
    // Beast refuses some of these itself (with its own words); the rest get ours.
    if (r.refusal.message.find("bad Content-Length") == std::string::npos &&
        r.refusal.message.find("bad Transfer-Encoding") == std::string::npos) {
      EXPECT_EQ(r.refusal.message, c.message);
    }
  }
  const auto r = frame(post("Transfer-Encoding: chunked\r\n", kChunkedHello, "HTTP/1.0"));
  ASSERT_EQ(r.outcome, Outcome::Refused);
  EXPECT_EQ(r.refusal.message, "malformed HTTP request: Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1); "
                               "send the body with Content-Length");
}

TEST(RequestFraming, HeadLineEndingsFoldingAndHostAreChecked) {
  const struct {
    std::string bytes;
    std::string message;
  } cases[] = {
      {"POST / HTTP/1.1\nHost: x\n\n", "malformed HTTP request: a line of the request head ends in a bare LF; "
                                       "HTTP/1.1 ends every line with CRLF"},
      {"POST / HTTP/1.1\r\nHost: x\rY\r\n\r\n", "malformed HTTP request: a CR not followed by LF in the request head"},
      {"POST / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
       "malformed HTTP request: a header line starts with a space or tab (obsolete line folding); send each header "
       "on one line"},
      {"POST / HTTP/1.1\r\n Host: x\r\n\r\n",
       "malformed HTTP request: whitespace between the request line and the first header"},
      {"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "malformed HTTP request: an HTTP/1.1 request needs a Host "
                                                       "header"},
      {"POST / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "malformed HTTP request: more than one Host header"},
  };
  for (const auto& c : cases) {
    const auto r = frame(c.bytes);
    ASSERT_EQ(r.outcome, Outcome::Refused) << c.bytes;
    EXPECT_EQ(r.refusal.status, 400);
    EXPECT_EQ(r.refusal.message, c.message);
  }
  // Empty lines before the request line are skipped (RFC 9112 §2.2); HTTP/1.0 needs no Host.
  auto r = frame("\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(r.outcome, Outcome::Accepted);
  EXPECT_EQ(r.target, "/health");
  r = frame("GET /health HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.outcome, Outcome::Accepted);
}

TEST(RequestFraming, TheScannerChecksEachByteOnceAsBytesArrive) {
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n";
  RequestHeadScanner scanner(kMaxHead);
  for (size_t n = 1; n < head.size(); ++n) {
    ASSERT_EQ(scanner.scan(std::string_view(head).substr(0, n)), RequestHeadScanner::State::NeedMore) << n;
  }
  ASSERT_EQ(scanner.scan(head + "{}"), RequestHeadScanner::State::Complete);
  EXPECT_EQ(scanner.head_bytes(), head.size());

  RequestHeadScanner small(64);
  EXPECT_EQ(small.scan(std::string(100, 'a')), RequestHeadScanner::State::Refused);
  EXPECT_EQ(small.refusal().status, 431);
}

// ---- The differential corpus ------------------------------------------------------------------------------------

// Request heads made from the framing fields in many combinations, with bodies in several framings, plus the head
// anomalies; every case is complete under at least one reading of its framing.
std::vector<std::string> framing_corpus() {
  const std::vector<std::string> transfer_encodings = {
      "", "chunked", "Chunked", "xchunked", "chunked, gzip", "gzip, chunked", "gzip", "identity", "chunked, chunked",
      " chunked", "chunked ", ",chunked", "chunked,", "chunked;a=1", "gzip,,chunked", "\"chunked\"", "chunked\t"};
  const std::vector<std::vector<std::string>> content_lengths = {
      {}, {"5"}, {"05"}, {"0"}, {"+5"}, {"-1"}, {"5, 5"}, {"5,6"}, {"5", "5"}, {"5", "6"}, {" 5"}, {"0x5"},
      {"99999999999999999999"}, {"5 5"}};
  const std::vector<std::string> bodies = {
      "hello", kChunkedHello, "5;ext=1\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0\r\nTrailer: t\r\n\r\n",
      "g\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n", "5\nhello\n0\n\n",
      "ffffffffffffffffffff\r\nhello\r\n0\r\n\r\n", "5 ;a=\"b\\\"c\"\r\nhello\r\n0\r\n\r\n"};
  std::vector<std::string> out;
  for (const auto& te : transfer_encodings) {
    for (const auto& cls : content_lengths) {
      std::string fields;
      if (!te.empty()) fields += "Transfer-Encoding:" + (te.front() == ' ' ? te : " " + te) + "\r\n";
      for (const auto& cl : cls) fields += "Content-Length: " + cl + "\r\n";
      // The body kind cycles with the case so that every pairing of framing and body occurs across the corpus
      // without the full product.
      out.push_back(post(fields, bodies[out.size() % bodies.size()]));
      if (!te.empty() && cls.empty()) {
        for (const auto& body : bodies) out.push_back(post(fields, body));
      }
    }
  }
  const std::vector<std::string> anomalies = {
      "POST / HTTP/1.1\nHost: x\nContent-Length: 5\n\nhello",
      "POST / HTTP/1.1\r\nHost: x\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n chunked\r\n\r\n" + kChunkedHello,
      "POST / HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: x\r\n\r\n" + kChunkedHello,
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n" + kChunkedHello,
      "POST / HTTP/1.1\r\nHost: x\r\nContent Length: 5\r\n\r\nhello",
      "\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + kChunkedHello,
      "POST  / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1 \r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/2.0\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.2\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/0.9\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/3.0\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.x\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "post / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST http://x/v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nX-Nul: a\0b\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nX-Tab:\ta\t\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nX-Del: a\x7f\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nX-Obs: caf\xc3\xa9\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\n: empty-name\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nX(A): b\r\nContent-Length: 5\r\n\r\nhello",
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n00000005\r\nhello\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nBad Trailer\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nT: a\r\n b\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;\r\nhello\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\r\nhello\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n",
  };
  for (const auto& a : anomalies) out.push_back(a);
  return out;
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], k[v & 63]};
  }
  if (i + 1 == in.size()) {
    const uint32_t v = uint8_t(in[i]) << 16;
    out += {k[v >> 18], k[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
  }
  return out;
}

std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else if (c < 32 || c >= 127) out += "\\x" + std::to_string(c);
    else out += static_cast<char>(c);
  }
  return out;
}

// Where kairo refuses what llhttp reads, each for a reason the RFC gives.
bool stricter_by_design(const FramedRequest& ours) {
  const std::string& m = ours.refusal.message;
  return ours.refusal.status == 501 ||                            // a coding before chunked (RFC 9112 §6.1: 501)
         m.find("in an HTTP/1.0 request") != std::string::npos ||  // §6.1: that framing is faulty
         m.find("has an empty element") != std::string::npos ||    // a list no two parsers need to agree on
         m == "malformed HTTP request: bad target" ||              // §3: one SP between the request line's parts
         ours.refusal.status == 505 ||                             // HTTP/2.0, 0.9: not spoken (RFC 9110 §15.6.6)
         m == "malformed HTTP request body: bad chunk extension";   // §7.1.1: an empty chunk-ext-val
}

// Where kairo reads what llhttp refuses: none changes where the request ends.
bool looser_by_design(const std::string& request, const std::string& oracle_code) {
  const struct {
    const char* code;
    const char* in_request;
  } allowed[] = {
      {"HPE_INVALID_CHUNK_SIZE", "5 ;"},                 // §7.1.1 allows BWS before a chunk extension
      {"HPE_INVALID_TRANSFER_ENCODING", "chunked\t\r\n"},  // trailing OWS is not part of a field value (RFC 9110 §5.5)
      {"HPE_INVALID_METHOD", "post /"},                  // an unknown method (the route answers 405), not framing
      {"HPE_INVALID_HEADER_TOKEN", "0\r\nT: a\r\n b"},     // folding in a trailer: trailers are dropped, never merged
  };
  for (const auto& a : allowed) {
    if (oracle_code == a.code && request.find(a.in_request) != std::string::npos) return true;
  }
  return false;
}

TEST(RequestFramingDifferential, AgreesWithNodesParserOnEveryGeneratedHead) {
#ifndef KAIRO_NODE_EXECUTABLE
  FAIL() << "node was not found when the build was configured; scripts/install-deps.sh installs nodejs";
#else
  const std::vector<std::string> corpus = framing_corpus();
  ASSERT_GE(corpus.size(), 200u);
  const std::string dir = ::testing::TempDir();
  const std::string corpus_path = dir + "/framing_corpus.json";
  const std::string out_path = dir + "/framing_oracle.json";
  {
    nlohmann::json encoded = nlohmann::json::array();
    for (const auto& c : corpus) encoded.push_back(base64(c));
    std::ofstream(corpus_path) << encoded.dump();
  }
  std::remove(out_path.c_str());
  const std::string cmd = std::string(KAIRO_NODE_EXECUTABLE) + " " + KAIRO_SOURCE_DIR +
                          "/tests/server/http/framing_oracle.mjs " + corpus_path + " " + out_path + " " +
                          std::to_string(kMaxHead);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out_path);
  ASSERT_TRUE(in) << "the oracle wrote nothing: " << cmd;
  const nlohmann::json oracle = nlohmann::json::parse(in);
  ASSERT_EQ(oracle.size(), corpus.size());

  int n_agree = 0, n_stricter = 0, n_looser = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const FramedRequest ours = frame(corpus[i]);
    const std::string theirs = oracle[i]["outcome"];
    const std::string where = "case " + std::to_string(i) + ": " + printable(corpus[i]) + "\n  llhttp: " +
                              oracle[i].dump() + "\n  kairo: " + std::to_string(ours.refusal.status) + " " +
                              ours.refusal.message;
    if (theirs == "reject") {
      // What llhttp refuses, kairo refuses (a message two parsers read differently is the smuggling risk) or reads
      // as incomplete (it waits for bytes llhttp would not wait for, then times out), except the listed cases.
      if (ours.outcome == Outcome::Accepted) {
        EXPECT_TRUE(looser_by_design(corpus[i], oracle[i]["code"].get<std::string>())) << where;
        ++n_looser;
      } else {
        ++n_agree;
      }
    } else if (theirs == "incomplete") {
      EXPECT_NE(ours.outcome, Outcome::Accepted) << where;
      ++n_agree;
    } else if (ours.outcome == Outcome::Accepted) {
      // Both read a request: the same method, target and body, so both see the same next request.
      EXPECT_EQ(ours.method, oracle[i]["method"].get<std::string>()) << where;
      EXPECT_EQ(ours.target, oracle[i]["url"].get<std::string>()) << where;
      EXPECT_EQ(base64(ours.body), oracle[i]["body"].get<std::string>()) << where;
      ++n_agree;
    } else {
      EXPECT_TRUE(stricter_by_design(ours)) << where;
      ++n_stricter;
    }
  }
  std::printf("framing corpus: %zu requests; %d decided alike, %d refused by kairo only, %d read by kairo only (each "
              "for a listed reason)\n",
              corpus.size(), n_agree, n_stricter, n_looser);
#endif
}

}  // namespace
}  // namespace kairo::server::http_detail
