// A step's caption, a small Markdown subset (app/commands/caption_text.hpp).
#include "app/commands/caption_text.hpp"

namespace attnlab::app {
namespace {

// Appends `text` in `style` to `spans`, joining it to the last span of the same style.
void add(std::vector<CaptionSpan>& spans, std::string_view text, CaptionStyle style) {
  if (text.empty()) return;
  if (!spans.empty() && spans.back().style == style) spans.back().text += text;
  else spans.push_back({std::string(text), style});
}

// The inline spans of one block's text.
std::vector<CaptionSpan> parse_inline(std::string_view s) {
  std::vector<CaptionSpan> spans;
  std::size_t i = 0;
  std::string plain;
  const auto flush = [&] {
    add(spans, plain, CaptionStyle::Plain);
    plain.clear();
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && std::string_view("*_`\\").find(s[i + 1]) != std::string_view::npos) {
      plain += s[i + 1];
      i += 2;
      continue;
    }
    std::string_view marker;
    CaptionStyle style = CaptionStyle::Plain;
    if (s.substr(i, 2) == "**") marker = "**", style = CaptionStyle::Strong;
    else if (c == '*' || c == '_') marker = s.substr(i, 1), style = CaptionStyle::Emphasis;
    else if (c == '`') marker = "`", style = CaptionStyle::Math;
    if (!marker.empty()) {
      const std::size_t end = s.find(marker, i + marker.size());
      if (end != std::string_view::npos && end > i + marker.size()) {
        flush();
        add(spans, s.substr(i + marker.size(), end - i - marker.size()), style);
        i = end + marker.size();
        continue;
      }
    }
    plain += c;
    ++i;
  }
  flush();
  return spans;
}

}  // namespace

std::vector<CaptionBlock> parse_caption(std::string_view markdown) {
  std::vector<CaptionBlock> blocks;
  std::string paragraph;
  const auto end_paragraph = [&] {
    if (!paragraph.empty()) blocks.push_back({false, parse_inline(paragraph)});
    paragraph.clear();
  };
  std::size_t start = 0;
  while (start <= markdown.size()) {
    std::size_t nl = markdown.find('\n', start);
    if (nl == std::string_view::npos) nl = markdown.size();
    std::string_view line = markdown.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
      end_paragraph();
    } else if (line.substr(first, 2) == "- " || line.substr(first, 2) == "* ") {
      end_paragraph();
      blocks.push_back({true, parse_inline(line.substr(first + 2))});
    } else {
      if (!paragraph.empty()) paragraph += ' ';
      paragraph += line.substr(first);
    }
    start = nl + 1;
  }
  end_paragraph();
  return blocks;
}

std::string caption_plain_text(const std::vector<CaptionBlock>& blocks) {
  std::string out;
  for (const CaptionBlock& b : blocks) {
    if (!out.empty()) out += '\n';
    if (b.item) out += "\u2022 ";
    for (const CaptionSpan& s : b.spans) out += s.text;
  }
  return out;
}

}  // namespace attnlab::app
