// Hugging Face Hub downloads into huggingface_hub's cache (core/io/hub.hpp). The comments name the
// function of huggingface_hub (src/huggingface_hub/file_download.py unless said otherwise) whose
// behaviour each piece follows.
#include "core/io/hub.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/io/files.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

namespace attnlab::hub {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// constants.py's _is_true: "1", "ON", "YES", "TRUE" (any case).
bool env_true(const char* name) {
  std::string v = env(name);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

bool is_hex(std::string_view s, std::size_t n) {
  return s.size() == n &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}
// REGEX_COMMIT_HASH: 40 hex digits.
bool is_commit(std::string_view s) { return is_hex(s, 40); }
// An LFS file's etag is its SHA-256 (64 hex digits); a git file's is the git blob's SHA-1.
bool is_sha256(std::string_view s) { return is_hex(s, 64); }

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// repo_folder_name(): "models--ORG--NAME".
fs::path repo_folder(const HubConfig& c, const std::string& repo_id) {
  std::string name = "models--";
  for (char ch : repo_id) {
    if (ch == '/')
      name += "--";
    else
      name += ch;
  }
  return c.cache_dir / name;
}

// A ref name or file name as a relative path (its '/' become folders), never leaving the folder.
fs::path relative_name(const std::string& name) {
  fs::path p = fs::path(name).lexically_normal();
  if (name.empty() || p.is_absolute() || p.has_root_name() || *p.begin() == "..")
    throw Error(text_format(_("'%s' is not a file name inside a repository"), name.c_str()));
  return p;
}

// urllib.parse.quote(s, safe): letters, digits, "_.-~" and `safe` kept, everything else %XX.
std::string url_quote(std::string_view s, std::string_view safe) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' ||
        safe.find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// hf_hub_url(): {endpoint}/{repo_id}/resolve/{quote(revision, safe="")}/{quote(filename)}.
std::string resolve_url(const HubConfig& c, const RepoRef& r, const std::string& filename) {
  return c.endpoint + "/" + r.repo_id + "/resolve/" + url_quote(r.revision, "") + "/" + url_quote(filename, "/");
}

void curl_global() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// The origin (scheme://host:port) of an absolute URL; "" for a relative one.
std::string origin_of(const std::string& url) {
  const auto s = url.find("://");
  if (s == std::string::npos) return {};
  const auto e = url.find_first_of("/?#", s + 3);
  return url.substr(0, e);
}

struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; the last response's only
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* r = static_cast<Response*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    r->headers.clear();  // a new response (after a redirect or a 100 Continue)
    return size * n;
  }
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    r->headers[name] = trim(line.substr(colon + 1));
  }
  return size * n;
}

// A cancel check and the transfer's progress, from curl's progress callback.
struct Watch {
  Transfer* transfer = nullptr;
  const std::function<void(const TransferStatus&)>* on_progress = nullptr;
  std::uint64_t offset = 0;  // bytes already on disk before this request
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> samples;
  std::chrono::steady_clock::time_point last_report{};
  bool counting = false;  // a body request (GET), not a HEAD

  bool cancelled() const { return transfer && transfer->cancelled(); }

  void report(std::uint64_t done, bool force) {
    const auto now = std::chrono::steady_clock::now();
    samples.emplace_back(now, done);
    while (samples.size() > 2 && now - samples.front().first > std::chrono::seconds(3)) samples.pop_front();
    double rate = 0;
    if (samples.size() >= 2) {
      const double dt = std::chrono::duration<double>(samples.back().first - samples.front().first).count();
      if (dt > 0.2) rate = static_cast<double>(samples.back().second - samples.front().second) / dt;
    }
    TransferStatus copy;
    if (transfer) {
      transfer->update([&](TransferStatus& s) {
        s.bytes_done = done;
        s.bytes_per_second = rate;
        s.seconds_left = rate > 0 && s.bytes_total >= done ? static_cast<double>(s.bytes_total - done) / rate : -1;
        copy = s;
      });
    }
    if (on_progress && *on_progress && (force || now - last_report > std::chrono::milliseconds(100))) {
      last_report = now;
      if (!transfer) {
        copy.bytes_done = done;
        copy.bytes_per_second = rate;
      }
      (*on_progress)(copy);
    }
  }
};

int on_xfer(void* user, curl_off_t, curl_off_t now_down, curl_off_t, curl_off_t) {
  auto* w = static_cast<Watch*>(user);
  if (w->cancelled()) return 1;  // CURLE_ABORTED_BY_CALLBACK
  if (w->counting) w->report(w->offset + static_cast<std::uint64_t>(now_down), false);
  return 0;
}

// The options every request shares: time-outs for a stalled server, the progress callback
// (cancel), the headers huggingface_hub sends (build_hf_headers: authorization, user-agent).
CurlHandle new_handle(const HubConfig& c, Watch& watch, Response& response) {
  curl_global();
  CurlHandle h(curl_easy_init());
  if (!h) throw Error(_("cannot start an HTTP client (libcurl)"));
  CURL* e = h.get();
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, c.connect_seconds);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, c.stall_seconds);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_xfer);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, &watch);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &response);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "attnlab/" ATTNLAB_VERSION "; hf_hub-compatible");
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  return h;
}

