#pragma once
// The server's TLS settings (OpenSSL through Boost.Asio): a certificate chain and its private key from PEM files,
// TLS 1.2 as the oldest version offered. Every failure names the file and what to change, before the server listens.
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "core/result.h"

namespace kairo::server {

Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const std::string& certfile,
                                                                   const std::string& keyfile);

}  // namespace kairo::server
