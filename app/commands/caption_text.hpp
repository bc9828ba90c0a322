#pragma once
// A lesson step's caption (SPEC §15): a small Markdown subset, parsed once for the window's lower
// third and the slides (app/gui/output/caption_strip.hpp draws it). What is read:
//   *emphasis* or _emphasis_, **strong**, `math` (inline, drawn as text in its own colour),
//   lines starting "- " or "* " as list items, a blank line between paragraphs,
//   a backslash before a marker character for the character itself.
// Anything else is text as written; a marker left unclosed is text too.
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::app {

enum class CaptionStyle { Plain, Emphasis, Strong, Math };

struct CaptionSpan {
  std::string text;
  CaptionStyle style = CaptionStyle::Plain;
  bool operator==(const CaptionSpan&) const = default;
};

/// A paragraph, or one item of a list.
struct CaptionBlock {
  bool item = false;  ///< a list item (drawn after a bullet)
  std::vector<CaptionSpan> spans;
  bool operator==(const CaptionBlock&) const = default;
};

/// The blocks of `markdown`, in order; consecutive lines of a paragraph joined by a space.
std::vector<CaptionBlock> parse_caption(std::string_view markdown);

/// The caption's text without its markers, blocks on their own lines ("• " before an item).
std::string caption_plain_text(const std::vector<CaptionBlock>& blocks);

}  // namespace attnlab::app
