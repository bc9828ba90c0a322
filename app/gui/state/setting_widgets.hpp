#pragma once
// One widget per setting, shared by every view that offers it: the Controls panel and the
// teaching views draw a setting from its entry in the document's field table
// (app/commands/document.cpp, FieldUi: label, help, range, format), so range, label and rounding
// cannot differ between copies, and the command line's flag takes the same range.
#include "app/gui/state/app_state.hpp"

#include <string>
#include <string_view>

namespace attnlab::app {

/// Where and how a view draws a setting's widget.
struct WidgetPlace {
  /// The widget's rectangle is recorded (app/gui/state/widget_log.hpp) under the setting's path
  /// ("pos.P"), or under "<scope>/<path>" ("positional/pos.P") when a teaching view names itself.
  const char* scope = nullptr;
  /// The widget's width in font heights; 0: what the line has left beside its label and help
  /// marker, at least 30 % of the line.
  float width_em = 0;
  bool same_line = false;  ///< on the line of the previous item when it fits there, else on the next
  bool radio = false;      ///< a choice as radio buttons on one line instead of a combo
  bool label = true;       ///< false: no label beside the widget (the view writes its own)
  bool help = true;        ///< the help marker when the field has help text
  /// Non-null: the widget is drawn disabled, and this says why when the pointer rests on it.
  const char* disabled_why = nullptr;
};

/// The width in pixels that setting_widget(state, path, place) takes on its line (its frame,
/// label and help marker), for a view that lays out a line of its own.
float setting_widget_width(AppState& state, std::string_view path, const WidgetPlace& place = {});

/// The name a setting's widget is recorded under: `path`, or "<scope>/<path>".
std::string setting_widget_name(std::string_view path, const WidgetPlace& place = {});

/// Draws the widget of the setting at JSON path `path` ("pos.P", "temperature") from its UI
/// hints, writes the value into `state` (clamped to the hints' range), records the widget's
/// rectangle, and returns true when the user changed the value this frame. Throws Error for a
/// path without UI hints (a programming error).
bool setting_widget(AppState& state, std::string_view path, const WidgetPlace& place = {});

}  // namespace attnlab::app
