// xdnd_drop_source: drops files and folders on another client's X11 window the way a file
// manager does, so tests can drive a real window's drag and drop under Xvfb.
//   xdnd_drop_source --window-name NAME [--timeout S] PATH...
//
// Contract:
//  - Waits until a mapped window whose title (_NET_WM_NAME, else WM_NAME) contains NAME and which
//    announces XdndAware version 5 exists anywhere below the root window (there may be no window
//    manager, so the whole tree is searched), then drags PATH... (made absolute) to the window's
//    centre and drops them as one text/uri-list of file:// URIs, each byte outside
//    [A-Za-z0-9-._~/] percent-encoded, lines ended by CRLF.
//  - Protocol (XDND version 5): owns XdndSelection, sends XdndEnter offering text/uri-list, one
//    XdndPosition at the centre with XdndActionCopy and, once XdndStatus accepts, XdndDrop;
//    answers SelectionRequests on XdndSelection for text/uri-list and TARGETS, refuses others;
//    waits for XdndFinished. A refused position is followed by XdndLeave.
//  - Exits 0 once XdndFinished reports the drop accepted: data.l[1] non-zero. (XDND 5 makes bit 0
//    the flag, but GLFW's target sends the number of bytes of the uri-list it read there, whose
//    bit 0 is 0 for an even length; a refusal is 0 in both); 1 when the window did not appear, the
//    target refused or did not finish the drop, or S seconds (default 30) passed in all; 2 on a
//    usage error. Messages go to stderr only, so stdout may be a pipe nobody reads.
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr long kXdndVersion = 5;
constexpr auto kSearchInterval = std::chrono::milliseconds(50);

struct Atoms {
    Atom aware, enter, position, status, leave, drop, finished, selection, action_copy;
    Atom uri_list, targets, net_wm_name, utf8_string, timestamp_probe;

    explicit Atoms(Display* d)
        : aware(XInternAtom(d, "XdndAware", False)),
          enter(XInternAtom(d, "XdndEnter", False)),
          position(XInternAtom(d, "XdndPosition", False)),
          status(XInternAtom(d, "XdndStatus", False)),
          leave(XInternAtom(d, "XdndLeave", False)),
          drop(XInternAtom(d, "XdndDrop", False)),
          finished(XInternAtom(d, "XdndFinished", False)),
          selection(XInternAtom(d, "XdndSelection", False)),
          action_copy(XInternAtom(d, "XdndActionCopy", False)),
          uri_list(XInternAtom(d, "text/uri-list", False)),
          targets(XInternAtom(d, "TARGETS", False)),
          net_wm_name(XInternAtom(d, "_NET_WM_NAME", False)),
          utf8_string(XInternAtom(d, "UTF8_STRING", False)),
          timestamp_probe(XInternAtom(d, "_XDND_DROP_SOURCE_TIME", False)) {}
};

// X errors are expected while walking a tree whose windows may vanish; requests that matter are
// checked with x_failed() after a round trip.
int g_x_error = 0;

int record_x_error(Display*, XErrorEvent* event) {
    g_x_error = event->error_code;
    return 0;
}

bool x_failed(Display* d) {
    XSync(d, False);
    bool failed = g_x_error != 0;
    g_x_error = 0;
    return failed;
}

int fail(const std::string& message) {
    std::fprintf(stderr, "xdnd_drop_source: %s\n", message.c_str());
    return 1;
}

std::string percent_encoded(const std::string& path) {
    static const char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : path) {
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~' || c == '/';
        if (plain) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

std::string uri_list(const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths) {
        std::error_code ec;
        std::filesystem::path abs = std::filesystem::absolute(p, ec);
        out += "file://" + percent_encoded(ec ? p : abs.lexically_normal().string()) + "\r\n";
    }
    return out;
}

std::optional<std::string> text_property(Display* d, Window w, Atom property, Atom type) {
    Atom actual = None;
    int format = 0;
    unsigned long count = 0, after = 0;
    unsigned char* data = nullptr;
    if (XGetWindowProperty(d, w, property, 0, 1024, False, type, &actual, &format, &count, &after, &data) != Success) return std::nullopt;
    std::optional<std::string> text;
    if (data && actual == type && format == 8) text = std::string(reinterpret_cast<char*>(data), count);
    if (data) XFree(data);
    return text;
}