Slist request_headers(const HubConfig& c, std::optional<std::uint64_t> range_from) {
  curl_slist* l = nullptr;
  // get_hf_file_metadata: "Accept-Encoding: identity" so that sizes are the file's.
  l = curl_slist_append(l, "Accept-Encoding: identity");
  if (c.token && !c.token->empty()) l = curl_slist_append(l, ("Authorization: Bearer " + *c.token).c_str());
  if (range_from) l = curl_slist_append(l, ("Range: bytes=" + std::to_string(*range_from) + "-").c_str());
  return Slist(l);
}

// A network failure (no answer at all), as opposed to an answer we refuse.
class Unreachable : public Error {
 public:
  using Error::Error;
};
// 404 of a file (EntryNotFoundError): an optional file may be missing.
class EntryNotFound : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_curl(CURLcode code, const HubConfig& c, const std::string& what, const char* errbuf) {
  std::string detail = errbuf && *errbuf ? errbuf : curl_easy_strerror(code);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, %2$ld a number of seconds.
      throw Error(text_format(_("%s: the server stalled (no data for %ld s); try again later"), what.c_str(), c.stall_seconds));
    case CURLE_TOO_MANY_REDIRECTS:
      // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, %2$d the number of HTTP redirects followed.
      throw Error(text_format(_("%s: redirect loop (more than %d redirects)"), what.c_str(), c.max_redirects));
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_PROXY:
      // TRANSLATORS: %1$s is the hub's address (https://huggingface.co), %2$s libcurl's reason.
      throw Unreachable(text_format(_("cannot reach %s (%s)"), c.endpoint.c_str(), detail.c_str()));
    default:
      throw Error(what + ": " + detail);
  }
}

// hf_raise_for_status() in utils/_http.py: the hub's X-Error-Code decides what a 4xx means.
[[noreturn]] void throw_status(const Response& r, const RepoRef& repo, const std::string& filename) {
  const std::string code = r.header("x-error-code");
  const std::string where = "'" + repo.repo_id + "'";
  const std::string status = " (HTTP " + std::to_string(r.status) + ")";
  // In the messages below, the last %s is the HTTP status: " (HTTP 403)".
  if (code == "GatedRepo" || (r.status == 403 && code.empty()))
    // TRANSLATORS: %1$s is a repository ('ORG/NAME'), %2$s the HTTP status " (HTTP 403)" (with its leading space).
    // HF_TOKEN is an environment variable: keep it.
    throw Error(text_format(_("%s is gated or private: accept its conditions on the hub and set HF_TOKEN to a token that "
                              "may read it%s"),
                            where.c_str(), status.c_str()));
  if (code == "RepoNotFound" || r.status == 401)
    // TRANSLATORS: %1$s is a repository ('ORG/NAME'), %2$s the HTTP status " (HTTP 401)" (with its leading space).
    // HF_TOKEN is an environment variable: keep it.
    throw Error(text_format(_("%s was not found, or is private: check the name, or set HF_TOKEN%s"), where.c_str(),
                            status.c_str()));
  if (code == "RevisionNotFound")
    // TRANSLATORS: %1$s is a repository ('ORG/NAME'), %2$s a branch, tag or commit, %3$s the HTTP status " (HTTP 404)".
    throw Error(text_format(_("%s has no revision '%s'%s"), where.c_str(), repo.revision.c_str(), status.c_str()));
  if (r.status == 404)
    // TRANSLATORS: %1$s is a repository ('ORG/NAME'), %2$s a file, %3$s a branch, tag or commit, %4$s the HTTP
    // status " (HTTP 404)".
    throw EntryNotFound(text_format(_("%s has no file '%s' at revision '%s'%s"), where.c_str(), filename.c_str(),
                                    repo.revision.c_str(), status.c_str()));
  if (r.status >= 500)
    // TRANSLATORS: %1$s/%2$s is a repository ('ORG/NAME') and a file, %3$s the HTTP status " (HTTP 503)".
    throw Error(text_format(_("the hub failed on %s/%s%s; try again later"), where.c_str(), filename.c_str(), status.c_str()));
  // TRANSLATORS: %1$s/%2$s is a repository ('ORG/NAME') and a file, %3$s the HTTP status " (HTTP 400)".
  throw Error(text_format(_("the hub refused %s/%s%s"), where.c_str(), filename.c_str(), status.c_str()));
}

void write_ref(const fs::path& repo_dir, const std::string& revision, const std::string& commit);

struct Metadata {
  std::string commit, etag, location;
  std::uint64_t size = 0;
};

