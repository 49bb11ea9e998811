// The browser chat UI's routes: GET / and /ui/<file> serve the embedded web/ files with their content types, the
// Content-Security-Policy and an ETag (304 on a match); they are public while the API keeps asking for its key;
// unknown files are 404, other methods 405, HEAD works; --no-webui turns them off.
#include <regex>
#include <set>

#include "server/web_ui.h"
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

class WebUiTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerConfig c = test_config();
    c.api_keys = {"sk-web"};
    start(c);
  }
};

TEST_F(WebUiTest, PageIsPublicAndCarriesTheSecurityHeaders) {
  const HttpResult page = get("/");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.header("content-security-policy"), kWebUiContentSecurityPolicy);
  EXPECT_EQ(page.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(page.header("x-frame-options"), "DENY");
  EXPECT_EQ(page.header("cache-control"), "no-cache");
  EXPECT_TRUE(std::regex_match(page.header("etag"), std::regex("\"[0-9a-f]{16}\""))) << page.header("etag");
  EXPECT_NE(page.body.find("<script type=\"module\" src=\"ui/app.js\"></script>"), std::string::npos);
  // The API itself still wants the key.
  EXPECT_EQ(get("/v1/models").status, 401);
  EXPECT_EQ(get("/v1/models", {"Authorization: Bearer sk-web"}).status, 200);
}

TEST_F(WebUiTest, PolicyAllowsNoInlineScriptOrStyleAndThePageHasNone) {
  const std::string csp(kWebUiContentSecurityPolicy);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos);
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("require-trusted-types-for 'script'"), std::string::npos);
  const std::string html = get("/").body;
  // Every <script> has a src (an inline one would be refused by the policy anyway: this keeps the page honest).
  const std::regex script_tag("<script([^>]*)>");
  int n_scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag); it != std::sregex_iterator(); ++it) {
    ++n_scripts;
    EXPECT_NE((*it)[1].str().find("src="), std::string::npos) << (*it)[0];
  }
  EXPECT_EQ(n_scripts, 1);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_EQ(html.find(" style="), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+=")));  // no inline event handlers
}

TEST_F(WebUiTest, EveryFileIsServedWithItsContentType) {
  const std::pair<const char*, const char*> expected[] = {
      {"/ui/app.js", "text/javascript; charset=utf-8"},
      {"/ui/markdown.js", "text/javascript; charset=utf-8"},
      {"/ui/style.css", "text/css; charset=utf-8"},
      {"/ui/favicon.svg", "image/svg+xml"},
      {"/ui/index.html", "text/html; charset=utf-8"}};
  for (const auto& [path, type] : expected) {
    const HttpResult r = get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.header("content-type"), type) << path;
    EXPECT_EQ(r.header("x-content-type-options"), "nosniff") << path;
    EXPECT_FALSE(r.body.empty()) << path;
  }
  // Whatever else web/ holds is served too, byte for byte, each with a known type and its own ETag.
  std::set<std::string> etags;
  for (const EmbeddedFile& f : embedded_web_files()) {
    const HttpResult r = get("/ui/" + std::string(f.name));
    EXPECT_EQ(r.status, 200) << f.name;
    EXPECT_EQ(r.body, f.bytes) << f.name;
    EXPECT_NE(web_content_type(f.name), "application/octet-stream") << f.name << ": add its type to web_ui.cpp";
    etags.insert(r.header("etag"));
  }
  EXPECT_EQ(etags.size(), embedded_web_files().size());
  EXPECT_EQ(get("/").body, get("/ui/index.html").body);
}

TEST_F(WebUiTest, UnknownFilesAre404) {
  for (const char* path : {"/ui/", "/ui/nope.js", "/ui/../ui/app.js", "/ui/%2e%2e/app.js", "/ui//app.js",
                           "/ui/app.js/", "/ui/APP.JS", "/index.html", "/app.js"}) {
    const HttpResult r = get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.json()["error"]["code"], "not_found") << path;
  }
  EXPECT_EQ(get("/ui/nope.js").json()["error"]["message"], "the web UI has no file \"/ui/nope.js\"");
}

TEST_F(WebUiTest, ConditionalGetAnswers304WithoutABody) {
  const std::string etag = get("/ui/app.js").header("etag");
  ASSERT_FALSE(etag.empty());
  for (const std::string& inm : {etag, "W/" + etag, "\"0000000000000000\", " + etag, std::string("*")}) {
    Connection c(port_);
    ASSERT_TRUE(c.send(format_request("GET", "/ui/app.js", "", {"If-None-Match: " + inm})));
    auto r = c.read_response();
    ASSERT_TRUE(r.has_value()) << inm;
    EXPECT_EQ(r->status, 304) << inm;
    EXPECT_EQ(r->header("etag"), etag);
    EXPECT_TRUE(r->body.empty());
    EXPECT_EQ(r->header("content-length"), "");
    // The connection stays usable: nothing was left between the responses.
    ASSERT_TRUE(c.send(format_request("GET", "/ui/style.css")));
    auto next = c.read_response();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->status, 200);
  }
  const HttpResult other = request(port_, "GET", "/ui/app.js", "", {"If-None-Match: \"0000000000000000\""});
  EXPECT_EQ(other.status, 200);
  EXPECT_FALSE(other.body.empty());
}

TEST_F(WebUiTest, HeadAndOtherMethods) {
  const HttpResult got = get("/");
  Connection c(port_);
  ASSERT_TRUE(c.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto head = c.read_head();
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(head->header("content-length"), std::to_string(got.body.size()));
  ASSERT_TRUE(c.send(format_request("GET", "/health")));
  auto next = c.read_response();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->status, 200);

  const HttpResult posted = request(port_, "POST", "/", "{}");
  EXPECT_EQ(posted.status, 405);
  EXPECT_EQ(posted.header("allow"), "GET, HEAD");
  EXPECT_EQ(request(port_, "DELETE", "/ui/app.js").status, 405);
}

TEST_F(WebUiTest, NoWebUiFlagTurnsItOff) {
  ServerConfig c = test_config();
  c.webui = false;
  TearDown();
  start(c);
  for (const char* path : {"/", "/ui/app.js"}) {
    const HttpResult r = get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("no route for GET"), std::string::npos);
  }
  EXPECT_EQ(get("/health").status, 200);
}

TEST(WebUiUnitTest, ContentTypesByExtension) {
  EXPECT_EQ(web_content_type("a.html"), "text/html; charset=utf-8");
  EXPECT_EQ(web_content_type("a.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(web_content_type("a.css"), "text/css; charset=utf-8");
  EXPECT_EQ(web_content_type("a.svg"), "image/svg+xml");
  EXPECT_EQ(web_content_type("a.png"), "image/png");
  EXPECT_EQ(web_content_type("js"), "application/octet-stream");
  EXPECT_TRUE(is_web_ui_path("/"));
  EXPECT_TRUE(is_web_ui_path("/ui/x"));
  EXPECT_FALSE(is_web_ui_path("/uix"));
  EXPECT_FALSE(is_web_ui_path("/v1/models"));
  EXPECT_EQ(find_web_ui_file("/ui"), nullptr);
  ASSERT_NE(find_web_ui_file("/"), nullptr);
  EXPECT_EQ(find_web_ui_file("/")->name, "index.html");
}

}  // namespace
}  // namespace kairo::server::testing
