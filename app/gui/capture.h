// Capture: how a panel gets part of a rendered frame written as a PNG (plot export). The panel
// queues a request with a rectangle in ImGui's screen coordinates during a frame; the window loop
// reads those pixels back after rendering that frame, encodes the PNG (stb_image_write) and writes
// it through the core's SafeFileWriter with the request's guard.
//
// Contract:
//  - Main thread only. One request at a time: a new request replaces one not yet served.
//  - Headless drivers never serve requests; they stay queued until taken.
//  - capture_pixels converts a rectangle to framebuffer pixels (OpenGL convention: y counts from
//    the bottom), scaled by framebuffer / display size and clamped to the framebuffer; w or h is
//    0 when nothing of it is inside.
#pragma once

#include <optional>
#include <string>

#include <imgui.h>

#include "mlens/io/safe_file_writer.h"

namespace mlens {

struct CaptureRequest {
    std::string path;
    ImVec2 min, max;
    OutputGuard guard;  // what the PNG may not replace (output_inputs.h)
};

struct PixelRect {
    int x = 0, y = 0, w = 0, h = 0;
    bool operator==(const PixelRect&) const = default;
};

void request_capture(CaptureRequest request);
std::optional<CaptureRequest> take_capture_request();
// What happened to the last request ("wrote …" or the failure), for the panel to show.
void set_capture_message(std::string message);
const std::string& capture_message();

PixelRect capture_pixels(ImVec2 min, ImVec2 max, ImVec2 display, int fb_w, int fb_h);

}  // namespace mlens