// get_hf_file_metadata(): HEAD without following redirects (a CDN's answer would not carry the
// hub's headers), except relative ones (_request_wrapper(follow_relative_redirects=True): a renamed
// repository on the same host). X-Repo-Commit; X-Linked-Etag else ETag, normalized
// (_normalize_etag: "W/" and quotes stripped); X-Linked-Size else Content-Length.
Metadata head_metadata(const HubConfig& c, const RepoRef& repo, const std::string& filename, Watch& watch) {
  std::string url = resolve_url(c, repo, filename);
  for (int hops = 0;; ++hops) {
    Response r;
    CurlHandle h = new_handle(c, watch, r);
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(h.get(), CURLOPT_NOBODY, 1L);
    curl_easy_setopt(h.get(), CURLOPT_FOLLOWLOCATION, 0L);
    Slist headers = request_headers(c, std::nullopt);
    curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
    const CURLcode rc = curl_easy_perform(h.get());
    if (rc == CURLE_ABORTED_BY_CALLBACK) throw Cancelled();
    if (rc != CURLE_OK) throw_curl(rc, c, repo.repo_id + "/" + filename, errbuf);
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &r.status);
    if (r.status >= 300 && r.status <= 399) {
      const std::string location = r.header("location");
      if (!location.empty() && origin_of(location).empty()) {  // relative: same host, follow
        if (hops >= c.max_redirects)
          throw Error(text_format(_("%s: redirect loop (more than %d redirects)"), (repo.repo_id + "/" + filename).c_str(),
                                  c.max_redirects));
        url = origin_of(url) + (location.front() == '/' ? location : "/" + location);
        continue;
      }
    } else if (r.status >= 400) {
      // hf_hub_download on EntryNotFoundError: .no_exist/<commit>/<file> remembers the absence
      // (try_to_load_from_cache reads it), and refs/<revision> the commit.
      const std::string commit = r.header("x-repo-commit");
      if (r.status == 404 && r.header("x-error-code") == "EntryNotFound" && is_commit(commit)) {
        std::error_code ec;
        const fs::path dir = repo_folder(c, repo.repo_id);
        const fs::path marker = dir / ".no_exist" / commit / relative_name(filename);
        fs::create_directories(marker.parent_path(), ec);
        std::ofstream touch(marker, std::ios::binary | std::ios::app);
        try {
          write_ref(dir, repo.revision, commit);
        } catch (const Error&) {
        }
      }
      throw_status(r, repo, filename);
    }
    Metadata m;
    m.commit = r.header("x-repo-commit");
    std::string etag = r.header("x-linked-etag");
    if (etag.empty()) etag = r.header("etag");
    if (etag.rfind("W/", 0) == 0) etag = etag.substr(2);
    etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
    m.etag = etag;
    std::string size = r.header("x-linked-size");
    if (size.empty()) size = r.header("content-length");
    try {
      m.size = size.empty() ? 0 : std::stoull(size);
    } catch (...) {
      // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, %2$s what it sent.
      throw Error(text_format(_("%s: the hub sent a size that is not a number ('%s')"), (repo.repo_id + "/" + filename).c_str(),
                              size.c_str()));
    }
    m.location = r.header("location").empty() ? url : r.header("location");
    // hf_hub_download: FileMetadataError when either is missing.
    if (m.commit.empty() || !is_commit(m.commit))
      // TRANSLATORS: %s is ORG/NAME/FILE on the hub; X-Repo-Commit is an HTTP header, HF_ENDPOINT an environment
      // variable: keep both.
      throw Error(text_format(_("%s: the server did not send the commit (X-Repo-Commit); is HF_ENDPOINT a hub?"),
                              (repo.repo_id + "/" + filename).c_str()));
    if (m.etag.empty() || m.etag.find_first_of("/\\") != std::string::npos || m.etag == "." || m.etag == "..")
      // TRANSLATORS: %s is ORG/NAME/FILE on the hub; ETag is an HTTP header, HF_ENDPOINT an environment variable.
      throw Error(text_format(_("%s: the server sent no usable ETag; is HF_ENDPOINT a hub?"),
                              (repo.repo_id + "/" + filename).c_str()));
    if (size.empty())
      throw Error(text_format(_("%s: the server did not say the file's size"), (repo.repo_id + "/" + filename).c_str()));
    return m;
  }
}

struct Sink {
  std::FILE* file = nullptr;
  std::uint64_t written = 0;  // bytes of the file (the resumed part included)
  std::uint64_t limit = 0;    // the announced size: more is refused
  bool too_long = false;
  int write_errno = 0;
  bool truncate_first = false;  // a 200 answer to a Range request: start over
  const Response* response = nullptr;
  CURL* handle = nullptr;
  bool checked_status = false;
  bool refused = false;  // a body of an error answer: not written
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  const std::size_t bytes = size * n;
  if (!s->checked_status) {
    s->checked_status = true;
    long status = 0;
    curl_easy_getinfo(s->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 400) {
      s->refused = true;
    } else if (status == 200 && s->written > 0) {  // the server ignored Range: start over
      if (std::fflush(s->file) != 0 || ::fseek(s->file, 0, SEEK_SET) != 0) {
        s->write_errno = errno;
        return 0;
      }
      s->truncate_first = true;
      s->written = 0;
    }
  }
  if (s->refused) return bytes;
  if (s->written + bytes > s->limit) {
    s->too_long = true;
    return 0;
  }
  if (std::fwrite(data, 1, bytes, s->file) != bytes) {
    s->write_errno = errno ? errno : EIO;
    return 0;
  }
  s->written += bytes;
  return bytes;
}

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
}