std::string window_title(Display* d, Window w, const Atoms& atoms) {
    if (auto name = text_property(d, w, atoms.net_wm_name, atoms.utf8_string)) return *name;
    return text_property(d, w, XA_WM_NAME, AnyPropertyType).value_or(std::string());
}

// The XDND version a window announces, or 0 when it has no XdndAware.
long xdnd_version(Display* d, Window w, const Atoms& atoms) {
    Atom actual = None;
    int format = 0;
    unsigned long count = 0, after = 0;
    unsigned char* data = nullptr;
    long version = 0;
    if (XGetWindowProperty(d, w, atoms.aware, 0, 1, False, XA_ATOM, &actual, &format, &count, &after, &data) == Success && data &&
        actual == XA_ATOM && format == 32 && count == 1)
        version = reinterpret_cast<long*>(data)[0];
    if (data) XFree(data);
    return version;
}

struct Search {
    Window found = None;
    bool title_seen = false;  // a mapped window had the title but no usable XdndAware
    std::string title;
};

void search_below(Display* d, Window parent, const std::string& name, const Atoms& atoms, Search& search) {
    Window root = None, up = None;
    Window* children = nullptr;
    unsigned count = 0;
    if (!XQueryTree(d, parent, &root, &up, &children, &count)) return;
    for (unsigned i = 0; i < count && search.found == None; ++i) {
        XWindowAttributes attributes;
        if (!XGetWindowAttributes(d, children[i], &attributes) || attributes.map_state != IsViewable) continue;
        std::string title = window_title(d, children[i], atoms);
        if (!name.empty() && title.find(name) != std::string::npos) {
            if (xdnd_version(d, children[i], atoms) >= kXdndVersion) {
                search.found = children[i];
                search.title = title;
                continue;
            }
            search.title_seen = true;
        }
        search_below(d, children[i], name, atoms, search);
    }
    if (children) XFree(children);
}

// A server timestamp, from the PropertyNotify of an empty append to our own window (the
// selection and the drop should carry a real time rather than CurrentTime).
Time server_time(Display* d, Window own, const Atoms& atoms) {
    XChangeProperty(d, own, atoms.timestamp_probe, XA_STRING, 8, PropModeAppend, nullptr, 0);
    XEvent event;
    XWindowEvent(d, own, PropertyChangeMask, &event);
    return event.xproperty.time;
}

bool send_client_message(Display* d, Window target, Atom type, const std::array<long, 5>& data) {
    XEvent event{};
    event.xclient.type = ClientMessage;
    event.xclient.display = d;
    event.xclient.window = target;
    event.xclient.message_type = type;
    event.xclient.format = 32;
    std::copy(data.begin(), data.end(), event.xclient.data.l);
    XSendEvent(d, target, False, NoEventMask, &event);
    return !x_failed(d);
}

void answer_selection_request(Display* d, const XSelectionRequestEvent& request, const Atoms& atoms, const std::string& uris) {
    XEvent reply{};
    reply.xselection.type = SelectionNotify;
    reply.xselection.display = d;
    reply.xselection.requestor = request.requestor;
    reply.xselection.selection = request.selection;
    reply.xselection.target = request.target;
    reply.xselection.time = request.time;
    reply.xselection.property = None;
    // Clients older than ICCCM 2 may leave the property out and expect the target's name.
    Atom property = request.property != None ? request.property : request.target;
    if (request.selection == atoms.selection && request.target == atoms.uri_list) {
        XChangeProperty(d, request.requestor, property, atoms.uri_list, 8, PropModeReplace,
                        reinterpret_cast<const unsigned char*>(uris.data()), static_cast<int>(uris.size()));
        reply.xselection.property = property;
    } else if (request.selection == atoms.selection && request.target == atoms.targets) {
        Atom offered[] = {atoms.targets, atoms.uri_list};
        XChangeProperty(d, request.requestor, property, XA_ATOM, 32, PropModeReplace, reinterpret_cast<const unsigned char*>(offered), 2);
        reply.xselection.property = property;
    }
    XSendEvent(d, request.requestor, False, NoEventMask, &reply);
    XFlush(d);
}

