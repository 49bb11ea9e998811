#pragma once
// A client connection's byte stream: plain TCP, or TLS over it when the server has a certificate. The session and
// Beast's algorithms (http::async_read, net::async_write) see one stream type either way, so the HTTP logic is
// written once; the stream's timeouts (Beast's tcp_stream) apply to the TCP operations under TLS too.
#include <optional>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace kairo::server::http_detail {

class ConnectionStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;

  // `tls` null: plain TCP.
  ConnectionStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls) : tcp_(std::move(socket)) {
    if (tls != nullptr) tls_.emplace(tcp_, *tls);
  }

  bool is_tls() const { return tls_.has_value(); }
  executor_type get_executor() { return tcp_.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return tcp_.socket(); }
  template <class Duration>
  void expires_after(Duration d) { tcp_.expires_after(d); }
  void expires_never() { tcp_.expires_never(); }
  void close() { tcp_.close(); }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_read_some(buffers, std::forward<Handler>(handler));
    }
  }
  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_write_some(buffers, std::forward<Handler>(handler));
    }
  }
  // TLS only.
  template <class Handler>
  void async_handshake(Handler&& handler) {
    tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
  }
  template <class Handler>
  void async_shutdown(Handler&& handler) {
    tls_->async_shutdown(std::forward<Handler>(handler));
  }

 private:
  boost::beast::tcp_stream tcp_;
  std::optional<boost::asio::ssl::stream<boost::beast::tcp_stream&>> tls_;
};

}  // namespace kairo::server::http_detail
