// The HTTP layer's lifetime rules: a route may keep its sink after the server is gone (an engine callback that
// fires late). Using and then dropping that sink must be harmless; under AddressSanitizer this test catches a
// session that tears its stream down after the io_context it belongs to.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "server/http/http_server.h"
#include "http_client.h"

namespace kairo::server {
namespace {

TEST(HttpServerLifetime, SinkHeldPastTheServersEndIsDroppedSafely) {
  std::mutex mutex;
  std::shared_ptr<ResponseSink> kept;
  std::atomic<bool> got_request{false};
  auto server = std::make_unique<HttpServer>(
      HttpServerOptions{},
      [&](HttpRequest, std::shared_ptr<ResponseSink> sink) {
        std::lock_guard lock(mutex);
        kept = std::move(sink);  // never answered while the server lives
        got_request = true;
      },
      [](int status, const std::string& message, const std::string&) {
        return HttpResponse{status, "text/plain", message, {}};
      });
  ASSERT_TRUE(server->listen("127.0.0.1", 0).ok());
  server->start(2);

  testing::Connection conn(server->port(), 5000);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(conn.send(testing::format_request("POST", "/x", "{}")));
  for (int i = 0; i < 500 && !got_request; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(got_request);

  server.reset();  // stops the threads and closes the connection; the route still holds the sink
  EXPECT_TRUE(conn.wait_closed(5000));

  std::lock_guard lock(mutex);
  ASSERT_TRUE(kept);
  EXPECT_FALSE(kept->connected());
  bool ran = false;
  kept->post([&] { ran = true; });  // dropped: no thread would ever run it
  EXPECT_FALSE(ran);
  kept.reset();  // the last reference to the session and to the server's shared state
}

}  // namespace
}  // namespace kairo::server