// http_get() with resume: GET following redirects (across hosts: libcurl, like requests, does
// not send the Authorization header to another host), appending to `incomplete` from its current
// size with "Range: bytes=N-". A connection dropped mid-file is resumed (up to 5 tries, as
// http_get's _nb_retries); the file is checked for its size and, when the etag is a SHA-256,
// its hash before it counts. Throws and leaves only `incomplete` (resumable) or nothing.
void fetch_blob(const HubConfig& c, const RepoRef& repo, const std::string& filename, const Metadata& m,
                const fs::path& incomplete, Watch& watch) {
  const std::string url = resolve_url(c, repo, filename);
  const std::string what = repo.repo_id + "/" + filename;
  int retries = 0;
  for (;;) {
    std::error_code ec;
    std::uint64_t have = fs::exists(incomplete, ec) ? fs::file_size(incomplete, ec) : 0;
    if (ec) have = 0;
    if (have > m.size) {  // not ours, or the file changed: start over
      remove_quietly(incomplete);
      have = 0;
    }
    if (have == m.size && m.size > 0) break;  // complete already: check it
    std::FILE* f = std::fopen(incomplete.string().c_str(), "ab");
    if (!f) {
      const int e = errno;
      throw Error(text_format(_("cannot write '%s': %s"), incomplete.string().c_str(), std::strerror(e)));
    }
    Response r;
    watch.offset = have;
    watch.counting = true;
    CurlHandle h = new_handle(c, watch, r);
    Sink sink;
    sink.file = f;
    sink.written = have;
    sink.limit = m.size;
    sink.response = &r;
    sink.handle = h.get();
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(h.get(), CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h.get(), CURLOPT_MAXREDIRS, static_cast<long>(c.max_redirects));
    curl_easy_setopt(h.get(), CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);
    Slist headers = request_headers(c, have > 0 ? std::optional<std::uint64_t>(have) : std::nullopt);
    curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
    if (watch.transfer) watch.transfer->update([&](TransferStatus& s) { s.resumed_from = have; });
    const CURLcode rc = curl_easy_perform(h.get());
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &r.status);
    const bool closed = std::fclose(f) == 0;
    if (sink.truncate_first) fs::resize_file(incomplete, sink.written, ec);
    watch.counting = false;
    if (rc == CURLE_ABORTED_BY_CALLBACK) throw Cancelled();
    if (sink.too_long) {
      remove_quietly(incomplete);
      // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, %2$llu a number of bytes.
      throw Error(text_format(_("%s: the server sent more than the %llu bytes it announced; nothing kept"), what.c_str(),
                              static_cast<unsigned long long>(m.size)));
    }
    if (sink.write_errno != 0 || (!closed && rc == CURLE_OK)) {
      const int e = sink.write_errno ? sink.write_errno : errno;
      // TRANSLATORS: %1$s is a file, %2$s the system's reason.
      throw Error(text_format(_("cannot write '%s': %s (the part already written is resumed next time)"),
                              incomplete.string().c_str(), std::strerror(e)));
    }
    if (rc == CURLE_OK && r.status >= 400) {
      if (r.status == 416 && have > 0) {  // the range starts past the end: not our file
        remove_quietly(incomplete);
        // TRANSLATORS: %s is ORG/NAME/FILE on the hub; a range request asks for the rest of a file (HTTP Range).
        if (++retries > 5) throw Error(text_format(_("%s: the server refused every range request"), what.c_str()));
        continue;
      }
      throw_status(r, repo, filename);
    }
    if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING) {
      const std::uint64_t now = fs::file_size(incomplete, ec);
      if (!ec && now > have && ++retries <= 5) continue;  // dropped mid-file: resume with Range
      // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, then bytes received and bytes in all.
      throw Error(text_format(_("%s: the connection dropped at %llu of %llu bytes; run the pull again to resume"), what.c_str(),
                              static_cast<unsigned long long>(ec ? have : now), static_cast<unsigned long long>(m.size)));
    }
    if (rc != CURLE_OK) throw_curl(rc, c, what, errbuf);
    if (sink.written != m.size) {  // a complete answer, but not the announced size
      remove_quietly(incomplete);
      // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, then bytes received and bytes announced.
      throw Error(text_format(_("%s: the server sent %llu bytes but announced %llu; nothing kept"), what.c_str(),
                              static_cast<unsigned long long>(sink.written), static_cast<unsigned long long>(m.size)));
    }
    break;
  }
  std::error_code ec;
  const std::uint64_t size = fs::file_size(incomplete, ec);
  if (ec || size != m.size) {  // "Consistency check failed: file should be of size …"
    remove_quietly(incomplete);
    // TRANSLATORS: %1$s is ORG/NAME/FILE on the hub, then bytes announced and bytes on disk.
    throw Error(text_format(_("%s: the file should be %llu bytes but is %llu; nothing kept"), what.c_str(),
                            static_cast<unsigned long long>(m.size), static_cast<unsigned long long>(size)));
  }
  watch.report(size, true);
  if (is_sha256(m.etag)) {
    std::string lower = m.etag;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (file_sha256(incomplete) != lower) {
      remove_quietly(incomplete);
      // TRANSLATORS: %s is ORG/NAME/FILE on the hub; SHA-256 is a checksum.
      throw Error(text_format(_("%s: the file's SHA-256 is not the one the hub announced; nothing kept"), what.c_str()));
    }
  }
}

