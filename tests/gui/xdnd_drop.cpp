#include "xdnd_drop.hpp"

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <poll.h>

#include <algorithm>
#include <cstdio>

namespace attnlab::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for the next event on `d` until `end`; false on time-out.
bool next_event(Display* d, XEvent& ev, Clock::time_point end) {
  while (XPending(d) == 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{ConnectionNumber(d), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
  }
  XNextEvent(d, &ev);
  return true;
}

// The XDND client messages all carry five longs, the first being the source window.
void send_message(Display* d, Window target, Atom type, Window source, long l1, long l2, long l3, long l4) {
  XEvent ev{};
  ev.xclient.type = ClientMessage;
  ev.xclient.display = d;
  ev.xclient.window = target;
  ev.xclient.message_type = type;
  ev.xclient.format = 32;
  ev.xclient.data.l[0] = static_cast<long>(source);
  ev.xclient.data.l[1] = l1;
  ev.xclient.data.l[2] = l2;
  ev.xclient.data.l[3] = l3;
  ev.xclient.data.l[4] = l4;
  XSendEvent(d, target, False, NoEventMask, &ev);
  XFlush(d);
}

// An Xlib connection and a hidden source window, released on every way out.
struct Session {
  Display* d = nullptr;
  Window source = 0;
  ~Session() {
    if (source) XDestroyWindow(d, source);
    if (d) XCloseDisplay(d);
  }
};

}  // namespace

std::string file_uri_line(const std::filesystem::path& file) {
  const std::string path = std::filesystem::absolute(file).string();
  std::string uri = "file://";
  for (const unsigned char c : path) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      uri += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri + "\r\n";
}

XdndResult xdnd_drop(const std::string& display, unsigned long window, const std::filesystem::path& file, int x, int y,
                     std::chrono::milliseconds timeout) {
  XdndResult r;
  Session s;
  s.d = XOpenDisplay(display.c_str());
  if (!s.d) {
    r.error = "cannot open display " + display;
    return r;
  }
  Display* d = s.d;
  const Window root = DefaultRootWindow(d), target = static_cast<Window>(window);
  const Atom aware = XInternAtom(d, "XdndAware", False), selection = XInternAtom(d, "XdndSelection", False),
             enter = XInternAtom(d, "XdndEnter", False), position = XInternAtom(d, "XdndPosition", False),
             status = XInternAtom(d, "XdndStatus", False), drop = XInternAtom(d, "XdndDrop", False),
             finished = XInternAtom(d, "XdndFinished", False), leave = XInternAtom(d, "XdndLeave", False),
             copy = XInternAtom(d, "XdndActionCopy", False), uri_list = XInternAtom(d, "text/uri-list", False);

  // The target says which XDND versions it speaks in its XdndAware property.
  Atom type = None;
  int format = 0;
  unsigned long count = 0, after = 0;
  unsigned char* data = nullptr;
  if (XGetWindowProperty(d, target, aware, 0, 1, False, AnyPropertyType, &type, &format, &count, &after, &data) !=
          Success ||
      count == 0) {
    if (data) XFree(data);
    r.error = "the window is not XdndAware";
    return r;
  }
  const long version = std::min(5L, static_cast<long>(*reinterpret_cast<unsigned long*>(data)));
  XFree(data);

  // The source: an unmapped window that owns the selection and receives the replies (client
  // messages sent to a window reach its owner whatever its event mask).
  s.source = XCreateSimpleWindow(d, root, 0, 0, 1, 1, 0, 0, 0);
  XSetSelectionOwner(d, selection, s.source, CurrentTime);
  if (XGetSelectionOwner(d, selection) != s.source) {
    r.error = "cannot own the XdndSelection";
    return r;
  }
  int rx = 0, ry = 0;
  Window child = 0;
  XTranslateCoordinates(d, target, root, x, y, &rx, &ry, &child);

  // Enter with up to three types in the message itself (bit 0 of l[1] clear), then one position.
  send_message(d, target, enter, s.source, version << 24, static_cast<long>(uri_list), None, None);
  send_message(d, target, position, s.source, 0, (static_cast<long>(rx) << 16) | (ry & 0xffff), CurrentTime,
               static_cast<long>(copy));

  const auto wait_end = [&] { return Clock::now() + timeout; };
  XEvent ev{};
  for (auto end = wait_end(); !r.accepted;) {
    if (!next_event(d, ev, end)) {
      r.error = "no XdndStatus within the time-out";
      send_message(d, target, leave, s.source, 0, 0, 0, 0);
      return r;
    }
    if (ev.type == ClientMessage && ev.xclient.message_type == status) {
      if ((ev.xclient.data.l[1] & 1) == 0) {
        r.error = "the target refused the drop (XdndStatus without accept)";
        send_message(d, target, leave, s.source, 0, 0, 0, 0);
        return r;
      }
      r.accepted = true;
    }
  }

  send_message(d, target, drop, s.source, 0, CurrentTime, 0, 0);
  const std::string line = file_uri_line(file);
  for (auto end = wait_end(); !r.finished;) {
    if (!next_event(d, ev, end)) {
      r.error = r.converted ? "no XdndFinished within the time-out" : "the target never asked for the data";
      return r;
    }
    if (ev.type == SelectionRequest && ev.xselectionrequest.selection == selection) {
      // Answer with the data when the type is ours, with property None ("refused") when not.
      const XSelectionRequestEvent& q = ev.xselectionrequest;
      XEvent reply{};
      reply.xselection.type = SelectionNotify;
      reply.xselection.display = d;
      reply.xselection.requestor = q.requestor;
      reply.xselection.selection = q.selection;
      reply.xselection.target = q.target;
      reply.xselection.time = q.time;
      reply.xselection.property = None;
      if (q.target == uri_list && q.property != None) {
        XChangeProperty(d, q.requestor, q.property, uri_list, 8, PropModeReplace,
                        reinterpret_cast<const unsigned char*>(line.data()), static_cast<int>(line.size()));
        reply.xselection.property = q.property;
        r.converted = true;
      }
      XSendEvent(d, q.requestor, False, NoEventMask, &reply);
      XFlush(d);
    } else if (ev.type == ClientMessage && ev.xclient.message_type == finished) {
      r.finished = true;
      // XDND 5 says bit 0 of l[1] is "accepted"; GLFW 3.3 puts the number of bytes it read
      // there, so any non-zero value means the data was used.
      r.success = r.converted && ev.xclient.data.l[1] != 0;
      if (!r.success)
        r.error = r.converted ? "the target did not use the data" : "finished without asking for the data";
    }
  }
  return r;
}

}  // namespace attnlab::testing
