#include "font_lookup.h"

#include <fontconfig/fontconfig.h>

namespace mlens {

FontFile find_font(const std::string& family) {
    FontFile out;
    if (!FcInit()) return out;
    FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>(family.c_str()));
    if (!pattern) return out;
    FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
    FcDefaultSubstitute(pattern);
    FcResult result = FcResultNoMatch;
    FcPattern* match = FcFontMatch(nullptr, pattern, &result);
    if (match) {
        FcChar8* file = nullptr;
        FcChar8* found_family = nullptr;
        int index = 0;
        if (FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch &&
            FcPatternGetString(match, FC_FAMILY, 0, &found_family) == FcResultMatch &&
            std::string(reinterpret_cast<const char*>(found_family)).starts_with(family)) {
            FcPatternGetInteger(match, FC_INDEX, 0, &index);
            out.path = reinterpret_cast<const char*>(file);
            out.index = index;
        }
        FcPatternDestroy(match);
    }
    FcPatternDestroy(pattern);
    return out;
}

void release_font_lookup() { FcFini(); }

}  // namespace mlens