// _create_symlink(): a relative link snapshots/<commit>/<file> → ../../blobs/<etag> (its depth
// follows the file's folders); a copy where links cannot be made (Windows without developer mode).
void link_pointer(const fs::path& blob, const fs::path& pointer) {
  std::error_code ec;
  fs::create_directories(pointer.parent_path(), ec);
  if (ec) throw Error(text_format(_("cannot create '%s': %s"), pointer.parent_path().string().c_str(), ec.message().c_str()));
  fs::remove(pointer, ec);
  const fs::path target = blob.lexically_relative(pointer.parent_path());
  fs::create_symlink(target, pointer, ec);
  if (!ec) return;
  // A copy through a temporary name, so that the pointer appears whole or not at all.
  const fs::path tmp = pointer.string() + ".incomplete";
  fs::copy_file(blob, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, pointer, ec);
  if (ec) {
    remove_quietly(tmp);
    // TRANSLATORS: %1$s is a file of the cache (a link or a copy being made), %2$s the system's reason.
    throw Error(text_format(_("cannot place '%s': %s"), pointer.string().c_str(), ec.message().c_str()));
  }
}

// _cache_commit_hash_for_specific_revision(): refs/<revision> holds the commit, written only when
// the revision is not the commit itself.
void write_ref(const fs::path& repo_dir, const std::string& revision, const std::string& commit) {
  if (revision == commit) return;
  const fs::path ref = repo_dir / "refs" / relative_name(revision);
  if (auto old = read_text(ref); old && trim(*old) == commit) return;
  std::error_code ec;
  fs::create_directories(ref.parent_path(), ec);
  // A temporary of its own (two pulls of one repository write the same ref at once), renamed
  // over the old ref: a reader sees the old commit or the new one, never a part.
  write_file_safely(ref, commit, /*overwrite=*/true);
}

std::optional<std::string> cached_commit(const fs::path& repo_dir, const std::string& revision) {
  if (is_commit(revision)) return revision;
  try {
    if (auto t = read_text(repo_dir / "refs" / relative_name(revision))) {
      std::string commit = trim(*t);
      if (is_commit(commit)) return commit;
    }
  } catch (const Error&) {
  }
  return std::nullopt;
}

bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows links: a dangling link is no file
}

// Where a pull that cannot ask the network falls back: the cached file (hf_hub_download's
// offline branch, try_to_load_from_cache), else the error.
fs::path cached_or_throw(const HubConfig& c, const RepoRef& repo, const std::string& filename, const std::string& why) {
  if (auto p = try_to_load_from_cache(repo, filename, c)) return *p;
  // TRANSLATORS: %1$s is a repository (ORG/NAME), %2$s a file, %3$s the cache folder, %4$s why the network is not
  // asked ("HF_HUB_OFFLINE is set").
  throw Error(text_format(_("'%s' has no '%s' in the cache (%s) and %s"), repo.text().c_str(), filename.c_str(),
                          c.cache_dir.string().c_str(), why.c_str()));
}

}  // namespace

RepoRef parse_repo_ref(std::string_view text) {
  RepoRef r;
  std::string s(text);
  if (const auto at = s.find('@'); at != std::string::npos) {
    r.revision = s.substr(at + 1);
    s = s.substr(0, at);
    if (r.revision.empty())
      // TRANSLATORS: %s is the text given (ORG/NAME@REVISION).
      throw Error(text_format(_("'%s': nothing after '@' (a branch, tag or commit)"), std::string(text).c_str()));
    for (char ch : r.revision)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == '\\' || ch == ' ')
        throw Error(text_format(_("'%s': the revision may not hold spaces, backslashes or control characters"),
                                std::string(text).c_str()));
    relative_name(r.revision);  // no "..", no absolute path
  }
  // validate_repo_id (utils/_validators.py): [A-Za-z0-9_.-] in one or two parts, no "--" or "..",
  // no leading or trailing '-' or '.', at most 96 characters.
  const auto bad = [&](const std::string& why) {
    // TRANSLATORS: %1$s is the text given; ORG/NAME[@REVISION] is the syntax (keep it); %2$s says what is wrong.
    return Error(text_format(_("'%s' is not a repository name ORG/NAME[@REVISION]: %s"), std::string(text).c_str(), why.c_str()));
  };
  // TRANSLATORS: a repository name (ORG/NAME) that is empty.
  if (s.empty()) throw bad(_("it is empty"));
  if (s.size() > 96) throw bad(_("longer than 96 characters"));
  if (std::count(s.begin(), s.end(), '/') > 1) throw bad(_("more than one '/'"));
  if (s.find("--") != std::string::npos || s.find("..") != std::string::npos)
    throw bad(_("'--' and '..' are not allowed"));
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find('/', start), s.size());
    const std::string part = s.substr(start, end - start);
    // TRANSLATORS: ORG or NAME of a repository name ORG/NAME.
    if (part.empty()) throw bad(_("an empty part"));
    for (char ch : part)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.')
        throw bad(_("only letters, digits, '-', '_' and '.'"));
    if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
      // TRANSLATORS: a part is ORG or NAME of a repository name ORG/NAME.
      throw bad(_("a part may not start or end with '-' or '.'"));
    start = end + 1;
  }
  r.repo_id = s;
  return r;
}

std::optional<RepoRef> parse_hf_model(std::string_view model_argument) {
  if (!model_argument.starts_with("hf:")) return std::nullopt;
  return parse_repo_ref(model_argument.substr(3));
}

