// HTTPS: a self-signed certificate made for the test (the openssl CLI), a client that verifies it, plain and
// streamed responses over TLS, TLS 1.1 refused, a plain-HTTP client closed, and the file errors.
#include <openssl/ssl.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include "server/http/tls_context.h"
#include "../server_fixture.h"

namespace kairo::server::testing {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

struct Pem {
  std::string cert, key;
};

// A P-256 key and a one-day certificate for 127.0.0.1, once per process.
const Pem& test_pem(const std::string& name = "tls") {
  static std::map<std::string, Pem> made;
  if (auto it = made.find(name); it != made.end()) return it->second;
  // Named by this process: ctest runs each test in a process of its own, two at a time, and a file another process
  // is rewriting cannot be read (a shared name failed a server start under ASan).
  const std::string stem = ::testing::TempDir() + "/kairo_" + name + "_" + std::to_string(::getpid());
  Pem pem{stem + "_cert.pem", stem + "_key.pem"};
  const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
                          "-subj /CN=kairo-test -addext subjectAltName=IP:127.0.0.1 -keyout " +
                          pem.key + " -out " + pem.cert + " 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("openssl could not make a certificate: " + cmd);
  return made[name] = pem;
}

// One request over TLS with Connection: close; the whole response as bytes, or the handshake's error.
struct TlsExchange {
  boost::system::error_code handshake_error;
  std::string response;
};

TlsExchange tls_request(int port, const std::string& request, int max_version = 0, int min_version = 0) {
  net::io_context io;
  ssl::context ctx(ssl::context::tls_client);
  ctx.load_verify_file(test_pem().cert);
  ctx.set_verify_mode(ssl::verify_peer);
  if (max_version != 0) {
    // Old versions are off at OpenSSL's default security level; level 0 lets this client offer them, so a refusal
    // is the server's.
    SSL_CTX_set_security_level(ctx.native_handle(), 0);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), min_version);
    SSL_CTX_set_max_proto_version(ctx.native_handle(), max_version);
  }
  ssl::stream<tcp::socket> stream(io, ctx);
  stream.set_verify_callback(ssl::host_name_verification("127.0.0.1"));
  tcp::resolver resolver(io);
  net::connect(stream.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
  TlsExchange out;
  stream.handshake(ssl::stream_base::client, out.handshake_error);
  if (out.handshake_error) return out;
  net::write(stream, net::buffer(request));
  boost::system::error_code ec;
  char buf[4096];
  for (;;) {
    const size_t n = stream.read_some(net::buffer(buf), ec);
    out.response.append(buf, n);
    if (ec) break;  // eof after the server's close_notify (or a truncation, which the test would see in the bytes)
  }
  return out;
}

class TlsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerConfig c = test_config();
    c.ssl_certfile = test_pem().cert;
    c.ssl_keyfile = test_pem().key;
    start(c);
  }
};

TEST_F(TlsTest, AVerifyingClientGetsAnswersAndStreams) {
  auto r = tls_request(port_, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_FALSE(r.handshake_error) << r.handshake_error.message();
  EXPECT_EQ(r.response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r.response;
  EXPECT_NE(r.response.find("\"status\":\"ok\""), std::string::npos) << r.response;

  const std::string body = R"({"prompt":[1,300],"max_tokens":4,"stream":true})";
  r = tls_request(port_, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body);
  ASSERT_FALSE(r.handshake_error);
  EXPECT_EQ(r.response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r.response;
  EXPECT_NE(r.response.find("data: [DONE]"), std::string::npos) << r.response;
  EXPECT_NE(r.response.find("\r\n0\r\n\r\n"), std::string::npos) << "the chunked stream ends whole";
}

TEST_F(TlsTest, TlsOlderThan12IsRefused) {
  auto r = tls_request(port_, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", TLS1_1_VERSION,
                       TLS1_VERSION);
  EXPECT_TRUE(r.handshake_error) << "a TLS 1.1 handshake succeeded";
  // The same client allowed TLS 1.2 gets through: the refusal was the version.
  r = tls_request(port_, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", TLS1_2_VERSION,
                  TLS1_VERSION);
  EXPECT_FALSE(r.handshake_error) << r.handshake_error.message();
  EXPECT_EQ(r.response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
}

TEST_F(TlsTest, APlainHttpClientIsClosedNotLeftHanging) {
  Connection c(port_);
  ASSERT_TRUE(c.send(format_request("GET", "/health")));
  EXPECT_FALSE(c.read_response().has_value());
  EXPECT_TRUE(c.wait_closed(5000));
}

TEST(TlsContext, FileErrorsNameTheFileAndTheFix) {
  const Pem& a = test_pem("a");
  const Pem& b = test_pem("b");
  auto r = make_tls_context(a.cert, b.key);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "the TLS private key " + b.key + " does not belong to the certificate " + a.cert +
                                   "; give the key the certificate was issued for");
  r = make_tls_context(a.key, a.key);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("cannot use the TLS certificate " + a.key + ": ", 0), 0u) << r.error().message;
  r = make_tls_context(a.cert, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "TLS needs both --ssl-certfile and --ssl-keyfile (a PEM certificate chain and its private key)");
  EXPECT_TRUE(make_tls_context(a.cert, a.key).ok());
}

}  // namespace
}  // namespace kairo::server::testing
