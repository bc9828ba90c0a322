#pragma once
// Drops a file on a window as a file manager does, through the XDND protocol (version 5):
// xdotool can move the mouse and press keys, but it cannot drag a file.
#include <chrono>
#include <filesystem>
#include <string>

namespace attnlab::testing {

/// How a drop went, step by step (for a test's failure message).
struct XdndResult {
  bool accepted = false;   ///< the target answered XdndStatus with "accept"
  bool converted = false;  ///< the target asked for the text/uri-list data
  bool finished = false;   ///< the target sent XdndFinished
  bool success = false;    ///< ... and said it used the data
  std::string error;       ///< what went wrong, empty when all went well
  explicit operator bool() const { return success; }
};

/// Drops `file` (any path: it need not exist, nothing reads it here) on X window `window` of
/// `display` at (x, y) in window coordinates: owns the XdndSelection, sends XdndEnter
/// (text/uri-list), XdndPosition, waits for XdndStatus, sends XdndDrop, answers the target's
/// SelectionRequest with "file:///path\r\n" and waits for XdndFinished. Each wait gives up
/// after `timeout`, so a target that never answers cannot hang the test.
XdndResult xdnd_drop(const std::string& display, unsigned long window, const std::filesystem::path& file, int x, int y,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// The text/uri-list line of a path: "file://" + the absolute path with every byte outside
/// RFC 3986's unreserved set and '/' written as %XX, then CR LF.
std::string file_uri_line(const std::filesystem::path& file);

}  // namespace attnlab::testing
