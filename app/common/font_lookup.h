// System font lookup through fontconfig, shared by the app's ImGui fonts and the CLI's PNG
// pictures so both draw text in the same face. Knows nothing of ImGui.
//
// Contract:
//  - find_font(family) returns the file fontconfig matches for the family name, or an empty path
//    when the best match is another family (fontconfig always answers something; a substitute
//    would draw the wrong script or metrics silently).
//  - release_font_lookup() frees fontconfig's configuration after a batch of lookups; the next
//    find_font loads it again.
#pragma once

#include <string>

namespace mlens {

struct FontFile {
    std::string path;
    int index = 0;  // face index inside a collection (.ttc)
};

FontFile find_font(const std::string& family);
void release_font_lookup();

}  // namespace mlens