HubConfig HubConfig::from_environment() {
  HubConfig c;
  if (std::string e = env("HF_ENDPOINT"); !e.empty()) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    c.endpoint = e;
  }
  // constants.py: HF_HOME = $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface;
  // HF_HUB_CACHE = $HF_HUB_CACHE (or the older HUGGINGFACE_HUB_CACHE), else HF_HOME/hub.
  fs::path home;
  if (std::string h = env("HF_HOME"); !h.empty())
    home = h;
  else if (std::string x = env("XDG_CACHE_HOME"); !x.empty())
    home = fs::path(x) / "huggingface";
  else
    home = platform::home_folder() / ".cache" / "huggingface";
  if (std::string h = env("HF_HUB_CACHE"); !h.empty())
    c.cache_dir = h;
  else if (std::string o = env("HUGGINGFACE_HUB_CACHE"); !o.empty())
    c.cache_dir = o;
  else
    c.cache_dir = home / "hub";
  // utils/_auth.py get_token(): HF_TOKEN (or the older HUGGING_FACE_HUB_TOKEN), else the file at
  // HF_TOKEN_PATH (default HF_HOME/token); surrounding white space removed; empty means none.
  std::string token = trim(env("HF_TOKEN"));
  if (token.empty()) token = trim(env("HUGGING_FACE_HUB_TOKEN"));
  if (token.empty()) {
    fs::path path = env("HF_TOKEN_PATH").empty() ? home / "token" : fs::path(env("HF_TOKEN_PATH"));
    if (auto t = read_text(path)) token = trim(*t);
  }
  if (!token.empty()) c.token = token;
  c.offline = env_true("HF_HUB_OFFLINE");
  try {
    if (std::string s = env("ATTNLAB_HUB_STALL_SECONDS"); !s.empty()) c.stall_seconds = std::max(1L, std::stol(s));
    if (std::string s = env("ATTNLAB_HUB_MAX_REDIRECTS"); !s.empty()) c.max_redirects = std::max(0, std::stoi(s));
  } catch (...) {
  }
  return c;
}

std::optional<fs::path> try_to_load_from_cache(const RepoRef& repo, const std::string& filename,
                                               const HubConfig& config) {
  try {
    const fs::path dir = repo_folder(config, repo.repo_id);
    const auto commit = cached_commit(dir, repo.revision);
    if (!commit) return std::nullopt;
    const fs::path name = relative_name(filename);
    if (file_exists(dir / ".no_exist" / *commit / name)) return std::nullopt;  // _CACHED_NO_EXIST
    const fs::path p = dir / "snapshots" / *commit / name;
    if (file_exists(p)) return p;
  } catch (...) {
  }
  return std::nullopt;
}

fs::path download_file(const RepoRef& repo, const std::string& filename, const HubConfig& config, Transfer* transfer,
                       const std::function<void(const TransferStatus&)>& on_progress) {
  const fs::path name = relative_name(filename);
  Transfer local;  // without a caller's Transfer, on_progress still gets whole statuses
  if (!transfer) transfer = &local;
  if (transfer) {
    transfer->update([&](TransferStatus& s) {
      s.repo_id = repo.repo_id;
      s.file = filename;
      s.bytes_done = 0;
      s.bytes_total = 0;
      s.resumed_from = 0;
      s.bytes_per_second = 0;
      s.seconds_left = -1;
    });
  }
  // TRANSLATORS: HF_HUB_OFFLINE is an environment variable: keep it.
  if (config.offline) return cached_or_throw(config, repo, filename, _("HF_HUB_OFFLINE is set"));
  Watch watch;
  watch.transfer = transfer;
  watch.on_progress = &on_progress;
  Metadata m;
  try {
    m = head_metadata(config, repo, filename, watch);
  } catch (const Unreachable& e) {  // hf_hub_download: no connection → the cached file, if any
    if (auto p = try_to_load_from_cache(repo, filename, config)) return *p;
    throw;
  } catch (const EntryNotFound&) {
    throw;
  }
  if (transfer) transfer->update([&](TransferStatus& s) { s.bytes_total = m.size; });
  const fs::path dir = repo_folder(config, repo.repo_id);
  const fs::path blob = dir / "blobs" / m.etag;
  const fs::path pointer = dir / "snapshots" / m.commit / name;
  std::error_code ec;
  fs::create_directories(blob.parent_path(), ec);
  if (ec)
    throw Error(text_format(_("cannot create the cache folder '%s': %s"), blob.parent_path().string().c_str(),
                            ec.message().c_str()));
  write_ref(dir, repo.revision, m.commit);
  if (file_exists(pointer) && file_exists(blob)) {  // already there: nothing to fetch
    watch.report(m.size, true);
    return pointer;
  }
  // The lock huggingface_hub takes: <cache>/.locks/models--ORG--NAME/<etag>.lock.
  const fs::path lock_path = config.cache_dir / ".locks" / dir.filename() / (m.etag + ".lock");
  fs::create_directories(lock_path.parent_path(), ec);
  platform::FileLock lock(lock_path, transfer ? &transfer->cancel_flag() : nullptr);
  if (!lock.locked()) throw Cancelled();
  if (!file_exists(blob)) fetch_blob(config, repo, filename, m, fs::path(blob.string() + ".incomplete"), watch);
  // _chmod_and_move(): the checked file takes its place in one rename.
  if (!file_exists(blob)) {
    fs::rename(blob.string() + ".incomplete", blob, ec);
    if (ec)
      throw Error(text_format(_("cannot move the download into '%s': %s"), blob.string().c_str(), ec.message().c_str()));
  }
  link_pointer(blob, pointer);
  watch.report(m.size, true);
  return pointer;
}

