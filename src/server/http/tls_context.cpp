#include "server/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "core/format.h"

namespace kairo::server {

namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's reason for the last failure ("no start line", "key values mismatch"), or what Asio said.
std::string reason(const boost::system::error_code& ec) {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e != 0) {
    if (const char* r = ERR_reason_error_string(e)) return r;
  }
  return ec.message();
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_tls_context(const std::string& certfile, const std::string& keyfile) {
  if (certfile.empty() != keyfile.empty()) {
    return Error{"TLS needs both --ssl-certfile and --ssl-keyfile (a PEM certificate chain and its private key)"};
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  // TLS 1.2 is the oldest version a client may use: 1.0 and 1.1 are deprecated (RFC 8996).
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
    return Error{"OpenSSL refused TLS 1.2 as the minimum version"};
  }
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(certfile, ec);
  if (ec) {
    return Error{strprintf("cannot use the TLS certificate %s: %s (--ssl-certfile needs a PEM certificate chain, "
                           "the server's certificate first)",
                           certfile.c_str(), reason(ec).c_str())};
  }
  const auto mismatch = [&] {
    return Error{strprintf("the TLS private key %s does not belong to the certificate %s; give the key the "
                           "certificate was issued for",
                           keyfile.c_str(), certfile.c_str())};
  };
  ctx->use_private_key_file(keyfile, ssl::context::pem, ec);
  if (ec) {
    const std::string why = reason(ec);
    if (why == "key values mismatch") return mismatch();
    return Error{strprintf("cannot use the TLS private key %s: %s (--ssl-keyfile needs an unencrypted PEM private "
                           "key)",
                           keyfile.c_str(), why.c_str())};
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return mismatch();
  }
  return ctx;
}

}  // namespace kairo::server