// The next event, waiting no later than `deadline`; SelectionRequests are answered on the way.
std::optional<XEvent> next_event(Display* d, Clock::time_point deadline, const Atoms& atoms, const std::string& uris) {
    for (;;) {
        while (XPending(d)) {
            XEvent event;
            XNextEvent(d, &event);
            if (event.type != SelectionRequest) return event;
            answer_selection_request(d, event.xselectionrequest, atoms, uris);
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd fd{ConnectionNumber(d), POLLIN, 0};
        poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    }
}

// Waits for a client message of `type` from `target`; nullopt when the deadline passes.
std::optional<XClientMessageEvent> await_message(Display* d, Window target, Atom type, Clock::time_point deadline, const Atoms& atoms,
                                                 const std::string& uris) {
    while (std::optional<XEvent> event = next_event(d, deadline, atoms, uris)) {
        if (event->type == ClientMessage && event->xclient.message_type == type && static_cast<Window>(event->xclient.data.l[0]) == target)
            return event->xclient;
    }
    return std::nullopt;
}

int usage() {
    std::fprintf(stderr, "usage: xdnd_drop_source --window-name NAME [--timeout SECONDS] PATH...\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string name;
    double timeout = 30.0;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--window-name" && i + 1 < argc) {
            name = argv[++i];
        } else if (arg == "--timeout" && i + 1 < argc) {
            char* end = nullptr;
            timeout = std::strtod(argv[++i], &end);
            if (*end != '\0' || !(timeout > 0.0)) return usage();
        } else if (arg.starts_with("--")) {
            return usage();
        } else {
            paths.push_back(arg);
        }
    }
    if (name.empty() || paths.empty()) return usage();
    const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));

    Display* d = XOpenDisplay(nullptr);
    if (!d) return fail("cannot open the X display '" + std::string(XDisplayName(nullptr)) + "'");
    XSetErrorHandler(record_x_error);
    const Atoms atoms(d);
    const Window root = DefaultRootWindow(d);
    const std::string uris = uri_list(paths);

    Search search;
    for (;;) {
        search = Search{};
        search_below(d, root, name, atoms, search);
        x_failed(d);
        if (search.found != None) break;
        if (Clock::now() >= deadline) {
            XCloseDisplay(d);
            return fail(search.title_seen ? "a window titled '" + name + "' appeared but does not accept XDND version 5"
                                          : "no mapped window titled '" + name + "' appeared");
        }
        std::this_thread::sleep_for(kSearchInterval);
    }
    const Window target = search.found;

    const Window own = XCreateSimpleWindow(d, root, 0, 0, 1, 1, 0, 0, 0);
    XSelectInput(d, own, PropertyChangeMask);
    const Time time = server_time(d, own, atoms);
    XSetSelectionOwner(d, atoms.selection, own, time);
    if (XGetSelectionOwner(d, atoms.selection) != own) return fail("cannot own XdndSelection");

    XWindowAttributes attributes;
    int x = 0, y = 0;
    Window child = None;
    if (!XGetWindowAttributes(d, target, &attributes) ||
        !XTranslateCoordinates(d, target, root, attributes.width / 2, attributes.height / 2, &x, &y, &child) || x < 0 || y < 0 ||
        x > 0xffff || y > 0xffff)
        return fail("the target window vanished or lies off the screen");

    const long self = static_cast<long>(own);
    const long offered = static_cast<long>(atoms.uri_list);
    const long at = (static_cast<long>(x) << 16) | y;
    if (!send_client_message(d, target, atoms.enter, {self, kXdndVersion << 24, offered, 0, 0}) ||
        !send_client_message(d, target, atoms.position, {self, 0, at, static_cast<long>(time), static_cast<long>(atoms.action_copy)}))
        return fail("cannot send to the target window");
    std::optional<XClientMessageEvent> status = await_message(d, target, atoms.status, deadline, atoms, uris);
    if (!status) return fail("no XdndStatus from the target");
    if (!(status->data.l[1] & 1)) {
        send_client_message(d, target, atoms.leave, {self, 0, 0, 0, 0});
        return fail("the target does not accept text/uri-list here");
    }

    if (!send_client_message(d, target, atoms.drop, {self, 0, static_cast<long>(time), 0, 0}))
        return fail("cannot send XdndDrop to the target window");
    std::optional<XClientMessageEvent> finished = await_message(d, target, atoms.finished, deadline, atoms, uris);
    if (!finished) return fail("no XdndFinished from the target");
    if (finished->data.l[1] == 0) return fail("the target finished without accepting the drop");

    std::fprintf(stderr, "xdnd_drop_source: dropped %zu path(s) on window 0x%lx \"%s\": accepted\n", paths.size(),
                 static_cast<unsigned long>(target), search.title.c_str());
    XDestroyWindow(d, own);
    XCloseDisplay(d);
    return 0;
}