fs::path pull_model(const RepoRef& repo, const HubConfig& config, const PullOptions& given) {
  Transfer local;  // without a caller's Transfer, on_progress still gets the file's index and count
  PullOptions options = given;
  if (!options.transfer) options.transfer = &local;
  const bool defaults = options.files.empty();
  const int count = defaults ? 3 : static_cast<int>(options.files.size());
  std::optional<fs::path> snapshot;
  auto fetch = [&](const std::string& file, int index) {
    if (options.transfer) {
      options.transfer->update([&](TransferStatus& s) {
        s.file_index = index;
        s.file_count = count;
        s.finished = false;
      });
    }
    const fs::path p = download_file(repo, file, config, options.transfer, options.on_progress);
    fs::path folder = p;  // snapshots/<commit>/<file>: one level up per part of the file's name
    for (const auto& part : fs::path(file).lexically_normal()) {
      (void)part;
      folder = folder.parent_path();
    }
    snapshot = folder;
  };
  auto finish = [&] {
    if (options.transfer) options.transfer->update([](TransferStatus& s) { s.finished = true; });
  };
  try {
    if (!defaults) {
      for (int i = 0; i < count; ++i) fetch(options.files[static_cast<std::size_t>(i)], i);
    } else {
      fetch("config.json", 0);
      try {
        fetch("model.safetensors", 1);
      } catch (const EntryNotFound&) {
        try {
          fetch("pytorch_model.bin", 1);
        } catch (const EntryNotFound&) {
          // TRANSLATORS: %s is a repository (ORG/NAME); model.safetensors and pytorch_model.bin are file names.
          throw Error(text_format(_("'%s' has neither model.safetensors nor pytorch_model.bin: not a model attnlab can open"),
                                  repo.text().c_str()));
        }
      } catch (const Error& e) {
        // Offline, a repository cached with only pytorch_model.bin.
        if (!config.offline || !try_to_load_from_cache(repo, "pytorch_model.bin", config)) throw;
        fetch("pytorch_model.bin", 1);
      }
      try {
        fetch("preprocessor_config.json", 2);
      } catch (const Cancelled&) {
        throw;
      } catch (const Error&) {  // optional: absent in timm's repositories
        if (options.transfer && options.transfer->cancelled()) throw Cancelled();
      }
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return *snapshot;
}

std::optional<fs::path> cached_model(const RepoRef& repo, const HubConfig& config) {
  const auto config_json = try_to_load_from_cache(repo, "config.json", config);
  if (!config_json) return std::nullopt;
  if (!try_to_load_from_cache(repo, "model.safetensors", config) &&
      !try_to_load_from_cache(repo, "pytorch_model.bin", config))
    return std::nullopt;
  return config_json->parent_path();
}

fs::path resolve_model_argument(std::string_view model_argument, const HubConfig& config, Transfer* transfer,
                                const std::function<void(const TransferStatus&)>& on_progress) {
  const auto repo = parse_hf_model(model_argument);
  if (!repo) return fs::path(std::string(model_argument));
  if (auto p = cached_model(*repo, config)) return *p;
  if (config.offline)
    // TRANSLATORS: %1$s and %3$s are a repository (ORG/NAME), %2$s the cache folder; HF_HUB_OFFLINE is an environment
    // variable and 'attnlab models pull' a command: keep them.
    throw Error(text_format(_("'hf:%s' is not in the cache (%s) and HF_HUB_OFFLINE is set: pull it once online with "
                              "'attnlab models pull %s'"),
                            repo->text().c_str(), config.cache_dir.string().c_str(), repo->text().c_str()));
  PullOptions options;
  options.transfer = transfer;
  options.on_progress = on_progress;
  return pull_model(*repo, config, options);
}

std::vector<CachedRepo> scan_cache(const HubConfig& config) {
  std::vector<CachedRepo> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(config.cache_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("models--") || !entry.is_directory(ec)) continue;
    CachedRepo repo;
    repo.folder = entry.path();
    std::string id = name.substr(8);
    for (std::size_t p; (p = id.find("--")) != std::string::npos;) id.replace(p, 2, "/");
    repo.repo_id = id;
    for (const auto& b : fs::directory_iterator(entry.path() / "blobs", ec)) {
      if (b.path().extension() == ".incomplete" || !b.is_regular_file(ec)) continue;
      repo.size_on_disk += b.file_size(ec);
    }
    std::map<std::string, std::vector<std::string>> refs;
    const fs::path refs_dir = entry.path() / "refs";
    for (auto it = fs::recursive_directory_iterator(refs_dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      if (auto t = read_text(it->path()))
        refs[trim(*t)].push_back(it->path().lexically_relative(refs_dir).generic_string());
    }
    for (const auto& s : fs::directory_iterator(entry.path() / "snapshots", ec)) {
      if (!s.is_directory(ec)) continue;
      CachedRevision rev;
      rev.commit = s.path().filename().string();
      rev.snapshot = s.path();
      rev.refs = refs[rev.commit];
      std::set<fs::path> blobs;
      for (auto it = fs::recursive_directory_iterator(s.path(), ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;  // follows links
        rev.files.push_back(it->path().lexically_relative(s.path()).generic_string());
        const fs::path real = fs::weakly_canonical(it->path(), ec);
        if (blobs.insert(real).second) rev.size_on_disk += fs::file_size(real, ec);
      }
      ec.clear();
      std::sort(rev.files.begin(), rev.files.end());
      repo.revisions.push_back(std::move(rev));
    }
    ec.clear();
    std::sort(repo.revisions.begin(), repo.revisions.end(),
              [](const auto& a, const auto& b) { return a.commit < b.commit; });
    out.push_back(std::move(repo));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.repo_id < b.repo_id; });
  return out;
}

std::span<const GalleryEntry> gallery() {
  // Sizes: the F32 model.safetensors of each repository (parameters × 4 bytes), roughly. Licences
  // as the repositories' model cards state them (timm's cards: apache-2.0). What each shows is marked
  // for the catalog (N_) and translated where it is shown. Titles are the models' names.
  static constexpr std::array<GalleryEntry, 9> kGallery = {{
      {"DINO ViT-S/16", "timm/vit_small_patch16_224.dino", 87'000'000, "Apache-2.0",
       N_("self-supervised: the last layer's heads segment the animals without ever seeing a label")},
      {"DINO ViT-S/8", "timm/vit_small_patch8_224.dino", 87'000'000, "Apache-2.0",
       N_("DINO with 8-pixel patches: sharper object masks (4x the tokens of ViT-S/16)")},
      {"DINO ViT-B/16", "timm/vit_base_patch16_224.dino", 343'000'000, "Apache-2.0",
       N_("DINO at base size: 12 heads per layer, each finding a different part of the scene")},
      {"DINOv2 ViT-S/14 with registers", "timm/vit_small_patch14_reg4_dinov2.lvd142m", 88'000'000, "Apache-2.0",
       N_("four register tokens absorb the high-norm artefacts: clean maps (Darcet et al. 2024)")},
      {"DINOv2 ViT-S/14", "timm/vit_small_patch14_dinov2.lvd142m", 88'000'000, "Apache-2.0",
       N_("without registers: a few background patches with huge norms draw the attention (the artefact)")},
      {"DeiT-S", "timm/deit_small_patch16_224.fb_in1k", 88'000'000, "Apache-2.0",
       N_("trained on ImageNet-1k labels: attention for classifying, top-5 classes to predict")},
      {"ViT-B/16 (ImageNet)", "timm/vit_base_patch16_224.augreg2_in21k_ft_in1k", 346'000'000, "Apache-2.0",
       N_("the original ViT recipe (AugReg): mean attention distance grows with depth (ViT paper fig. 7)")},
      {"ResNet-18 (ImageNet)", "timm/resnet18.a1_in1k", 47'000'000, "Apache-2.0",
       N_("a CNN beside the ViT (the CNN view): receptive fields that grow a kernel at a time, Grad-CAM, CKA"), true},
      {"ResNet-50 (ImageNet)", "timm/resnet50.a1_in1k", 103'000'000, "Apache-2.0",
       N_("the ResNet of Raghu et al.'s ViT-versus-CNN comparison (2021), beside the ViT in the CNN view"), true},
  }};
  return kGallery;
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  // TRANSLATORS: a size in bytes (B); decimal units, as the Hugging Face Hub shows sizes.
  if (bytes < 1000) return text_format(_("%llu B"), static_cast<unsigned long long>(bytes));
  // TRANSLATORS: a size in kilobytes (kB = 1000 bytes).
  if (bytes < 1'000'000) return text_format(_("%.1f kB"), b / 1e3);
  // TRANSLATORS: a size in megabytes (MB = 1 000 000 bytes).
  if (bytes < 1'000'000'000) return text_format(_("%.1f MB"), b / 1e6);
  // TRANSLATORS: a size in gigabytes (GB = 10^9 bytes).
  return text_format(_("%.2f GB"), b / 1e9);
}

std::string format_status(const TransferStatus& s) {
  // TRANSLATORS: a download before its first file is known.
  std::string out = s.file.empty() ? std::string(_("starting")) : s.file;
  if (s.file_count > 1) out = "[" + std::to_string(s.file_index + 1) + "/" + std::to_string(s.file_count) + "] " + out;
  out += " " + format_bytes(s.bytes_done);
  if (s.bytes_total > 0) out += " / " + format_bytes(s.bytes_total);
  if (s.bytes_per_second > 0) out += ", " + format_bytes(static_cast<std::uint64_t>(s.bytes_per_second)) + "/s";
  if (s.seconds_left >= 0 && s.bytes_done < s.bytes_total) {
    const long left = static_cast<long>(s.seconds_left + 0.5);
    // TRANSLATORS: the time a download still needs: minutes (min) and seconds (s).
    out += ", " + (left >= 60 ? text_format(_("%ld min %ld s left"), left / 60, left % 60)
                              // TRANSLATORS: the time a download still needs, in seconds (s).
                              : text_format(_("%ld s left"), left));
  }
  // TRANSLATORS: %s is a size ("12.3 MB"): where an interrupted download went on.
  if (s.resumed_from > 0) out += " " + text_format(_("(resumed at %s)"), format_bytes(s.resumed_from).c_str());
  return out;
}

}  // namespace attnlab::hub
