#include "capture.h"

#include <algorithm>
#include <cmath>

namespace mlens {

namespace {

std::optional<CaptureRequest> g_request;
std::string g_message;

}  // namespace

void request_capture(CaptureRequest request) { g_request = std::move(request); }

std::optional<CaptureRequest> take_capture_request() {
    std::optional<CaptureRequest> r = std::move(g_request);
    g_request.reset();
    return r;
}

void set_capture_message(std::string message) { g_message = std::move(message); }
const std::string& capture_message() { return g_message; }

PixelRect capture_pixels(ImVec2 min, ImVec2 max, ImVec2 display, int fb_w, int fb_h) {
    if (display.x <= 0 || display.y <= 0 || fb_w <= 0 || fb_h <= 0) return {};
    float sx = static_cast<float>(fb_w) / display.x, sy = static_cast<float>(fb_h) / display.y;
    int x0 = std::clamp(static_cast<int>(std::floor(min.x * sx)), 0, fb_w);
    int x1 = std::clamp(static_cast<int>(std::ceil(max.x * sx)), 0, fb_w);
    int top = std::clamp(static_cast<int>(std::floor(min.y * sy)), 0, fb_h);
    int bottom = std::clamp(static_cast<int>(std::ceil(max.y * sy)), 0, fb_h);
    if (x1 <= x0 || bottom <= top) return {};
    return PixelRect{x0, fb_h - bottom, x1 - x0, bottom - top};
}

}  // namespace mlens
